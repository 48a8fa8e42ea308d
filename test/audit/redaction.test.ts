// Audit records v2, read by each role: the caller, a contractor and the dispatch team each get the sealed
// record (which must hash to the leaf the public verification proves) and only the disclosures their role
// may see. Checked by an independent reading: RFC 8785 by the `canonicalize` package, SHA-256 and
// base64url from node:crypto, no code of the service's audit module.

import { createHash } from "node:crypto";
import canonicalize from "canonicalize";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { liveContractor, testRecord } from "../helpers/fixtures.js";
import { createHarness, type Harness, ORDER_PATH, QUOTE_PATH } from "../helpers/harness.js";

interface Shown {
  seal: string;
  kind: string;
  actor: string;
  record: { v: number; actor: string; data: Record<string, unknown> };
  disclosures: string[];
  disclosed: Record<string, unknown>;
}

const JOB = {
  trade: "plumbing",
  location: { state: "CA", zip: "94103", address: "1 Market St" },
  description: "Leak under the sink",
};

let h: Harness;
let ids: string[];
let caller: string;
let dispatcher: string;
const contractorKeys = new Map<string, string>();

beforeAll(async () => {
  h = await createHarness();
  ids = [0, 1, 2, 3].map((i) => `ctr_red${i}${Math.random().toString(36).slice(2, 8)}`);
  await h.services.store.contractors.insert(
    ids.map((id, i) => liveContractor({ id, rating: 4.9 - i * 0.3, maxActiveJobs: 3 })),
    testRecord(),
  );
  await h.services.pool.load();
  caller = await h.key("acme", "live");
  dispatcher = await h.dispatcherKey("live");
  for (const id of ids) {
    const issued = await h.services.keys.issue({
      accountName: "crew",
      mode: "live",
      actor: "operator:test",
      kind: "contractor",
      contractorId: id,
    });
    contractorKeys.set(id, issued.key);
  }
});
afterAll(() => h.close());

/** Independently: the leaf hash of a record as shown, and the digest of a disclosure. */
const leafOf = (record: unknown) =>
  createHash("sha256")
    .update(Buffer.concat([Buffer.from([0]), Buffer.from(canonicalize(record) as string, "utf8")]))
    .digest("hex");
const digestOf = (disclosure: string) => createHash("sha256").update(disclosure).digest("base64url");
const decode = (disclosure: string) =>
  JSON.parse(Buffer.from(disclosure, "base64url").toString("utf8")) as [string, string, unknown];

/** Checks a record as any reader would: it hashes to the proven leaf, and each disclosure is committed. */
async function verifies(shown: Shown): Promise<void> {
  const proof = (await h.get(`/api/attest/verify/${shown.seal}`)).json();
  expect(proof.status).toBe("verified");
  expect(leafOf(shown.record)).toBe(proof.leaf_hash);
  expect(shown.record.v).toBe(2);
  const sd = (shown.record.data._sd ?? []) as string[];
  const applied: Record<string, unknown> = { ...shown.record.data };
  delete applied._sd;
  delete applied._sd_alg;
  for (const d of shown.disclosures) {
    expect(sd).toContain(digestOf(d));
    const [salt, name, value] = decode(d);
    expect(salt.length).toBeGreaterThanOrEqual(22);
    applied[name] = value;
  }
  expect(shown.disclosed).toEqual(applied);
}

async function read(url: string, key: string): Promise<Shown[]> {
  const res = await h.get(url, { "x-api-key": key });
  expect(res.statusCode, res.body).toBe(200);
  return res.json().records as Shown[];
}

