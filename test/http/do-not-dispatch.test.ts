// Do-not-dispatch (issue 33) end to end: an account excludes a contractor, named by its handle, from its
// work (every trade or some), each change sealed; its quotes and orders are never matched to it (the
// obvious best), the cascade passes it by, a dispatcher's assignment is refused with 409
// contractor_excluded, and the optimised day never routes the account's job to it. Another account and
// another trade are unaffected; the dispatch team lists every entry and sees them on the contractor.

import { afterEach, describe, expect, it } from "vitest";
import { zonedInstant } from "../../src/domain/time/local-time.js";
import { liveContractor, testRecord } from "../helpers/fixtures.js";
import { createHarness, type Harness, ORDER_PATH, QUOTE_PATH } from "../helpers/harness.js";
import { expectProblem } from "../helpers/security-suite.js";

const LIST = "/api/dispatch/v1/do-not-dispatch";
const REMOVE = "/api/dispatch/v1/do-not-dispatch/remove";
const TEAM_LIST = "/api/dispatcher/v1/do-not-dispatch";
const ASSIGN = "/api/dispatcher/v1/orders/assign";
const OFFERS = "/api/contractor/v1/offers";
const DECLINE = "/api/contractor/v1/offers/decline";
const OPTIMIZE = "/api/dispatcher/v1/schedule/optimize";
const JOB = {
  trade: "plumbing",
  location: { state: "CA", zip: "94103", address: "1 Market St" },
  description: "Leak under the sink",
};
const AWAY = { lat: 37.55, lon: -122.3, homeZip: "94401" }; // about 16 miles south, within their reach

const open: Harness[] = [];
afterEach(async () => {
  for (const h of open.splice(0)) await h.close();
});

/** Three live plumbers (and HVAC technicians) in San Francisco, best rated first: `best` at the jobs'
 * ZIP, the others 16 miles off; two accounts, the dispatch team, and a key for each contractor. */
async function setup() {
  const h = await createHarness();
  open.push(h);
  const tag = Math.random().toString(36).slice(2, 8);
  const ids = { best: `ctr_best${tag}`, next: `ctr_next${tag}`, last: `ctr_last${tag}` };
  await h.services.store.contractors.insert(
    [
      liveContractor({ id: ids.best, rating: 5 }),
      liveContractor({ id: ids.next, rating: 4.5, ...AWAY }),
      liveContractor({ id: ids.last, rating: 4, ...AWAY }),
    ],
    testRecord(),
  );
  await h.services.pool.load();
  const acme = await h.key("acme", "live");
  const globex = await h.key("globex", "live");
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
  const accountOf = async (key: string) => (await h.services.keys.authenticate(key)).accountId;
  /** The account's handle of a contractor, as its orders and quotes show it. */
  const refOf = async (key: string, id: string) => h.services.refs.of(await accountOf(key), id);
  return { h, ids, acme, globex, keys, refOf, dispatcher: await h.dispatcherKey("live") };
}

const as = (key: string) => ({ "x-api-key": key });

async function holder(h: Harness, orderId: string): Promise<string | null> {
  return (await h.services.store.orders.byIds([orderId]))[0]?.contractor_id ?? null;
}

async function order(h: Harness, key: string, job: object = JOB): Promise<string> {
  const res = await h.post(ORDER_PATH, job, as(key));
  expect(res.statusCode, res.body).toBe(200);
  return res.json().order_id as string;
}

async function exclude(h: Harness, key: string, body: object) {
  const res = await h.post(LIST, { reason: "left the site unsafe twice", ...body }, as(key));
  expect(res.statusCode, res.body).toBe(200);
  return res.json();
}

async function audit(h: Harness, path: string, key: string) {
  const res = await h.get(path, as(key));
  expect(res.statusCode, res.body).toBe(200);
  return res.json().records as Array<{ kind: string; disclosed: Record<string, unknown> }>;
}

