// planDay on a tiny day whose optimum is known: two contractors, jobs at the first one's base, one of
// them pinned to the second. The plan is the optimum (no travel but the pinned job's), every stop starts
// inside its window and the routes fit the shifts, and each job it cannot plan comes back with its reason.

import { describe, expect, it } from "vitest";
import { type DayContractor, type DayJob, planDay, untriedDay } from "../../../src/domain/schedule/day.js";
import { greatCircleTravel } from "../../../src/domain/travel-time.js";

const HERE = { lat: 34.05, lon: -118.25 };
const AWAY = { lat: 34.05, lon: -117.8 }; // about 26 miles east
const at = (hhmm: string) => new Date(`2026-12-01T${hhmm}:00Z`);

function contractor(id: string, base: { lat: number; lon: number }): DayContractor {
  return {
    id,
    trades: ["plumbing"],
    states: ["CA"],
    base,
    radiusMiles: 60,
    shiftStart: at("08:00"),
    shiftEnd: at("18:00"),
    capacity: 5,
  };
}

function job(orderId: string, from: string, to: string, extra: Partial<DayJob> = {}): DayJob {
  return {
    orderId,
    trade: "plumbing",
    state: "CA",
    point: HERE,
    ready: at(from),
    due: at(to),
    serviceMinutes: 60,
    contractorId: null,
    pinned: false,
    ...extra,
  };
}

describe("planDay", () => {
  const contractors = [contractor("ctr_here", HERE), contractor("ctr_away", AWAY)];
  const jobs = [
    job("ord_b", "11:00", "12:00"),
    job("ord_a", "09:00", "10:00"),
    // At ctr_here's door, but it stays with ctr_away (accepted, kept in incremental mode).
    job("ord_pinned", "10:00", "16:00", { contractorId: "ctr_away", pinned: true }),
    job("ord_roof", "09:00", "12:00", { trade: "roofing" }),
    job("ord_gone", "09:00", "12:00", { contractorId: "ctr_on_leave", pinned: true }),
    job("ord_night", "20:00", "21:00"),
  ];
  const plan = planDay(jobs, contractors, { seed: 1, iterations: 200 });
  const leg = greatCircleTravel.minutes(AWAY, HERE);

  it("finds the optimum: only the pinned job's round trip is driven", () => {
    expect(plan.routes.map((r) => [r.contractorId, r.stops.map((s) => s.orderId)])).toEqual([
      ["ctr_away", ["ord_pinned"]],
      ["ctr_here", ["ord_a", "ord_b"]],
    ]);
    expect(plan.travelMinutes).toBeCloseTo(2 * leg, 0);
    expect(plan.search).toEqual({ iterations: 200, stopped: "budget" });
  });

  it("starts each stop inside its window, waits for windows to open, and ends within the shift", () => {
    const byId = new Map(jobs.map((j) => [j.orderId, j]));
    for (const route of plan.routes) {
      let free = at("08:00").getTime();
      for (const s of route.stops) {
        const j = byId.get(s.orderId) as DayJob;
        expect(s.arriveAt.getTime()).toBeGreaterThanOrEqual(free);
        expect(s.startAt.getTime()).toBeGreaterThanOrEqual(Math.max(s.arriveAt.getTime(), j.ready.getTime()));
        expect(s.startAt.getTime()).toBeLessThanOrEqual(j.due.getTime());
        expect(s.endAt.getTime() - s.startAt.getTime()).toBe(60 * 60_000);
        free = s.endAt.getTime();
      }
      expect(free).toBeLessThanOrEqual(at("18:00").getTime());
    }
    const here = plan.routes.find((r) => r.contractorId === "ctr_here");
    expect(here?.stops.map((s) => s.startAt.toISOString())).toEqual([
      at("09:00").toISOString(),
      at("11:00").toISOString(),
    ]);
    expect(here?.idleMinutes).toBe(120); // 08:00-09:00 and 10:00-11:00
    const away = plan.routes.find((r) => r.contractorId === "ctr_away");
    expect(away?.stops[0]?.arriveAt.getTime()).toBeCloseTo(at("08:00").getTime() + leg * 60_000, -3);
    expect(away?.stops[0]?.startAt.toISOString()).toBe(at("10:00").toISOString());
  });

  it("gives each job it leaves out its reason", () => {
    expect([...plan.unassigned].sort((a, b) => a.orderId.localeCompare(b.orderId))).toEqual([
      { orderId: "ord_gone", reason: "contractor_unavailable" },
      { orderId: "ord_night", reason: "no_feasible_slot" },
      { orderId: "ord_roof", reason: "no_contractor" },
    ]);
  });

  it("leaves every job untried when the time limit passed before the planning began", () => {
    const none = untriedDay(jobs);
    expect(none.search).toEqual({ iterations: 0, stopped: "time_limit_construction" });
    expect(none.routes).toEqual([]);
    expect(none.unassigned).toEqual(jobs.map((j) => ({ orderId: j.orderId, reason: "time_limit" })));
  });

  it("returns what the construction placed when the time limit passes during it, the rest as time_limit", () => {
    // The clock reads the deadline from its third reading on: the construction places two jobs (it reads
    // the clock before each), then stops.
    let reads = 0;
    const cut = planDay(jobs, contractors, { seed: 1, iterations: 200, now: () => reads++, deadline: 2 });
    expect(cut.search).toEqual({ iterations: 0, stopped: "time_limit_construction" });
    const placed = cut.routes.flatMap((r) => r.stops.map((s) => s.orderId));
    expect(placed).toHaveLength(2);
    const reasons = new Map(cut.unassigned.map((u) => [u.orderId, u.reason]));
    expect(reasons.get("ord_roof")).toBe("no_contractor");
    expect(reasons.get("ord_gone")).toBe("contractor_unavailable");
    // the two solver jobs not reached: never tried, so not "no_feasible_slot"
    const untried = ["ord_a", "ord_b", "ord_pinned", "ord_night"].filter((id) => !placed.includes(id));
    expect(untried.map((id) => reasons.get(id))).toEqual(["time_limit", "time_limit"]);
  });
});