describe("audit records v2, by role", () => {
  it("shows the caller its job and handles, never a contractor id, another's price or the candidates", async () => {
    const quote = (await h.post(QUOTE_PATH, JOB, { "x-api-key": caller })).json();
    const order = (await h.post(ORDER_PATH, JOB, { "x-api-key": caller })).json();
    expect(order.status).toBe("offered");
    const records = [
      ...(await read("/api/audit?kind=quote.issued", caller)),
      ...(await read(`/api/audit?order_id=${order.order_id}`, caller)),
    ];
    expect(records.map((r) => r.kind)).toEqual(["quote.issued", "order.created", "order.matched"]);
    for (const r of records) await verifies(r);
    const text = JSON.stringify(records);
    for (const id of ids) expect(text).not.toContain(id);
    expect(text).not.toContain("candidates");
    const [quoted, , matched] = records as [Shown, Shown, Shown];
    expect(quoted.disclosed.chosen_ref).toBe(quote.contractor_ref);
    expect(quoted.disclosed.price_breakdown).toMatchObject({ pricing_basis: "contractor_rate" });
    expect(matched.disclosed.chosen_ref).toBe(order.contractor_ref);
    // The handle is the account's own: another account sees another handle for the same contractor.
    const other = await h.key("globex", "live");
    const theirs = (await h.post(QUOTE_PATH, JOB, { "x-api-key": other })).json();
    expect(theirs.contractor_ref).toMatch(/^cref_[0-9A-Za-z]{22}$/);
    expect(theirs.contractor_ref).not.toBe(quote.contractor_ref);
    const handles = async (key: string) => Promise.all(ids.map((id) => h.refOf(key, id)));
    expect(await handles(other)).toContain(theirs.contractor_ref);
    expect(await handles(caller)).not.toContain(theirs.contractor_ref);
  });

  it("shows a contractor its own offer and answer, not who else was asked or at what price", async () => {
    const order = (await h.post(ORDER_PATH, JOB, { "x-api-key": caller })).json();
    const first = (await read(`/api/dispatcher/v1/audit?order_id=${order.order_id}`, dispatcher)).find(
      (r) => r.kind === "order.matched",
    )?.disclosed.chosen as string;
    const firstKey = { "x-api-key": contractorKeys.get(first) as string };
    const offers = (await h.get("/api/contractor/v1/offers", firstKey)).json().offers as Array<{
      offer_id: string;
      order_id: string;
    }>;
    const offer = offers.find((o) => o.order_id === order.order_id);
    const decline = await h.post(
      "/api/contractor/v1/offers/decline",
      { offer_id: offer?.offer_id, reason: "Too far" },
      firstKey,
    );
    expect(decline.statusCode, decline.body).toBe(200);
    const second = (await read(`/api/dispatcher/v1/audit?order_id=${order.order_id}`, dispatcher)).find(
      (r) => r.kind === "order.offered",
    )?.disclosed.contractor_id as string;
    expect(second).not.toBe(first);

    const firstView = await read(
      `/api/contractor/v1/audit?order_id=${order.order_id}`,
      contractorKeys.get(first) as string,
    );
    expect(firstView.map((r) => r.kind)).toEqual(["order.created", "order.matched", "order.offer_declined"]);
    for (const r of firstView) await verifies(r);
    const firstText = JSON.stringify(firstView);
    expect(firstText).toContain(first);
    for (const id of ids.filter((i) => i !== first)) expect(firstText).not.toContain(id);
    expect(firstText).not.toContain("candidates");
    expect(firstText).not.toContain("cref_");
    const declined = firstView[2] as Shown;
    expect(declined.actor).toBe("contractor");
    expect(declined.disclosed.actor_id).toBe(first);

    const secondView = await read(
      `/api/contractor/v1/audit?order_id=${order.order_id}`,
      contractorKeys.get(second) as string,
    );
    expect(secondView.map((r) => r.kind)).toEqual(["order.created", "order.offered"]);
    expect(JSON.stringify(secondView)).not.toContain(first);

    // A contractor never offered the order sees none of its records.
    const stranger = ids.find((i) => i !== first && i !== second) as string;
    expect(
      await read(
        `/api/contractor/v1/audit?order_id=${order.order_id}`,
        contractorKeys.get(stranger) as string,
      ),
    ).toEqual([]);
  });

  it("shows the dispatch team everything: the candidates with their prices, ids and the caller's handles", async () => {
    const order = (await h.post(ORDER_PATH, JOB, { "x-api-key": caller })).json();
    const records = await read(`/api/dispatcher/v1/audit?order_id=${order.order_id}`, dispatcher);
    for (const r of records) await verifies(r);
    const matched = records.find((r) => r.kind === "order.matched") as Shown;
    const candidates = matched.disclosed.candidates as Array<{ contractor_id: string; price_cents: number }>;
    expect(candidates.length).toBeGreaterThan(1);
    expect(candidates.every((c) => ids.includes(c.contractor_id) && c.price_cents > 0)).toBe(true);
    expect(matched.disclosed.chosen).toBe(candidates[0]?.contractor_id);
    expect(matched.disclosed.chosen_ref).toBe(order.contractor_ref);
    // The caller's view of the same record is the same sealed record with fewer disclosures.
    const mine = (await read(`/api/audit?order_id=${order.order_id}`, caller)).find(
      (r) => r.kind === "order.matched",
    ) as Shown;
    expect(mine.record).toEqual(matched.record);
    expect(mine.disclosures.length).toBeLessThan(matched.disclosures.length);
  });

  it("refuses a disclosure that the record does not commit to", async () => {
    const order = (await h.post(ORDER_PATH, JOB, { "x-api-key": caller })).json();
    const [, matched] = await read(`/api/audit?order_id=${order.order_id}`, caller);
    const forged = Buffer.from(JSON.stringify(["c2FsdHNhbHRzYWx0c2FsdA", "chosen", ids[3]])).toString(
      "base64url",
    );
    expect((matched as Shown).record.data._sd).not.toContain(digestOf(forged));
  });
});
