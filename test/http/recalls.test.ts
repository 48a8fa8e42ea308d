// Recalls (issue 33): an order naming an earlier order of the caller's as its recall_of, a callback to the
// same site for the same trade within 30 days of that job's completion. The link is stored, shown in the
// order's view and list, sealed in its order.created record and covered by its idempotency key; each rule
// a refused recall_of breaks is named (422, field recall_of). On SQLite, and on PostgreSQL in the
// postgres project.

import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { RECALL_WINDOW_MS } from "../../src/domain/orders/recall.js";
import { acceptedJob, crewOf } from "../helpers/crew.js";
import { createHarness, type Harness, ORDER_PATH } from "../helpers/harness.js";
import { expectProblem } from "../helpers/security-suite.js";
import { type TestClock, testClock } from "../helpers/test-clock.js";

const REPORT = "/api/contractor/v1/jobs/status";
const SITE = { state: "CA", zip: "94103", address: "1 Market St", name: "Store 12" };

let h: Harness;
let clock: TestClock;
let caller: string;
let otherAccount: string;
let dispatcher: string;
let crew: string;
let crewId: string;
let second: string;
let secondId: string;

const job = (overrides: Record<string, unknown> = {}) => ({
  trade: "plumbing",
  urgency: "urgent",
  location: SITE,
  description: "Leak under the sink",
  ...overrides,
});

/** A plumbing job at SITE accepted by the crew's first plumber, and reported up to `last`. */
async function jobUpTo(last: "accepted" | "completed"): Promise<string> {
  const id = await acceptedJob(h, caller, crew, job());
  if (last === "accepted") return id;
  for (const step of [
    { status: "en_route", eta_minutes: 10 },
    { status: "on_site" },
    { status: "completed", final_cost_cents: 30_000 },
  ]) {
    const res = await h.post(REPORT, { order_id: id, ...step }, { "x-api-key": crew });
    expect(res.statusCode, res.body).toBe(200);
  }
  return id;
}

/** The 422 of a refused recall_of: its field error's rule and message. */
async function refusedRecall(body: Record<string, unknown>, key = caller) {
  const problem = expectProblem(
    await h.post(ORDER_PATH, body, { "x-api-key": key }),
    422,
    "validation_failed",
  );
  expect(problem.errors).toHaveLength(1);
  expect(problem.errors[0].field).toBe("recall_of");
  return problem.errors[0] as { code: string; message: string };
}

beforeAll(async () => {
  clock = testClock();
  h = await createHarness({}, {}, { now: clock.now });
  let ids: [string, string];
  ({
    caller,
    otherAccount,
    dispatcher,
    holderKey: crew,
    otherContractorKey: second,
    contractorIds: ids,
  } = await crewOf(h, { maxActiveJobs: 30 }));
  [crewId, secondId] = ids;
});
afterAll(() => h.close());

describe("an order naming its recall", () => {
  it("is created with the link, shown in its view and the list, and sealed in its order.created record", async () => {
    const original = await jobUpTo("completed");
    const res = await h.post(ORDER_PATH, job({ recall_of: original }), { "x-api-key": caller });
    expect(res.statusCode, res.body).toBe(200);
    const recall = res.json();
    expect(recall.recall_of).toBe(original);

    const status = (
      await h.get(`/api/dispatch/v1/orders/${recall.order_id}`, { "x-api-key": caller })
    ).json();
    expect(status.recall_of).toBe(original);
    const first = (await h.get(`/api/dispatch/v1/orders/${original}`, { "x-api-key": caller })).json();
    expect(first.recall_of).toBeNull();

    const listed = (
      await h.get(`/api/dispatch/v1/orders?recall_of=${original}`, { "x-api-key": caller })
    ).json().orders as Array<{ order_id: string; recall_of: string }>;
    expect(listed.map((o) => o.order_id)).toEqual([recall.order_id]);
    const others = (
      await h.get(`/api/dispatch/v1/orders?recall_of=${original}`, { "x-api-key": otherAccount })
    ).json().orders;
    expect(others).toEqual([]);

    const records = (
      await h.get(`/api/audit?order_id=${recall.order_id}&limit=200`, { "x-api-key": caller })
    ).json().records as Array<{ kind: string; seal: string; disclosed: Record<string, unknown> }>;
    const created = records.find((r) => r.kind === "order.created");
    expect(created?.disclosed.recall_of).toBe(original);
    expect((created?.disclosed.input as { recall_of?: string } | undefined)?.recall_of).toBe(original);
    await h.services.audit.sequence(true);
    expect((await h.get(`/api/attest/verify/${created?.seal}`)).statusCode).toBe(200);
  });

  it("is one request with its idempotency key: replayed with the same recall_of, refused with another", async () => {
    const original = await jobUpTo("completed");
    const headers = { "x-api-key": caller, "idempotency-key": `recall-${original}` };
    const first = await h.post(ORDER_PATH, job({ recall_of: original }), headers);
    expect(first.statusCode, first.body).toBe(200);
    const replay = await h.post(ORDER_PATH, job({ recall_of: original }), headers);
    expect(replay.json().order_id).toBe(first.json().order_id);
    expect(replay.headers["idempotent-replayed"]).toBe("true");
    expectProblem(await h.post(ORDER_PATH, job(), headers), 422, "idempotency_key_reused");
  });
});

