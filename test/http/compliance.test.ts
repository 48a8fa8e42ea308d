// Compliance as a rule: a contractor whose insurance or license is expired or not verified is never
// offered work (at the order, down the cascade), quotes count it under `compliance`, and a dispatcher
// assigns one by hand only with a stated override, which the audit log keeps.

import { afterEach, describe, expect, it } from "vitest";
import { liveContractor, testRecord } from "../helpers/fixtures.js";
import { createHarness, type Harness, ORDER_PATH, QUOTE_PATH } from "../helpers/harness.js";

const OFFERS = "/api/contractor/v1/offers";
const DECLINE = "/api/contractor/v1/offers/decline";
const ASSIGN = "/api/dispatcher/v1/orders/assign";
const JOB = {
  trade: "plumbing",
  location: { state: "CA", zip: "94103", address: "1 Market St" },
  description: "Leak under the sink",
};

const open: Harness[] = [];
afterEach(async () => {
  for (const h of open.splice(0)) await h.close();
});

/**
 * Four live plumbers in CA, best rated first: two compliant, one with a license that ran out years ago
 * (the best of all: matching on score alone would pick it), one never verified.
 */
async function setup() {
  const h = await createHarness();
  open.push(h);
  const tag = Math.random().toString(36).slice(2, 8);
  const ids = {
    expired: `ctr_exp${tag}`,
    unverified: `ctr_unv${tag}`,
    good: `ctr_good${tag}`,
    second: `ctr_snd${tag}`,
  };
  await h.services.store.contractors.insert(
    [
      liveContractor({ id: ids.expired, rating: 5, licenseVerifiedUntil: "2021-03-31" }),
      liveContractor({ id: ids.unverified, rating: 4.95, insuranceVerifiedUntil: null }),
      liveContractor({ id: ids.good, rating: 4.5 }),
      liveContractor({ id: ids.second, rating: 4.0 }),
    ],
    testRecord(),
  );
  await h.services.pool.load();
  const caller = await h.key("acme", "live");
  const keys = new Map<string, string>();
  for (const id of Object.values(ids)) {
    const issued = await h.services.keys.issue({
      accountName: "crew",
      mode: "live",
      actor: "operator:test",
      kind: "contractor",
      contractorId: id,
    });
    keys.set(id, issued.key);
  }
  return { h, ids, caller, keys, dispatcher: await h.dispatcherKey("live") };
}

async function holder(h: Harness, orderId: string): Promise<string | null> {
  return (await h.services.store.orders.byIds([orderId]))[0]?.contractor_id ?? null;
}

async function dispatcherAudit(h: Harness, dispatcher: string, query: string) {
  const res = await h.get(`/api/dispatcher/v1/audit?${query}`, { "x-api-key": dispatcher });
  expect(res.statusCode, res.body).toBe(200);
  return res.json().records as Array<{ kind: string; disclosed: Record<string, unknown> }>;
}

