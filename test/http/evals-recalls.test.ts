// The evals' recall figures (issue 33) from a small fixed history, read at a fixed time T0: live jobs of
// three contractors completed before the report's window moved back 30 days, some named by a later order
// as its recall, and the jobs the figures must leave out (completed too recently to be judged, exactly at
// the recall window's end, in the sandbox, never completed). Every figure is worked out by hand below.
// On SQLite, and on PostgreSQL in the postgres project.

import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Order } from "../../src/domain/orders/order.js";
import { evalsOutput } from "../../src/operations/evals/evals.js";
import { liveContractor, testRecord } from "../helpers/fixtures.js";
import { createHarness, type Harness } from "../helpers/harness.js";
import { orderFixture } from "../helpers/order-fixture.js";

const EVALS = "/api/dispatch/analytics/evals";
const M = 60_000;
const D = 86_400_000;
/** When the report is read: rolling_30d's recall window is [T0 - 60 d, T0 - 30 d). */
const T0 = Date.parse("2030-06-15T15:00:00.000Z");
const iso = (ms: number) => new Date(ms).toISOString();

let h: Harness;
let account: string;
let seq = 0;

/** A job completed at `completedAt` by `contractor` (null: never completed), recalled `recalls` times. */
function job(
  contractor: string,
  completedAt: number | null,
  options: { recalls?: number; livemode?: boolean; recallStatus?: Order["status"] } = {},
): Order[] {
  const id = `ord_rc${String(seq++).padStart(4, "0")}`;
  const received = (completedAt ?? T0 - 10 * D) - 2 * 3_600_000;
  const base = {
    account_id: account,
    livemode: options.livemode ?? true,
    received_at: iso(received),
    created_at: iso(received),
    updated_at: iso(received),
  };
  const original = orderFixture({
    ...base,
    id,
    contractor_id: contractor,
    status: completedAt === null ? "accepted" : "completed",
    completed_at: completedAt === null ? null : iso(completedAt),
  });
  // Each recall ordered 5 days after the completion, still open or cancelled: a recall counts whatever
  // became of it, and is not itself a completed job.
  const recalls = Array.from({ length: options.recalls ?? 0 }, (_, i) =>
    orderFixture({
      ...base,
      id: `${id}r${i}`,
      received_at: iso((completedAt ?? 0) + 5 * D),
      created_at: iso((completedAt ?? 0) + 5 * D),
      status: options.recallStatus ?? "accepted",
      contractor_id: contractor,
      recall_of: id,
    }),
  );
  return [original, ...recalls];
}

const times = (n: number, f: (i: number) => Order[]) => Array.from({ length: n }, (_, i) => f(i)).flat();

beforeAll(async () => {
  h = await createHarness({}, {}, { now: () => new Date(T0) });
  account = (await h.services.store.keys.ensureAccount("recalls")).id;
  await h.services.store.contractors.insert(
    ["ctr_a", "ctr_b", "ctr_c", "ctr_d"].map((id) => liveContractor({ id })),
    testRecord(),
  );
  const rows = [
    // ctr_a: 10 jobs completed at T0 - 45 d, two recalled (one recall cancelled): 8 / 10 = 0.8.
    ...times(10, (i) =>
      job("ctr_a", T0 - 45 * D + i * M, {
        recalls: i < 2 ? 1 : 0,
        ...(i === 1 ? { recallStatus: "cancelled" as const } : {}),
      }),
    ),
    // ctr_b: 12 jobs completed at T0 - 50 d, one recalled: 11 / 12 = 0.9167.
    ...times(12, (i) => job("ctr_b", T0 - 50 * D + i * M, { recalls: i === 0 ? 1 : 0 })),
    // ctr_c: 3 jobs (under the minimum of 10): at T0 - 60 d exactly (the window's first instant, counted),
    // and two at T0 - 35 d (in rolling_7d's recall window too), one recalled: 2 / 3.
    ...job("ctr_c", T0 - 60 * D),
    ...job("ctr_c", T0 - 35 * D, { recalls: 1 }),
    ...job("ctr_c", T0 - 35 * D + M),
    // Left out: completed at T0 - 30 d exactly (could still be recalled now), at T0 - 20 d (recalled, but
    // too recent to be judged), before the window, in the sandbox, and never completed.
    ...job("ctr_d", T0 - 30 * D),
    ...job("ctr_a", T0 - 20 * D, { recalls: 1 }),
    ...job("ctr_a", T0 - 61 * D, { recalls: 1 }),
    ...job("ctr_a", T0 - 45 * D, { recalls: 1, livemode: false }),
    ...job("ctr_a", null),
  ];
  await h.services.store.write(async (tx) => {
    for (const row of rows) await tx.insertOrder(row);
  });
});
afterAll(() => h.close());

