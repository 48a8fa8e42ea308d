// Any Unicode text the service accepts (every code point but the refused C0 controls, astral ones too)
// is kept exactly: the order read back and its sealed order.created audit record both hold what was sent,
// on SQLite and, in the postgres project, on PostgreSQL.

import fc from "fast-check";
import { beforeAll, describe, expect, it } from "vitest";
import { createHarness, type Harness, ORDER_PATH } from "../helpers/harness.js";

let h: Harness;
let key: string;

beforeAll(async () => {
  h = await createHarness();
  key = await h.key("unicode", "test", { ratePerMinute: 100_000, burst: 100_000 });
});

const fromCodePoint = (c: number) => String.fromCodePoint(c);
const notSurrogate = (c: number) => c < 0xd800 || c > 0xdfff;

/** One code point of accepted text: tab, LF, CR, or anything from U+0020 up, BMP or astral. */
const textChar = fc.oneof(
  fc.constantFrom("\t", "\n", "\r"),
  fc.integer({ min: 0x20, max: 0x7f }).map(fromCodePoint),
  fc.integer({ min: 0x80, max: 0xffff }).filter(notSurrogate).map(fromCodePoint),
  fc.integer({ min: 0x10000, max: 0x10ffff }).map(fromCodePoint),
);
const text = (maxLength: number) => fc.array(textChar, { maxLength }).map((chars) => chars.join(""));

const orderBody = fc.record({
  description: text(40).filter((s) => s.trim().length > 0),
  address: text(40),
  name: text(40),
  city: text(40),
  reference_id: text(40),
});

describe("Unicode text round trip", () => {
  it("reads back every accepted string exactly as sent, as its audit record holds it", async () => {
    const auth = { "x-api-key": key };
    await fc.assert(
      fc.asyncProperty(orderBody, async (s) => {
        const body = {
          trade: "plumbing",
          location: { state: "TX", zip: "78701", city: s.city, address: s.address, name: s.name },
          description: s.description,
          reference_id: s.reference_id,
        };
        const created = await h.post(ORDER_PATH, body, auth);
        expect(created.statusCode, created.body).toBe(200);
        const orderId = created.json().order_id as string;

        const view = (await h.get(`/api/dispatch/v1/orders/${orderId}`, auth)).json();
        expect({
          description: view.description,
          address: view.location.address,
          name: view.location.name,
          city: view.location.city,
          reference_id: view.reference_id,
        }).toEqual(s);

        const audit = await h.get(`/api/audit?order_id=${orderId}&kind=order.created`, auth);
        expect(audit.statusCode, audit.body).toBe(200);
        const [record] = audit.json().records;
        // The address, name and reference are the caller's disclosures: its own view reads them back.
        expect(record.disclosed.input).toEqual(body);
      }),
      { numRuns: 40 },
    );
  });
});
