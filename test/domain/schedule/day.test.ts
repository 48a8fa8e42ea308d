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

// A contractor's time off inside its shift (a dentist's hour) is a break: it works before and after it,
// and no job, nor the drive to or from one, falls in it (issue 31: the held job listed "contractor
// unavailable" for the whole day over one hour off).
describe("planDay with a break in a contractor's shift", () => {
  const BASE = { lat: 34.05, lon: -118.15 }; // about 6 miles east of HERE, where the jobs are
  const leg = greatCircleTravel.minutes(BASE, HERE) * 60_000;
  const dentist = { start: at("10:00"), end: at("11:00") };
  const bay: DayContractor = { ...contractor("ctr_bay", BASE), breaks: [dentist] };
  const jobs = [
    job("ord_a", "08:00", "12:00"),
    job("ord_b", "08:00", "12:00"),
    job("ord_c", "11:00", "14:00"),
    // Must start at 09:30, so on site until 10:30: in the hour off.
    job("ord_d", "09:30", "09:30"),
  ];
  const plan = planDay(jobs, [bay], { seed: 1, iterations: 200 });
  const stops = plan.routes.flatMap((r) => r.stops);

  it("plans jobs before and after the time off, none overlapping it with its drive", () => {
    expect(plan.routes.map((r) => r.contractorId)).toEqual(["ctr_bay"]);
    expect(stops.map((s) => s.orderId).sort()).toEqual(["ord_a", "ord_b", "ord_c"]);
    expect(plan.unassigned).toEqual([{ orderId: "ord_d", reason: "no_feasible_slot" }]);
    const before = stops.filter((s) => s.endAt.getTime() <= dentist.start.getTime());
    const after = stops.filter((s) => s.startAt.getTime() >= dentist.end.getTime());
    expect(before.length).toBeGreaterThan(0);
    expect(after.length).toBeGreaterThan(0);
    expect(before.length + after.length).toBe(stops.length);
    // Back at the base before the hour off, leaving it after.
    for (const s of before) expect(s.endAt.getTime() + leg).toBeLessThanOrEqual(dentist.start.getTime() + 1);
    for (const s of after)
      expect(s.arriveAt.getTime()).toBeGreaterThanOrEqual(dentist.end.getTime() + leg - 1);
    // One route for the contractor, its stops in time order, the drive to and from the base twice.
    const times = stops.map((s) => s.startAt.getTime());
    expect(times).toEqual([...times].sort((x, y) => x - y));
    expect(plan.travelMinutes).toBeCloseTo((4 * leg) / 60_000, 0);
  });

  it("keeps a pinned job with its contractor on either side of the time off", () => {
    const pinned = job("ord_held", "10:30", "12:00", { contractorId: "ctr_bay", pinned: true });
    const held = planDay([pinned], [bay], { seed: 1, iterations: 50 });
    expect(held.unassigned).toEqual([]);
    const stop = held.routes[0]?.stops[0];
    expect(stop?.orderId).toBe("ord_held");
    expect(stop?.startAt.getTime()).toBeGreaterThanOrEqual(dentist.end.getTime() + leg - 1);
  });

  it("counts the day's job limit over both sides of the time off", () => {
    const two = { ...bay, capacity: 2 };
    const many = [
      job("ord_1", "08:00", "09:00"),
      job("ord_2", "08:00", "12:00"),
      job("ord_3", "11:00", "15:00"),
      job("ord_4", "12:00", "16:00"),
    ];
    const limited = planDay(many, [two], { seed: 1, iterations: 100 });
    expect(limited.routes.flatMap((r) => r.stops)).toHaveLength(2);
    expect(limited.unassigned).toHaveLength(2);
  });

  it("still leaves out a contractor whose time off covers its whole shift", () => {
    const away: DayContractor = { ...bay, breaks: [{ start: at("07:00"), end: at("19:00") }] };
    const day = planDay(
      [
        job("ord_open", "09:00", "12:00"),
        job("ord_mine", "09:00", "12:00", { contractorId: "ctr_bay", pinned: true }),
      ],
      [away],
      { seed: 1, iterations: 50 },
    );
    expect(day.routes).toEqual([]);
    expect([...day.unassigned].sort((a, b) => a.orderId.localeCompare(b.orderId))).toEqual([
      { orderId: "ord_mine", reason: "contractor_unavailable" },
      { orderId: "ord_open", reason: "no_contractor" },
    ]);
  });
});
