// Ratings (issue 33): the account rates its completed order 1-5 on four scores with a comment, changes
// it for 14 days (then 409 rating_closed), and never rates another account's order (404) or unfinished
// work (409); each rating and change is sealed (order.rated) and moves the contractor's tally, which its
// own aggregate (contractor.ratings, never who gave what), the dispatch team's directory and the
// matcher's pool read. On SQLite, and on PostgreSQL in the postgres project.

import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { acceptedJob, crewOf } from "../helpers/crew.js";
import { createHarness, type Harness } from "../helpers/harness.js";
import { expectProblem } from "../helpers/security-suite.js";
import { type TestClock, testClock } from "../helpers/test-clock.js";

const REPORT = "/api/contractor/v1/jobs/status";
const RATE = "/api/dispatch/v1/orders/rate";
const DAY_MS = 86_400_000;

let h: Harness;
let clock: TestClock;
let caller: string;
let otherAccount: string;
let dispatcher: string;
let crew: string;
let otherCrew: string;
let crewId: string;

const JOB = {
  trade: "plumbing",
  urgency: "urgent",
  location: { state: "CA", zip: "94103" },
  description: "Leak under the sink",
  nte_cents: 100_000,
};

/** Moves the crew's job through `steps` of its progress. */
async function report(order: string, steps: Array<Record<string, unknown>>): Promise<void> {
  for (const step of steps) {
    const res = await h.post(REPORT, { order_id: order, ...step }, { "x-api-key": crew });
    expect(res.statusCode, res.body).toBe(200);
  }
}

const EN_ROUTE = { status: "en_route", eta_minutes: 10 };
const ON_SITE = { status: "on_site" };
const COMPLETED = { status: "completed", final_cost_cents: 30_000 };

/** A plumbing job accepted, worked on and completed by the crew's first plumber. */
async function completedJob(): Promise<string> {
  const id = await acceptedJob(h, caller, crew, JOB);
  await report(id, [EN_ROUTE, ON_SITE, COMPLETED]);
  return id;
}

const SCORES = { quality: 5, timeliness: 4, communication: 3, value: 4 };

const rate = (body: Record<string, unknown>, key = caller) => h.post(RATE, body, { "x-api-key": key });
const readRating = (order: string, key = caller) =>
  h.get(`/api/orders/${order}/rating`, { "x-api-key": key });
const aggregate = (key = crew) => h.get("/api/contractor/v1/ratings", { "x-api-key": key });

beforeAll(async () => {
  clock = testClock();
  h = await createHarness({}, {}, { now: clock.now });
  const cast = await crewOf(h, { maxActiveJobs: 30 });
  ({ caller, otherAccount, dispatcher, holderKey: crew, otherContractorKey: otherCrew } = cast);
  crewId = cast.contractorIds[0];
});
afterAll(() => h.close());