async function read(period: string) {
  const res = await h.get(`${EVALS}?period=${period}`);
  expect(res.statusCode, res.body).toBe(200);
  return evalsOutput.parse(res.json());
}

describe("the recall figures", () => {
  it("count the jobs completed in the window moved back 30 days, overall and spread over contractors", async () => {
    const report = await read("rolling_30d");
    // Counted: ctr_a's 10, ctr_b's 12, ctr_c's 3 = 25 jobs; recalled 2 + 1 + 1 = 4.
    expect(report.recalls).toEqual({
      completed_between: { start: iso(T0 - 60 * D), end: iso(T0 - 30 * D) },
      jobs_completed: 25,
      jobs_recalled: 4,
      first_time_fix_rate: { value: 0.84, sample_size: 25, unit: "ratio" },
      recall_rate: { value: 0.16, sample_size: 25, unit: "ratio" },
      by_contractor: {
        minimum_jobs: 10,
        contractors: 3,
        contractors_measured: 2,
        // ctr_a 0.8 and ctr_b 0.9167; the nearest-rank median of two is the lower.
        first_time_fix_rate_lowest: { value: 0.8, sample_size: 2, unit: "ratio" },
        first_time_fix_rate_median: { value: 0.8, sample_size: 2, unit: "ratio" },
        first_time_fix_rate_highest: { value: 0.9167, sample_size: 2, unit: "ratio" },
      },
    });
  });

  it("state each figure's provenance, its sample the figure's", async () => {
    const report = await read("rolling_30d");
    for (const path of [
      "recalls.first_time_fix_rate",
      "recalls.recall_rate",
      "recalls.jobs_completed",
      "recalls.jobs_recalled",
      "recalls.by_contractor",
    ]) {
      expect(report.provenance[path], path).toMatchObject({ computed_at: report.generated_at });
    }
    expect(report.provenance["recalls.first_time_fix_rate"]).toMatchObject({ sample_size: 25 });
    expect(report.provenance["recalls.first_time_fix_rate"]?.note).toMatch(/moved back 30 days/);
    expect(report.provenance["recalls.by_contractor"]).toMatchObject({ sample_size: 2 });
    expect(report.methodology).toMatch(/whole 30 days to be recalled/);
  });

  it("measure no contractor, and give no spread, when none has enough jobs", async () => {
    // rolling_7d: completed in [T0 - 37 d, T0 - 30 d): ctr_c's two jobs at T0 - 35 d, one recalled.
    const { recalls } = await read("rolling_7d");
    expect(recalls).toMatchObject({
      completed_between: { start: iso(T0 - 37 * D), end: iso(T0 - 30 * D) },
      jobs_completed: 2,
      jobs_recalled: 1,
      first_time_fix_rate: { value: 0.5, sample_size: 2 },
      recall_rate: { value: 0.5, sample_size: 2 },
    });
    expect(recalls.by_contractor).toMatchObject({
      contractors: 1,
      contractors_measured: 0,
      first_time_fix_rate_median: { value: null, sample_size: 0 },
    });
  });
});