describe("a recall's offer", () => {
  it("goes first to the contractor of the job it recalls, whatever its rank", async () => {
    // The original job is declined by the best-rated plumber and done by the second.
    const res = await h.post(ORDER_PATH, job(), { "x-api-key": caller });
    expect(res.statusCode, res.body).toBe(200);
    const original = res.json().order_id as string;
    const offerTo = async (key: string, order: string) =>
      (
        (await h.get("/api/contractor/v1/offers", { "x-api-key": key })).json().offers as Array<{
          offer_id: string;
          order_id: string;
        }>
      ).find((o) => o.order_id === order)?.offer_id;
    const declined = await h.post(
      "/api/contractor/v1/offers/decline",
      { offer_id: await offerTo(crew, original), reason: "booked" },
      { "x-api-key": crew },
    );
    expect(declined.statusCode, declined.body).toBe(200);
    const accepted = await h.post(
      "/api/contractor/v1/offers/accept",
      { offer_id: await offerTo(second, original) },
      { "x-api-key": second },
    );
    expect(accepted.statusCode, accepted.body).toBe(200);
    for (const step of [
      { status: "en_route", eta_minutes: 10 },
      { status: "on_site" },
      { status: "completed", final_cost_cents: 30_000 },
    ]) {
      const r = await h.post(REPORT, { order_id: original, ...step }, { "x-api-key": second });
      expect(r.statusCode, r.body).toBe(200);
    }

    // A job like it goes to the best-rated plumber; its recall to the second, who did the job.
    const plain = (await h.post(ORDER_PATH, job(), { "x-api-key": caller })).json();
    expect(plain.contractor_ref).toBe(await h.refOf(caller, crewId));
    const recall = await h.post(ORDER_PATH, job({ recall_of: original }), { "x-api-key": caller });
    expect(recall.statusCode, recall.body).toBe(200);
    expect(recall.json().contractor_ref).toBe(await h.refOf(caller, secondId));
    expect(await offerTo(second, recall.json().order_id)).toBeDefined();
    // The match's sealed record says why the best-ranked candidate was not offered the job first.
    const records = (
      await h.get(`/api/audit?order_id=${recall.json().order_id}&limit=200`, { "x-api-key": caller })
    ).json().records as Array<{ kind: string; disclosed: Record<string, unknown> }>;
    expect(records.find((r) => r.kind === "order.matched")?.disclosed).toMatchObject({ recall_first: true });
    // Both cancelled, so that their offers hold neither plumber's time (the recall still counts as one).
    for (const order of [plain.order_id, recall.json().order_id]) {
      const cancelled = await h.post(
        "/api/dispatch/v1/orders/cancel",
        { order_id: order, reason: "sorted out" },
        { "x-api-key": caller },
      );
      expect(cancelled.statusCode, cancelled.body).toBe(200);
    }
  });
});

describe("a refused recall_of names the rule it breaks", () => {
  it("reads an unknown order and another account's alike", async () => {
    const original = await jobUpTo("completed");
    const unknown = await refusedRecall(job({ recall_of: "ord_nosuchorder" }));
    expect(unknown).toMatchObject({ code: "unknown_order", message: "You have no order ord_nosuchorder." });
    const theirs = await refusedRecall(job({ recall_of: original }), otherAccount);
    expect(theirs).toEqual({
      field: "recall_of",
      code: "unknown_order",
      message: `You have no order ${original}.`,
    });
  });

  it("refuses another trade and another site", async () => {
    const original = await jobUpTo("completed");
    expect((await refusedRecall(job({ recall_of: original, trade: "electrical" }))).code).toBe("other_trade");
    const elsewhere = { ...SITE, zip: "94110", address: "2 Mission St" };
    expect((await refusedRecall(job({ recall_of: original, location: elsewhere }))).code).toBe("other_site");
  });

  it("refuses a job not completed and a cancelled order", async () => {
    const open = await jobUpTo("accepted");
    expect((await refusedRecall(job({ recall_of: open }))).message).toMatch(/accepted, not completed/);
    const cancelled = await jobUpTo("accepted");
    const res = await h.post(
      "/api/dispatch/v1/orders/cancel",
      { order_id: cancelled, reason: "fixed it ourselves" },
      { "x-api-key": caller },
    );
    expect(res.statusCode, res.body).toBe(200);
    expect((await refusedRecall(job({ recall_of: cancelled }))).code).toBe("cancelled");
  });

  it("refuses a job completed more than 30 days before", async () => {
    const original = await jobUpTo("completed");
    // Ten minutes past the 30 days (the file's jobs were all completed in its first minutes).
    clock.advance(RECALL_WINDOW_MS + 10 * 60_000);
    const late = await refusedRecall(job({ recall_of: original }));
    expect(late.code).toBe("too_late");
    expect(late.message).toMatch(/more than 30 days ago/);
  });
});

describe("once the jobs' 30 days are over", () => {
  // Run after the clock moved past the 30 days: every job of this file is judged now. The crew's first
  // plumber completed five: the two recalled above (the first test's and the idempotent one's), and those
  // of the unknown-order, trade-and-site and too-late tests; the second one, recalled.
  it("the dispatch team reads the contractor's first-time-fix rate in its directory record", async () => {
    const res = await h.get(`/api/dispatcher/v1/contractors/${crewId}`, { "x-api-key": dispatcher });
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json().record).toMatchObject({
      jobs_completed: 5,
      jobs_judged_for_recall: 5,
      jobs_recalled: 2,
      first_time_fix_rate: 0.6,
    });
  });

  it("the evals count the jobs and their recalls", async () => {
    const res = await h.get("/api/dispatch/analytics/evals?period=rolling_7d");
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json().recalls).toMatchObject({
      jobs_completed: 6,
      jobs_recalled: 3,
      first_time_fix_rate: { value: 0.5, sample_size: 6 },
      recall_rate: { value: 0.5, sample_size: 6 },
      by_contractor: { contractors: 2, contractors_measured: 0 },
    });
  });
});