describe("do-not-dispatch", () => {
  it("adds, lists and removes an account's entries, named by its handle, each change sealed", async () => {
    const { h, ids, acme, globex, dispatcher } = await setup();
    // The account learns the handle from its own order.
    const first = await h.post(ORDER_PATH, JOB, as(acme));
    const ref = first.json().contractor_ref as string;
    expect(await holder(h, first.json().order_id)).toBe(ids.best);

    const added = await exclude(h, acme, { contractor_ref: ref, trades: ["Plumbing"] });
    expect(added).toMatchObject({
      entry_id: expect.stringMatching(/^dnd_/),
      contractor_ref: ref,
      trades: ["plumbing"],
      reason: "left the site unsafe twice",
      created_by: "account",
      record: { kind: "account.do_not_dispatch_added" },
    });
    expect(JSON.stringify(added)).not.toContain(ids.best);
    expect((await h.get(LIST, as(acme))).json().entries).toEqual([added]);
    expect((await h.get(LIST, as(globex))).json().entries).toEqual([]);

    // Refusals: an entry that covers it already, a handle naming nobody, a trade not in the list, no reason.
    const again = await h.post(
      LIST,
      { contractor_ref: ref, trades: ["plumbing"], reason: "again" },
      as(acme),
    );
    const dup = expectProblem(again, 422, "validation_failed");
    expect(dup.errors).toEqual([
      expect.objectContaining({ field: "contractor_ref", code: "already_excluded" }),
    ]);
    const nobody = await h.post(LIST, { contractor_ref: `cref-${"0".repeat(22)}`, reason: "who?" }, as(acme));
    expectProblem(nobody, 404, "not_found");
    // Another account's handle of the same contractor is not this account's.
    const foreign = await h.post(LIST, { contractor_ref: ref, reason: "not mine" }, as(globex));
    expectProblem(foreign, 404, "not_found");
    const trade = await h.post(LIST, { contractor_ref: ref, trades: ["carpentry"], reason: "x" }, as(acme));
    expect(expectProblem(trade, 422, "validation_failed").errors[0].field).toMatch(/^trades/);
    const reasonless = await h.post(LIST, { contractor_ref: ref, reason: "  " }, as(acme));
    expect(expectProblem(reasonless, 422, "validation_failed").errors[0].field).toBe("reason");

    // The account reads its handle in the record, the dispatch team the contractor's id.
    const mine = await audit(h, "/api/audit?kind=account.do_not_dispatch_added", acme);
    expect(mine.map((r) => r.disclosed)).toEqual([
      expect.objectContaining({
        contractor_ref: ref,
        reason: "left the site unsafe twice",
        trades: ["plumbing"],
      }),
    ]);
    expect(JSON.stringify(mine)).not.toContain(ids.best);
    const team = await audit(h, "/api/dispatcher/v1/audit?kind=account.do_not_dispatch_added", dispatcher);
    expect(team[0]?.disclosed).toMatchObject({ contractor_id: ids.best, entry_id: added.entry_id });

    // The dispatch team's list, filtered, and the contractor's detail.
    const listed = (await h.get(TEAM_LIST, as(dispatcher))).json().entries;
    expect(listed).toEqual([expect.objectContaining({ entry_id: added.entry_id, contractor_id: ids.best })]);
    expect((await h.get(`${TEAM_LIST}?contractor_id=${ids.next}`, as(dispatcher))).json().entries).toEqual(
      [],
    );
    const detail = (await h.get(`/api/dispatcher/v1/contractors/${ids.best}`, as(dispatcher))).json();
    expect(detail.do_not_dispatch).toEqual([
      expect.objectContaining({ entry_id: added.entry_id, trades: ["plumbing"] }),
    ]);

    // Only the account removes its entry, once, with a reason that is sealed.
    const body = { entry_id: added.entry_id, reason: "new crew lead" };
    expectProblem(await h.post(REMOVE, body, as(globex)), 404, "not_found");
    const removed = await h.post(REMOVE, body, as(acme));
    expect(removed.statusCode, removed.body).toBe(200);
    expect(removed.json()).toMatchObject({
      removed: true,
      record: { kind: "account.do_not_dispatch_removed" },
    });
    expect((await h.get(LIST, as(acme))).json().entries).toEqual([]);
    expectProblem(await h.post(REMOVE, body, as(acme)), 404, "not_found");
    // Removed, the contractor is the account's best match again.
    expect(await holder(h, await order(h, acme))).toBe(ids.best);
  });

  it("never matches the account's work to the excluded contractor, the obvious best; other accounts and trades are unaffected", async () => {
    const { h, ids, acme, globex, dispatcher } = await setup();
    const quoted = await h.post(QUOTE_PATH, JOB, as(acme));
    const best = quoted.json().contractor_ref as string;
    await exclude(h, acme, { contractor_ref: best, trades: ["plumbing"] });

    const quote = await h.post(QUOTE_PATH, JOB, as(acme));
    expect(quote.json().contractor_ref).not.toBe(best);
    expect(quote.json().contractor_ref).not.toBeNull();
    const orderId = await order(h, acme);
    expect(await holder(h, orderId)).toBe(ids.next);
    const [stored] = await h.services.store.orders.byIds([orderId]);
    expect(stored?.ranking).toEqual([ids.next, ids.last]);
    const matched = await audit(
      h,
      `/api/dispatcher/v1/audit?order_id=${orderId}&kind=order.matched`,
      dispatcher,
    );
    expect(matched[0]?.disclosed).toMatchObject({ rejected: { do_not_dispatch: 1 }, eligible: 2 });

    // Work of another trade, and another account's plumbing, still go to the best.
    expect(await holder(h, await order(h, acme, { ...JOB, trade: "hvac" }))).toBe(ids.best);
    expect(await holder(h, await order(h, globex))).toBe(ids.best);
  });

  it("passes the excluded contractor by down the cascade", async () => {
    const { h, ids, acme, keys, refOf } = await setup();
    const orderId = await order(h, acme);
    expect(await holder(h, orderId)).toBe(ids.best);
    // Excluded after the order was matched: its ranking still names it, the cascade skips it.
    await exclude(h, acme, { contractor_ref: await refOf(acme, ids.next) });
    const key = keys.get(ids.best) as string;
    const offers = (await h.get(OFFERS, as(key))).json().offers as Array<{
      offer_id: string;
      order_id: string;
    }>;
    const offer = offers.find((o) => o.order_id === orderId);
    const declined = await h.post(DECLINE, { offer_id: offer?.offer_id, reason: "booked" }, as(key));
    expect(declined.statusCode, declined.body).toBe(200);
    expect(await holder(h, orderId)).toBe(ids.last);
    const nextOffers = (await h.get(OFFERS, as(keys.get(ids.next) as string))).json().offers;
    expect(nextOffers).toEqual([]);
  });

  it("refuses a dispatcher's assignment of the excluded contractor with 409 contractor_excluded, naming the entry", async () => {
    const { h, ids, acme, globex, dispatcher, refOf } = await setup();
    const entry = await exclude(h, acme, { contractor_ref: await refOf(acme, ids.best) });
    const orderId = await order(h, acme);
    expect(await holder(h, orderId)).toBe(ids.next);
    const refused = await h.post(
      ASSIGN,
      { order_id: orderId, contractor_id: ids.best, reason: "customer asked for them" },
      as(dispatcher),
    );
    const problem = expectProblem(refused, 409, "contractor_excluded");
    expect(problem).toMatchObject({
      entry_id: entry.entry_id,
      errors: [expect.objectContaining({ field: "contractor_id" })],
    });
    expect(problem.detail).toContain(entry.entry_id);
    expect(await holder(h, orderId)).toBe(ids.next); // nothing changed
    // The control: another contractor, and the same contractor on another account's order.
    const ok = await h.post(
      ASSIGN,
      { order_id: orderId, contractor_id: ids.last, reason: "closer" },
      as(dispatcher),
    );
    expect(ok.statusCode, ok.body).toBe(200);
    const other = await order(h, globex);
    await h.post(ASSIGN, { order_id: other, contractor_id: ids.next, reason: "swap" }, as(dispatcher));
    const back = await h.post(
      ASSIGN,
      { order_id: other, contractor_id: ids.best, reason: "swap" },
      as(dispatcher),
    );
    expect(back.statusCode, back.body).toBe(200);
  });

  it("never routes the account's job to the excluded contractor in the optimised day", async () => {
    const { h, ids, acme, dispatcher, refOf } = await setup();
    await h.services.planner.warm();
    const day = new Date(Date.now() + 3 * 86_400_000);
    while (day.getUTCDay() === 0 || day.getUTCDay() === 6) day.setUTCDate(day.getUTCDate() + 1);
    const date = day.toISOString().slice(0, 10);
    const [year, month, dd] = date.split("-").map(Number) as [number, number, number];
    const local = (hour: number) =>
      zonedInstant("America/Los_Angeles", { year, month, day: dd, hour, minute: 0 }).toISOString();
    const scheduled = { ...JOB, urgency: "scheduled", service_window: { start: local(9), end: local(13) } };
    const mine = await order(h, acme, scheduled);
    const optimise = async () => {
      const res = await h.post(
        OPTIMIZE,
        { date, state: "CA", mode: "full", iterations: 300 },
        as(dispatcher),
      );
      expect(res.statusCode, res.body).toBe(200);
      const routes = res.json().routes as Array<{
        contractor_id: string;
        stops: Array<{ order_id: string }>;
      }>;
      return routes.find((r) => r.stops.some((s) => s.order_id === mine))?.contractor_id;
    };
    // The control: the best sits at the job's ZIP, the others 16 miles off; the day puts the job on it.
    expect(await optimise()).toBe(ids.best);
    await exclude(h, acme, { contractor_ref: await refOf(acme, ids.best) });
    const routed = await optimise();
    expect(routed).toBeDefined();
    expect(routed).not.toBe(ids.best);
  });
});