describe("rating a completed order", () => {
  it("rates, reads back, seals the rating and moves the contractor's aggregate", async () => {
    const before = (await aggregate()).json();
    const order = await completedJob();
    const res = await rate({ order_id: order, ...SCORES, comment: "  Fixed it first time.  " });
    expect(res.statusCode, res.body).toBe(200);
    const rating = res.json();
    expect(rating).toMatchObject({ order_id: order, ...SCORES, overall: 4, comment: "Fixed it first time." });
    expect(rating.edits).toBe(0);
    expect(Date.parse(rating.editable_until) - Date.parse(rating.rated_at)).toBe(14 * DAY_MS);
    expect(rating.contractor_ref).toMatch(/^cref-/);
    expect(rating.contractor_id).toBeUndefined();

    const read = await readRating(order);
    expect(read.statusCode, read.body).toBe(200);
    expect(read.json()).toEqual(rating);
    // The dispatch team reads it with the contractor's id.
    const team = await readRating(order, dispatcher);
    expect(team.statusCode, team.body).toBe(200);
    expect(team.json()).toMatchObject({ ...SCORES, contractor_id: crewId });

    // Sealed in the order's audit log, and verifiable.
    await h.services.audit.sequence(true);
    expect((await h.get(`/api/attest/verify/${rating.record.seal}`)).statusCode).toBe(200);
    const records = (await h.get(`/api/audit?order_id=${order}&limit=200`, { "x-api-key": caller })).json()
      .records as Array<{ kind: string; disclosed: Record<string, unknown> }>;
    const sealed = records.find((r) => r.kind === "order.rated");
    expect(sealed?.disclosed).toMatchObject({
      ...SCORES,
      overall: 4,
      comment: "Fixed it first time.",
      edit: 0,
    });

    const after = (await aggregate()).json();
    expect(after.count).toBe(before.count + 1);
  });

  it("lets the account change its rating, sealing the change with the previous scores", async () => {
    const order = await completedJob();
    expect((await rate({ order_id: order, ...SCORES })).statusCode).toBe(200);
    const counted = (await aggregate()).json().count;
    const changed = await rate({ order_id: order, ...SCORES, quality: 2, comment: "The leak came back." });
    expect(changed.statusCode, changed.body).toBe(200);
    expect(changed.json()).toMatchObject({ quality: 2, edits: 1, comment: "The leak came back." });
    // A change is not a second rating.
    expect((await aggregate()).json().count).toBe(counted);
    // The same rating again writes nothing.
    const again = await rate({ order_id: order, ...SCORES, quality: 2, comment: "The leak came back." });
    expect(again.json()).toMatchObject({ edits: 1, record: changed.json().record });

    const records = (await h.get(`/api/audit?order_id=${order}&limit=200`, { "x-api-key": caller })).json()
      .records as Array<{ kind: string; disclosed: Record<string, unknown> }>;
    const rated = records.filter((r) => r.kind === "order.rated");
    expect(rated).toHaveLength(2);
    const edit = rated.find((r) => r.disclosed.edit === 1);
    expect(edit?.disclosed).toMatchObject({ quality: 2, previous: { ...SCORES, comment: null } });
  });

  it("writes two ratings of one order sent at once one after the other: one rating, changed once", async () => {
    const order = await completedJob();
    const before = await h.services.store.ratings.tallyOf(crewId);
    const [a, b] = await Promise.all([
      rate({ order_id: order, ...SCORES, value: 1 }),
      rate({ order_id: order, ...SCORES, value: 2 }),
    ]);
    expect([a.statusCode, b.statusCode]).toEqual([200, 200]);
    expect([a.json().edits, b.json().edits].sort()).toEqual([0, 1]);
    const held = (await readRating(order)).json();
    expect(held.edits).toBe(1);
    // The tally counts one rating and holds its scores as they stand, not both.
    const after = await h.services.store.ratings.tallyOf(crewId);
    expect(after.count).toBe(before.count + 1);
    expect(after.value - before.value).toBe(held.value);
    expect(after.quality - before.quality).toBe(SCORES.quality);
  });

  it("rates invoiced work too", async () => {
    const order = await completedJob();
    const invoiced = await h.post(
      "/api/contractor/v1/jobs/invoice",
      { order_id: order, amount_cents: 30_000 },
      { "x-api-key": crew },
    );
    expect(invoiced.statusCode, invoiced.body).toBe(200);
    const res = await rate({ order_id: order, ...SCORES });
    expect(res.statusCode, res.body).toBe(200);
  });
});

describe("what a rating refuses", () => {
  it("answers 404 for another account's order, and for no rating yet", async () => {
    const order = await completedJob();
    expectProblem(await rate({ order_id: order, ...SCORES }, otherAccount), 404, "not_found");
    expectProblem(await readRating(order, otherAccount), 404, "not_found");
    expectProblem(await readRating(order), 404, "not_found");
    expectProblem(await rate({ order_id: "ord_doesnotexist00000", ...SCORES }), 404, "not_found");
  });

  it("answers 409 invalid_transition before the job is completed, naming its status", async () => {
    const order = await acceptedJob(h, caller, crew, JOB);
    const body = expectProblem(await rate({ order_id: order, ...SCORES }), 409, "invalid_transition");
    expect(body.current_status).toBe("accepted");
    expect(body.detail).toMatch(/accepted/);
    expect(expectProblem(await readRating(order), 409, "invalid_transition").current_status).toBe("accepted");
    await report(order, [EN_ROUTE, ON_SITE]);
    expect((await rate({ order_id: order, ...SCORES })).statusCode).toBe(409);
    await report(order, [COMPLETED]);
    expect((await rate({ order_id: order, ...SCORES })).statusCode).toBe(200);
  });

  it("answers 409 for a cancelled order", async () => {
    const res = await h.post("/api/dispatch/v1/order", JOB, { "x-api-key": caller });
    const order = res.json().order_id as string;
    const cancelled = await h.post(
      "/api/dispatch/v1/orders/cancel",
      { order_id: order, reason: "not needed" },
      { "x-api-key": caller },
    );
    expect(cancelled.statusCode, cancelled.body).toBe(200);
    const body = expectProblem(await rate({ order_id: order, ...SCORES }), 409, "invalid_transition");
    expect(body.current_status).toBe("cancelled");
  });

  it("answers 422 naming the field for a score out of range, not whole, or missing, and a long comment", async () => {
    const order = await completedJob();
    for (const [body, field] of [
      [{ ...SCORES, quality: 6 }, "quality"],
      [{ ...SCORES, quality: 0 }, "quality"],
      [{ ...SCORES, timeliness: 3.5 }, "timeliness"],
      [{ ...SCORES, value: "5" }, "value"],
      [{ quality: 5, timeliness: 4, value: 4 }, "communication"],
      [{ ...SCORES, comment: "x".repeat(2001) }, "comment"],
    ] as const) {
      const problem = expectProblem(await rate({ order_id: order, ...body }), 422, "validation_failed");
      expect(problem.errors.map((e: { field: string }) => e.field)).toContain(field);
    }
    expectProblem(await readRating(order), 404, "not_found");
  });

  it("refuses contractors: no rating of an order, its own job included", async () => {
    const order = await completedJob();
    expect((await rate({ order_id: order, ...SCORES })).statusCode).toBe(200);
    expectProblem(await readRating(order, crew), 403, "key_kind_not_allowed");
    expectProblem(await rate({ order_id: order, ...SCORES }, crew), 403, "key_kind_not_allowed");
  });
});