describe("compliance", () => {
  it("never offers work to an expired or unverified contractor, at the order nor down the cascade", async () => {
    const { h, ids, caller, keys, dispatcher } = await setup();
    const res = await h.post(ORDER_PATH, JOB, { "x-api-key": caller });
    expect(res.statusCode, res.body).toBe(200);
    const orderId = res.json().order_id as string;
    const [order] = await h.services.store.orders.byIds([orderId]);
    expect(order?.ranking ?? []).toEqual([ids.good, ids.second]);
    expect(await holder(h, orderId)).toBe(ids.good);

    // The cascade after declines moves to the next compliant contractor, then to a dispatcher.
    for (const current of [ids.good, ids.second]) {
      expect(await holder(h, orderId)).toBe(current);
      const key = keys.get(current) as string;
      const offers = (await h.get(OFFERS, { "x-api-key": key })).json().offers as Array<{
        offer_id: string;
        order_id: string;
      }>;
      const offer = offers.find((o) => o.order_id === orderId);
      const declined = await h.post(
        DECLINE,
        { offer_id: offer?.offer_id, reason: "booked" },
        { "x-api-key": key },
      );
      expect(declined.statusCode, declined.body).toBe(200);
    }
    const after = await h.services.store.orders.byIds([orderId]);
    expect(after[0]?.status).toBe("needs_dispatcher");
    for (const id of [ids.expired, ids.unverified]) {
      const offers = (await h.get(OFFERS, { "x-api-key": keys.get(id) as string })).json().offers;
      expect(offers).toEqual([]);
    }
    const matched = await dispatcherAudit(h, dispatcher, `order_id=${orderId}&kind=order.matched`);
    expect(matched[0]?.disclosed).toMatchObject({ rejected: { compliance: 2 }, eligible: 2 });
  });

  it("judges compliance on the job's own day: a booked window after the insurance lapses is not offered to it", async () => {
    const h = await createHarness();
    open.push(h);
    const tag = Math.random().toString(36).slice(2, 8);
    const day = (days: number) => new Date(Date.now() + days * 86_400_000).toISOString().slice(0, 10);
    // The best rated, verified until 30 days from now; a compliant one behind it.
    const lapsing = `ctr_lap${tag}`;
    const steady = `ctr_std${tag}`;
    await h.services.store.contractors.insert(
      [
        liveContractor({ id: lapsing, rating: 5, insuranceVerifiedUntil: day(30) }),
        liveContractor({ id: steady, rating: 4 }),
      ],
      testRecord(),
    );
    await h.services.pool.load();
    const caller = await h.key("acme", "live");
    const windowOn = (date: string) => ({ start: `${date}T16:00:00Z`, end: `${date}T20:00:00Z` });
    const book = async (date: string) => {
      const res = await h.post(
        ORDER_PATH,
        { ...JOB, urgency: "scheduled", service_window: windowOn(date) },
        { "x-api-key": caller },
      );
      expect(res.statusCode, res.body).toBe(200);
      return holder(h, res.json().order_id as string);
    };
    // Within its verification: the lapsing contractor is the best, and gets it.
    expect(await book(day(10))).toBe(lapsing);
    // 60 days out, after its insurance lapses: the next one does.
    expect(await book(day(60))).toBe(steady);
    // As-soon-as-possible work is judged on its arrive_by (hours away): still the lapsing one's.
    const asap = await h.post(ORDER_PATH, { ...JOB, urgency: "urgent" }, { "x-api-key": caller });
    expect(asap.statusCode, asap.body).toBe(200);
    expect(await holder(h, asap.json().order_id as string)).toBe(lapsing);
  });

  it("counts the contractors it passed over under compliance in the quote's record", async () => {
    const { h, ids, caller, dispatcher } = await setup();
    const res = await h.post(QUOTE_PATH, JOB, { "x-api-key": caller });
    expect(res.statusCode, res.body).toBe(200);
    const [record] = await dispatcherAudit(h, dispatcher, "kind=quote.issued");
    expect(record?.disclosed).toMatchObject({ considered: 4, eligible: 2, rejected: { compliance: 2 } });
    const chosen = JSON.stringify(record?.disclosed);
    expect(chosen).not.toContain(ids.expired);
    expect(chosen).not.toContain(ids.unverified);
  });

  it("answers 409 contractor_not_compliant to a dispatcher's assignment, unless it states an override, which is audited", async () => {
    const { h, ids, caller, dispatcher } = await setup();
    const orderId = (await h.post(ORDER_PATH, JOB, { "x-api-key": caller })).json().order_id as string;
    const refused = await h.post(
      ASSIGN,
      { order_id: orderId, contractor_id: ids.expired, reason: "customer asked for them" },
      { "x-api-key": dispatcher },
    );
    expect(refused.statusCode, refused.body).toBe(409);
    expect(refused.json()).toMatchObject({
      code: "contractor_not_compliant",
      type: "/problems/contractor_not_compliant",
      compliance: [{ document: "license", state: "expired", verified_until: "2021-03-31" }],
    });
    expect(refused.json().detail).toContain(
      "license expired (verified until 2021-03-31, expired since 2021-04-01)",
    );
    expect(await holder(h, orderId)).toBe(ids.good); // nothing changed

    const unverified = await h.post(
      ASSIGN,
      { order_id: orderId, contractor_id: ids.unverified, reason: "customer asked for them" },
      { "x-api-key": dispatcher },
    );
    expect(unverified.statusCode).toBe(409);
    expect(unverified.json().compliance).toEqual([
      { document: "insurance", state: "not_verified", verified_until: null },
    ]);

    const overridden = await h.post(
      ASSIGN,
      {
        order_id: orderId,
        contractor_id: ids.expired,
        reason: "customer asked for them",
        compliance_override_reason: "renewed license seen on site, file update pending",
      },
      { "x-api-key": dispatcher },
    );
    expect(overridden.statusCode, overridden.body).toBe(200);
    expect(await holder(h, orderId)).toBe(ids.expired);
    const assigned = await dispatcherAudit(h, dispatcher, `order_id=${orderId}&kind=order.assigned`);
    expect(assigned.map((r) => r.disclosed)).toEqual([
      expect.objectContaining({
        to_contractor: ids.expired,
        reason: "customer asked for them",
        compliance_override: {
          reason: "renewed license seen on site, file update pending",
          issues: [{ document: "license", state: "expired", verified_until: "2021-03-31" }],
        },
      }),
    ]);
  });
});
