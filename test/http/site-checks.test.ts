// Check-in and check-out (issue 32): "on site" and "completed" carry the phone's position; the order, the
// contractor's job and the dispatch team's view state the distance to the site and flag a far one, which
// is accepted, never refused; the check is sealed in the step's audit record. On SQLite, and on
// PostgreSQL in the postgres project.

import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { acceptedJob, crewOf } from "../helpers/crew.js";
import { createHarness, type Harness } from "../helpers/harness.js";
import { expectProblem } from "../helpers/security-suite.js";

const REPORT = "/api/contractor/v1/jobs/status";
/** 94103's centroid, San Francisco. */
const SITE = { lat: 37.7725, lon: -122.4147 };
/** Oakland, about 8 miles from it. */
const OAKLAND = { lat: 37.8044, lon: -122.2712, accuracy_m: 30 };

let h: Harness;
let caller: string;
let dispatcher: string;
let crew: string;

/** A plumbing job at `location`, accepted by the crew's plumber. */
const jobAt = (location: Record<string, string>) =>
  acceptedJob(h, caller, crew, { trade: "plumbing", location, description: "Leak under the sink" });

const report = (body: Record<string, unknown>) => h.post(REPORT, body, { "x-api-key": crew });

beforeAll(async () => {
  h = await createHarness({ CHECK_IN_TOLERANCE_MILES: "3" });
  ({ caller, dispatcher, holderKey: crew } = await crewOf(h));
});

afterAll(async () => h.close());

describe("a job checked in at the site and out far from it", () => {
  let orderId: string;

  beforeAll(async () => {
    orderId = await jobAt({ state: "CA", zip: "94103", address: "1 Market St" });
    expect((await report({ order_id: orderId, status: "en_route", eta_minutes: 20 })).statusCode).toBe(200);
  });

  it("accepts the check-in with its position and states the distance, unflagged", async () => {
    const res = await report({
      order_id: orderId,
      status: "on_site",
      position: { lat: 37.7731, lon: -122.4152, accuracy_m: 8 },
    });
    expect(res.statusCode, res.body).toBe(200);
    const job = res.json();
    expect(job.status).toBe("on_site");
    expect(job.check_in).toMatchObject({
      position: { lat: 37.7731, lon: -122.4152, accuracy_m: 8 },
      site_point: { ...SITE, source: "zip" },
      tolerance_miles: 3,
      flagged: false,
    });
    expect(job.check_in.distance_miles).toBeLessThan(0.1);
    expect(job.check_out).toBeNull();
  });

  it("accepts a check-out eight miles away and flags it", async () => {
    const res = await report({
      order_id: orderId,
      status: "completed",
      final_cost_cents: 21_000,
      position: OAKLAND,
    });
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json().status).toBe("completed");
    expect(res.json().check_out).toMatchObject({ position: OAKLAND, flagged: true });
    expect(res.json().check_out.distance_miles).toBeGreaterThan(7);
  });

  it("shows both checks to the account and to the dispatch team", async () => {
    const mine = (await h.get(`/api/dispatch/v1/orders/${orderId}`, { "x-api-key": caller })).json();
    expect(mine.check_in.flagged).toBe(false);
    expect(mine.check_out.flagged).toBe(true);
    const board = await h.get(`/api/dispatcher/v1/orders?status=completed`, { "x-api-key": dispatcher });
    expect(board.statusCode, board.body).toBe(200);
    const row = board.json().orders.find((o: { order_id: string }) => o.order_id === orderId);
    expect(row.check_out).toMatchObject({ flagged: true, position: OAKLAND });
  });

  it("seals each check with its step, and the seals verify", async () => {
    const res = await h.get(`/api/audit?order_id=${orderId}&limit=200`, { "x-api-key": caller });
    expect(res.statusCode, res.body).toBe(200);
    const steps = (
      res.json().records as Array<{ kind: string; seal: string; disclosed: Record<string, unknown> }>
    ).filter((r) => r.kind === "order.status_changed");
    const arrive = steps.find((r) => r.disclosed.to === "on_site");
    const done = steps.find((r) => r.disclosed.to === "completed");
    expect(arrive?.disclosed.site_check).toMatchObject({ position: { lat: 37.7731 }, flagged: false });
    expect(arrive?.disclosed).not.toHaveProperty("position");
    expect(done?.disclosed).toMatchObject({ final_cost_cents: 21_000, site_check: { flagged: true } });
    for (const r of [arrive, done]) {
      expect((await h.get(`/api/attest/verify/${r?.seal}`)).statusCode).toBe(200);
    }
  });
});

/** A job of `location` with its contractor on the way. */
async function jobOnTheWay(location: Record<string, string>): Promise<string> {
  const id = await jobAt(location);
  expect((await report({ order_id: id, status: "en_route", eta_minutes: 20 })).statusCode).toBe(200);
  return id;
}

describe("checks without a position or a mapped site", () => {
  it("records the step with no position, unflagged", async () => {
    const id = await jobOnTheWay({ state: "CA", zip: "94103" });
    const res = await report({ order_id: id, status: "on_site" });
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json().check_in).toMatchObject({ position: null, distance_miles: null, flagged: false });
  });

  it("measures to the city's centroid, with three times the tolerance, when the order names no ZIP", async () => {
    const id = await jobOnTheWay({ state: "CA", city: "San Francisco" });
    const res = await report({ order_id: id, status: "on_site", position: OAKLAND });
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json().check_in).toMatchObject({ site_point: { source: "city" }, tolerance_miles: 9 });
  });
});

describe("a bad position", () => {
  let orderId: string;
  beforeAll(async () => {
    orderId = await jobOnTheWay({ state: "CA", zip: "94103" });
  });

  it.each([
    [{ lat: 91, lon: 0 }, "position.lat"],
    [{ lat: 37, lon: -181 }, "position.lon"],
    [{ lat: 37, lon: -122, accuracy_m: -1 }, "position.accuracy_m"],
    [{ lat: "37", lon: -122 }, "position.lat"],
    [{ lat: 37 }, "position.lon"],
  ])("%j is refused naming %s, and the job does not move", async (position, field) => {
    const res = await report({ order_id: orderId, status: "on_site", position });
    expectProblem(res, 422, "validation_failed");
    expect(res.json().errors.map((e: { field: string }) => e.field)).toContain(field);
    const job = (await h.get("/api/contractor/v1/jobs", { "x-api-key": crew }))
      .json()
      .jobs.find((j: { order_id: string }) => j.order_id === orderId);
    expect(job.status).toBe("en_route");
    expect(job.check_in).toBeNull();
  });

  it("is refused on a step that is not a check (en_route)", async () => {
    const id = await jobAt({ state: "CA", zip: "94103" });
    const res = await report({ order_id: id, status: "en_route", eta_minutes: 5, position: SITE });
    expectProblem(res, 422, "validation_failed");
  });
});