describe("a contractor's ratings", () => {
  it("shows the contractor its aggregate and the dispatch team the same in the directory, never the raters", async () => {
    const order = await completedJob();
    expect(
      (await rate({ order_id: order, quality: 1, timeliness: 1, communication: 1, value: 1 })).statusCode,
    ).toBe(200);
    const mine = await aggregate();
    expect(mine.statusCode, mine.body).toBe(200);
    const body = mine.json();
    expect(Object.keys(body).sort()).toEqual(["contractor_id", "count", "matching_rating", "means"]);
    expect(body.contractor_id).toBe(crewId);
    expect(body.count).toBeGreaterThan(0);
    expect(Object.keys(body.means).sort()).toEqual([
      "communication",
      "overall",
      "quality",
      "timeliness",
      "value",
    ]);
    // No account, order or comment anywhere in it.
    expect(mine.body).not.toMatch(/acct_|ord_|key_|cref-|comment|Fixed/);

    // The other plumber: nobody rated it.
    const none = (await aggregate(otherCrew)).json();
    expect(none).toMatchObject({ count: 0, means: null, matching_rating: 3.9 });

    const listed = await h.get(`/api/dispatcher/v1/contractors/${crewId}`, { "x-api-key": dispatcher });
    expect(listed.statusCode, listed.body).toBe(200);
    const { contractor_id: _me, ...aggregateOnly } = body;
    expect(listed.json().ratings).toEqual(aggregateOnly);
    const page = await h.get("/api/dispatcher/v1/contractors?trade=plumbing&limit=100", {
      "x-api-key": dispatcher,
    });
    expect(page.statusCode, page.body).toBe(200);
    const row = (page.json().contractors as Array<{ contractor_id: string; ratings: unknown }>).find(
      (c) => c.contractor_id === crewId,
    );
    expect(row?.ratings).toEqual(aggregateOnly);

    // The contractor's view of the order's audit records leaves the rating out.
    const audit = await h.get(`/api/contractor/v1/audit?order_id=${order}`, { "x-api-key": crew });
    expect(audit.statusCode, audit.body).toBe(200);
    const kinds = (audit.json().records as Array<{ kind: string }>).map((r) => r.kind);
    expect(kinds).toContain("order.accepted");
    expect(kinds).not.toContain("order.rated");
  });

  it("reaches the matcher's pool: the shrunk rating is what the index scores", async () => {
    await h.services.pool.refresh();
    const indexed = h.services.pool.index.contractorOf(crewId);
    const tally = await h.services.store.ratings.tallyOf(crewId);
    expect(indexed?.ratings).toEqual(tally);
    expect((await aggregate()).json().matching_rating).toBeCloseTo(
      (5 * 4.9 + (tally.quality + tally.timeliness + tally.communication + tally.value) / 4) /
        (5 + tally.count),
      2,
    );
  });
});

describe("the edit window", () => {
  it("closes 14 days after the first rating: 409 rating_closed with the date it closed", async () => {
    const order = await completedJob();
    const first = await rate({ order_id: order, ...SCORES });
    expect(first.statusCode, first.body).toBe(200);
    const until = first.json().editable_until as string;
    clock.advance(13 * DAY_MS);
    expect((await rate({ order_id: order, ...SCORES, value: 2 })).statusCode).toBe(200);
    clock.advance(1 * DAY_MS);
    const closed = expectProblem(await rate({ order_id: order, ...SCORES, value: 5 }), 409, "rating_closed");
    expect(closed.editable_until).toBe(until);
    expect(closed.detail).toContain(until);
    // The same rating as held is still answered (a retry), changing nothing.
    const same = await rate({ order_id: order, ...SCORES, value: 2 });
    expect(same.statusCode, same.body).toBe(200);
    expect(same.json().edits).toBe(1);
  });
});
