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

/** The caller's contact details and bookkeeping, each a value found nowhere else in a record. */
const CONTACT = {
  address: "77 Brannan St, Suite 4B",
  name: "Harbor Deli (ask for Ines, 415-555-0142)",
  callback_url: "https://hooks.example.com/acme-ops/7f3e91",
  reference_id: "WO-ACME-55821",
  idempotency_key: "acme-retry-3c6d0a",
};
const CONTACT_JOB = {
  trade: "plumbing",
  location: {
    state: "CA",
    zip: "94103",
    city: "San Francisco",
    address: CONTACT.address,
    name: CONTACT.name,
  },
  description: "Leak under the sink",
  callback_url: CONTACT.callback_url,
  reference_id: CONTACT.reference_id,
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
    // Rates differ, so that each candidate's price is a value of its own.
    ids.map((id, i) =>
      liveContractor({ id, rating: 4.9 - i * 0.3, hourlyRateCents: 12_000 + i * 1_371, maxActiveJobs: 3 }),
    ),
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

/**
 * The data a record reads as with `disclosures` applied, done independently: each object's `_sd` lists the
 * digests of the disclosures committed in it (RFC 9901, section 7.1); every disclosure must be listed once.
 */
function disclose(data: Record<string, unknown>, disclosures: string[]): Record<string, unknown> {
  const byDigest = new Map(disclosures.map((d) => [digestOf(d), decode(d)] as const));
  const used = new Set<string>();
  const walk = (value: unknown): unknown => {
    if (Array.isArray(value)) return value.map(walk);
    if (typeof value !== "object" || value === null) return value;
    const out: Record<string, unknown> = {};
    for (const [name, member] of Object.entries(value)) if (name !== "_sd") out[name] = walk(member);
    for (const digest of ((value as { _sd?: string[] })._sd ?? []) as string[]) {
      const found = byDigest.get(digest);
      if (!found) continue;
      const [salt, name, disclosed] = found;
      expect(salt.length).toBeGreaterThanOrEqual(22);
      expect(out).not.toHaveProperty(name);
      expect(used.has(digest)).toBe(false);
      used.add(digest);
      out[name] = walk(disclosed);
    }
    return out;
  };
  const { _sd_alg: _alg, ...rest } = data;
  const applied = walk(rest) as Record<string, unknown>;
  expect([...byDigest.keys()].filter((d) => !used.has(d))).toEqual([]);
  return applied;
}

/** Checks a record as any reader would: it hashes to the proven leaf, and each disclosure is committed. */
async function verifies(shown: Shown): Promise<void> {
  const proof = (await h.get(`/api/attest/verify/${shown.seal}`)).json();
  expect(proof.status).toBe("verified");
  expect(leafOf(shown.record)).toBe(proof.leaf_hash);
  expect(shown.record.v).toBe(2);
  expect(shown.disclosed).toEqual(disclose(shown.record.data, shown.disclosures));
}

/** Every number in a view: its records, what they read as, and its disclosures decoded. */
function numbersIn(view: Shown[]): Set<number> {
  const out = new Set<number>();
  const walk = (value: unknown): void => {
    if (typeof value === "number") out.add(value);
    else if (Array.isArray(value)) value.forEach(walk);
    else if (typeof value === "object" && value !== null) Object.values(value).forEach(walk);
  };
  for (const r of view) walk([r.record, r.disclosed, r.disclosures.map(decode)]);
  return out;
}

/** A view as text, its disclosures decoded: what a reader of it could learn. */
const textOf = (view: Shown[]) => JSON.stringify(view.map((r) => [r, r.disclosures.map(decode)]));

async function read(url: string, key: string): Promise<Shown[]> {
  const res = await h.get(url, { "x-api-key": key });
  expect(res.statusCode, res.body).toBe(200);
  return res.json().records as Shown[];
}

describe("audit records v2, by role", () => {
  it("shows the caller its job, contact details and handles, never a contractor id, another's price or the candidates", async () => {
    const quote = (await h.post(QUOTE_PATH, JOB, { "x-api-key": caller })).json();
    const idempotencyKey = `${CONTACT.idempotency_key}-caller`;
    const created = await h.post(ORDER_PATH, CONTACT_JOB, {
      "x-api-key": caller,
      "idempotency-key": idempotencyKey,
    });
    expect(created.statusCode, created.body).toBe(200);
    const order = created.json();
    expect(order.status).toBe("offered");
    const records = [
      ...(await read("/api/audit?kind=quote.issued", caller)),
      ...(await read(`/api/audit?order_id=${order.order_id}`, caller)),
    ];
    expect(records.map((r) => r.kind)).toEqual(["quote.issued", "order.created", "order.matched"]);
    for (const r of records) await verifies(r);
    const text = textOf(records);
    for (const id of ids) expect(text).not.toContain(id);
    expect(text).not.toContain("candidates");
    const [quoted, createdRecord, matched] = records as [Shown, Shown, Shown];
    expect(quoted.disclosed.chosen_ref).toBe(quote.contractor_ref);
    expect(quoted.disclosed.price_breakdown).toMatchObject({ pricing_basis: "contractor_rate" });
    expect(matched.disclosed.chosen_ref).toBe(order.contractor_ref);
    // The other candidates' prices (the team's view says which) are nowhere in the caller's view.
    const teamMatched = (await read(`/api/dispatcher/v1/audit?order_id=${order.order_id}`, dispatcher)).find(
      (r) => r.kind === "order.matched",
    ) as Shown;
    const candidates = teamMatched.disclosed.candidates as Array<{
      contractor_id: string;
      price_cents: number;
    }>;
    const chosen = candidates.find((c) => c.contractor_id === teamMatched.disclosed.chosen);
    const otherPrices = candidates.filter((c) => c !== chosen).map((c) => c.price_cents);
    expect(otherPrices.length).toBeGreaterThan(0);
    expect(otherPrices).not.toContain(chosen?.price_cents);
    const numbers = numbersIn(records);
    expect(numbers).toContain(chosen?.price_cents);
    for (const price of otherPrices) expect(numbers).not.toContain(price);
    // The caller reads its own contact details, as disclosures committed in the record.
    expect(createdRecord.disclosed).toMatchObject({
      idempotency_key: idempotencyKey,
      reference_id: CONTACT.reference_id,
      input: CONTACT_JOB,
    });
    expect(JSON.stringify(createdRecord.record)).not.toContain(CONTACT.callback_url);
    // The handle is the account's own: another account sees another handle for the same contractor.
    const other = await h.key("globex", "live");
    const theirs = (await h.post(QUOTE_PATH, JOB, { "x-api-key": other })).json();
    expect(theirs.contractor_ref).toMatch(/^cref-[0-9A-Za-z]{22}$/);
    expect(theirs.contractor_ref).not.toBe(quote.contractor_ref);
    const handles = async (key: string) => Promise.all(ids.map((id) => h.refOf(key, id)));
    expect(await handles(other)).toContain(theirs.contractor_ref);
    expect(await handles(caller)).not.toContain(theirs.contractor_ref);
  });

  it("shows a contractor its own offer and answer and the job, not who else was asked, at what price, or the caller's contact details", async () => {
    const idempotencyKey = `${CONTACT.idempotency_key}-contractor`;
    const order = (
      await h.post(ORDER_PATH, CONTACT_JOB, { "x-api-key": caller, "idempotency-key": idempotencyKey })
    ).json();
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
    const firstText = textOf(firstView);
    expect(firstText).toContain(first);
    for (const id of ids.filter((i) => i !== first)) expect(firstText).not.toContain(id);
    expect(firstText).not.toContain("candidates");
    expect(firstText).not.toMatch(/cref[-_]/);
    const declined = firstView[2] as Shown;
    expect(declined.actor).toBe("contractor");
    expect(declined.disclosed.actor_id).toBe(first);

    const secondView = await read(
      `/api/contractor/v1/audit?order_id=${order.order_id}`,
      contractorKeys.get(second) as string,
    );
    expect(secondView.map((r) => r.kind)).toEqual(["order.created", "order.offered"]);
    for (const r of secondView) await verifies(r);
    expect(textOf(secondView)).not.toContain(first);

    // Neither reads the caller's contact details or bookkeeping; both read the job as their offer shows it.
    for (const view of [firstView, secondView]) {
      const viewText = textOf(view);
      for (const value of [...Object.values(CONTACT), idempotencyKey]) expect(viewText).not.toContain(value);
      const job = view[0] as Shown;
      expect(job.kind).toBe("order.created");
      expect(job.disclosures).toEqual([]);
      expect(job.disclosed).toEqual({
        input: {
          trade: CONTACT_JOB.trade,
          description: CONTACT_JOB.description,
          location: { state: "CA", zip: "94103", city: "San Francisco" },
        },
      });
    }

    // A contractor never offered the order sees none of its records.
    const stranger = ids.find((i) => i !== first && i !== second) as string;
    expect(
      await read(
        `/api/contractor/v1/audit?order_id=${order.order_id}`,
        contractorKeys.get(stranger) as string,
      ),
    ).toEqual([]);
  });

  it("shows the dispatch team everything: the candidates with their prices, ids, the caller's handles and contact details", async () => {
    const order = (await h.post(ORDER_PATH, CONTACT_JOB, { "x-api-key": caller })).json();
    const records = await read(`/api/dispatcher/v1/audit?order_id=${order.order_id}`, dispatcher);
    for (const r of records) await verifies(r);
    const created = records.find((r) => r.kind === "order.created") as Shown;
    expect(created.disclosed).toEqual({
      input: CONTACT_JOB,
      idempotency_key: null,
      reference_id: CONTACT.reference_id,
    });
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
