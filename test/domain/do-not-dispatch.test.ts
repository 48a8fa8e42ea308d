// Do-not-dispatch as the pure rules hold it: which entry bars a contractor from a job of a trade, the
// matcher's filter (the excluded one is the obvious best and is never chosen, counted under
// do_not_dispatch; other trades and other accounts unaffected), the refusal of an assignment, and the
// optimised day, which never plans a job on a contractor its account excludes.

import { describe, expect, it } from "vitest";
import { candidateSet, jobsOfList } from "../../src/domain/candidate-set.js";
import { dayOfDate } from "../../src/domain/compliance.js";
import type { Contractor } from "../../src/domain/contractor.js";
import {
  barredFor,
  barringEntry,
  type DoNotDispatchEntry,
  exclusionRefusal,
} from "../../src/domain/do-not-dispatch.js";
import { hardFilter, type MatchRequest, match } from "../../src/domain/matching.js";
import { modelJobPrice } from "../../src/domain/pricing.js";
import { type DayContractor, type DayJob, planDay } from "../../src/domain/schedule/day.js";
import { DayJobsBuilder, type DayJobsOptions, type DayOrder } from "../../src/domain/schedule/day-jobs.js";
import { TRADES, type TradeCode } from "../../src/domain/trades.js";

const AUSTIN = { lat: 30.27, lon: -97.74 };
const TODAY = dayOfDate("2026-06-01");

function entry(overrides: Partial<DoNotDispatchEntry> = {}): DoNotDispatchEntry {
  return {
    id: "dnd_1",
    accountId: "acct_a",
    livemode: true,
    contractorId: "ctr_best",
    trades: null,
    reason: "left the site unsafe",
    createdAt: "2026-06-01T00:00:00.000Z",
    createdBy: "key:key_1",
    seal: "seal_1",
    ...overrides,
  };
}

function contractor(id: string, rating: number, trades: TradeCode[] = ["plumbing", "hvac"]): Contractor {
  return {
    id,
    pool: "live",
    trades,
    states: ["TX"],
    lat: AUSTIN.lat,
    lon: AUSTIN.lon,
    serviceRadiusMiles: 50,
    hourlyRateCents: 9000,
    emergencyCapable: true,
    maxActiveJobs: 5,
    rating,
    responseMinutes: 60,
    active: true,
    excluded: false,
    insuranceVerifiedUntil: "2027-01-01",
    licenseVerifiedUntil: "2027-01-01",
  };
}

function request(trade: TradeCode, barred?: ReadonlySet<string>): MatchRequest {
  return {
    trade,
    state: "TX",
    point: AUSTIN,
    urgency: "routine",
    nteCents: null,
    laborHours: TRADES[trade].typicalJobHours,
    modelPrice: modelJobPrice(trade, "TX", "routine"),
    today: TODAY,
    ...(barred ? { barred } : {}),
  };
}

const POOL = [contractor("ctr_best", 5), contractor("ctr_next", 4), contractor("ctr_last", 3)];
const run = (req: MatchRequest) =>
  match(
    req,
    candidateSet(POOL),
    jobsOfList(POOL, () => 0),
  );

describe("do-not-dispatch entries", () => {
  it("bar a contractor from every trade, or from the trades listed only", () => {
    const all = entry();
    const plumbing = entry({ id: "dnd_2", contractorId: "ctr_next", trades: ["plumbing"] });
    expect(barringEntry([all, plumbing], "ctr_best", "roofing")).toBe(all);
    expect(barringEntry([all, plumbing], "ctr_next", "plumbing")).toBe(plumbing);
    expect(barringEntry([all, plumbing], "ctr_next", "hvac")).toBeUndefined();
    expect([...barredFor([all, plumbing], "plumbing")].sort()).toEqual(["ctr_best", "ctr_next"]);
    expect([...barredFor([all, plumbing], "hvac")]).toEqual(["ctr_best"]);
    expect(barredFor([], "hvac").size).toBe(0);
  });

  it("refuse an assignment naming the entry, and let any other through", () => {
    const refusal = exclusionRefusal([entry({ trades: ["plumbing"] })], "ctr_best", "plumbing");
    expect(refusal).toMatchObject({
      kind: "refused",
      code: "contractor_excluded",
      extra: { entry_id: "dnd_1" },
    });
    expect(refusal?.message).toContain("dnd_1");
    expect(exclusionRefusal([entry({ trades: ["plumbing"] })], "ctr_best", "hvac")).toBeNull();
    expect(exclusionRefusal([entry()], "ctr_next", "plumbing")).toBeNull();
  });
});

describe("matching with a do-not-dispatch set", () => {
  it("never chooses the barred contractor, the obvious best, and counts it under do_not_dispatch", () => {
    expect(run(request("plumbing")).chosen?.contractor.id).toBe("ctr_best");
    const result = run(request("plumbing", new Set(["ctr_best"])));
    expect(result.chosen?.contractor.id).toBe("ctr_next");
    expect(result.ranked.map((c) => c.contractor.id)).toEqual(["ctr_next", "ctr_last"]);
    expect(result.rejected.do_not_dispatch).toBe(1);
    expect(result.eligible).toBe(2);
  });

  it("agrees with hardFilter, the per-contractor definition", () => {
    const req = request("plumbing", new Set(["ctr_best", "ctr_last"]));
    expect(hardFilter(POOL[0] as Contractor, req, 0).reason).toBe("do_not_dispatch");
    expect(hardFilter(POOL[1] as Contractor, req, 0).reason).toBeNull();
    expect(run(req).ranked.map((c) => c.contractor.id)).toEqual(["ctr_next"]);
  });

  it("leaves work of a trade out of the entry's scope alone", () => {
    const barred = barredFor([entry({ trades: ["plumbing"] })], "hvac");
    expect(run(request("hvac", barred)).chosen?.contractor.id).toBe("ctr_best");
  });
});

describe("the optimised day with do-not-dispatch", () => {
  const HERE = { lat: 34.05, lon: -118.25 };
  const AWAY = { lat: 34.05, lon: -117.8 }; // about 26 miles east
  const at = (hhmm: string) => new Date(`2026-12-01T${hhmm}:00Z`);
  const dayContractor = (id: string, base: { lat: number; lon: number }): DayContractor => ({
    id,
    trades: ["plumbing"],
    states: ["CA"],
    base,
    radiusMiles: 60,
    shiftStart: at("08:00"),
    shiftEnd: at("18:00"),
    capacity: 5,
  });
  const job = (orderId: string, extra: Partial<DayJob> = {}): DayJob => ({
    orderId,
    trade: "plumbing",
    state: "CA",
    point: HERE,
    ready: at("09:00"),
    due: at("12:00"),
    serviceMinutes: 60,
    contractorId: null,
    pinned: false,
    ...extra,
  });
  const contractors = [dayContractor("ctr_here", HERE), dayContractor("ctr_away", AWAY)];
  const routeOf = (plan: ReturnType<typeof planDay>, orderId: string) =>
    plan.routes.find((r) => r.stops.some((s) => s.orderId === orderId))?.contractorId;

  it("plans a job on the nearest contractor unless its account excludes it", () => {
    const plan = planDay([job("ord_free"), job("ord_barred", { barred: ["ctr_here"] })], contractors, {
      seed: 1,
      iterations: 200,
    });
    expect(routeOf(plan, "ord_free")).toBe("ctr_here");
    expect(routeOf(plan, "ord_barred")).toBe("ctr_away");
  });

  it("leaves a job unplanned when its account excludes every contractor who could take it", () => {
    const plan = planDay([job("ord_x", { barred: ["ctr_here", "ctr_away"] })], contractors, { seed: 1 });
    expect(plan.unassigned).toEqual([{ orderId: "ord_x", reason: "no_contractor" }]);
  });

  it("takes each job's barred contractors from its own account's entries for its trade", () => {
    const order = (id: string, account_id: string, trade: TradeCode): DayOrder => ({
      id,
      account_id,
      status: "needs_dispatcher",
      created_at: "2026-12-01T07:00:00.000Z",
      version: 1,
      contractor_id: null,
      trade,
      state: "CA",
      zip: "90012",
      city: null,
      time_zone: "America/Los_Angeles",
      window_start: "2026-12-01T17:00:00.000Z",
      window_end: "2026-12-01T21:00:00.000Z",
      arrive_by: null,
      received_at: "2026-12-01T07:00:00.000Z",
    });
    const options: DayJobsOptions = {
      date: "2026-12-01",
      now: new Date("2026-12-01T07:00:00Z"),
      mode: "full",
      pinned: [],
      exclusions: [
        { accountId: "acct_a", contractorId: "ctr_here", trades: ["plumbing"] },
        { accountId: "acct_a", contractorId: "ctr_away", trades: null },
      ],
    };
    const builder = new DayJobsBuilder(options);
    builder.add(order("ord_a_plumbing", "acct_a", "plumbing"));
    builder.add(order("ord_a_hvac", "acct_a", "hvac"));
    builder.add(order("ord_b_plumbing", "acct_b", "plumbing"));
    const barred = Object.fromEntries(builder.out.jobs.map((j) => [j.orderId, j.barred ?? []]));
    expect(barred).toEqual({
      ord_a_plumbing: ["ctr_here", "ctr_away"],
      ord_a_hvac: ["ctr_away"],
      ord_b_plumbing: [],
    });
  });
});
