// The dispatch team's contractor directory: filters, the distance order, pages, the measured record of a
// scripted history, contractor ids in the wrong form (here and wherever a dispatcher passes one), the
// key's mode, and the sandbox leaving a contractor with its own key to it.

import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { lookupZip } from "../../src/domain/geo.js";
import { SANDBOX_STEP_MS, SandboxPlayer } from "../../src/sim/sandbox-player.js";
import type { NewContractor } from "../../src/storage/store.js";
import { OfferSweeper } from "../../src/workers/offer-sweeper.js";
import { liveContractor, testRecord } from "../helpers/fixtures.js";
import { createHarness, type Harness, ORDER_PATH } from "../helpers/harness.js";
import { expectProblem } from "../helpers/security-suite.js";

const LIST = "/api/dispatcher/v1/contractors";
const ASSIGN = "/api/dispatcher/v1/orders/assign";
const POOL = "/api/dispatcher/v1/contractors/status";

/** A live contractor based at a ZIP's centroid (none: base unknown). */
function based(id: string, name: string, zip: string | null, extra: Partial<NewContractor> = {}) {
  const at = zip ? lookupZip(zip) : undefined;
  return liveContractor({
    id,
    name,
    homeZip: zip,
    lat: at?.lat ?? null,
    lon: at?.lon ?? null,
    ...extra,
  });
}

interface Item {
  contractor_id: string;
  name: string;
  distance_miles: number | null;
  status: string;
  capacity: Record<string, number>;
  verification: Record<string, string | null>;
  record: Record<string, number | null>;
}

async function list(h: Harness, key: string, query: string) {
  const res = await h.get(`${LIST}?${query}`, { "x-api-key": key });
  expect(res.statusCode, res.body).toBe(200);
  return res.json() as { contractors: Item[]; next_cursor: string | null };
}

const ids = (page: { contractors: Item[] }) => page.contractors.map((c) => c.contractor_id);

describe("the contractor directory", () => {
  let h: Harness;
  let live: string;
  let test: string;
  const inDays = (days: number) => new Date(Date.now() + days * 86_400_000).toISOString().slice(0, 10);

  beforeAll(async () => {
    h = await createHarness();
    await h.services.store.contractors.insert(
      [
        based("ctr_dirA", "Alpha Plumbing", "94103", {
          trades: ["plumbing"],
          insuranceVerifiedUntil: inDays(200),
          licenseVerifiedUntil: inDays(10),
        }),
        based("ctr_dirB", "bravo electric", "94607", {
          trades: ["electrical"],
          insuranceVerifiedUntil: inDays(-1),
          licenseVerifiedUntil: null,
        }),
        based("ctr_dirC", "Charlie Plumbing & Heat", "90012", {
          trades: ["plumbing", "hvac"],
          active: false,
        }),
        based("ctr_dirD", "Delta 100%_Plumbing", "89501", { states: ["NV"], excluded: true }),
        based("ctr_dirE", "Echo PLUMBING", null, { trades: ["plumbing"] }),
      ],
      testRecord(),
    );
    live = await h.dispatcherKey("live");
    test = await h.dispatcherKey("test");
  });

  it("filters by trade, state, status and a case-insensitive piece of the name, ordered by name bytes then id", async () => {
    expect(ids(await list(h, live, ""))).toEqual([
      "ctr_dirA",
      "ctr_dirC",
      "ctr_dirD",
      "ctr_dirE",
      "ctr_dirB",
    ]);
    expect(ids(await list(h, live, "trade=plumbing"))).toEqual([
      "ctr_dirA",
      "ctr_dirC",
      "ctr_dirD",
      "ctr_dirE",
    ]);
    expect(ids(await list(h, live, "trade=HVAC"))).toEqual(["ctr_dirC", "ctr_dirD"]); // D: liveContractor's hvac
    expect(ids(await list(h, live, "state=nv"))).toEqual(["ctr_dirD"]);
    expect(ids(await list(h, live, "status=active"))).toEqual(["ctr_dirA", "ctr_dirE", "ctr_dirB"]);
    expect(ids(await list(h, live, "status=inactive"))).toEqual(["ctr_dirC"]);
    expect(ids(await list(h, live, "status=excluded"))).toEqual(["ctr_dirD"]);
    expect(ids(await list(h, live, "name=plumb"))).toEqual(["ctr_dirA", "ctr_dirC", "ctr_dirD", "ctr_dirE"]);
    // LIKE's wildcards are matched as themselves.
    expect(ids(await list(h, live, `name=${encodeURIComponent("100%_")}`))).toEqual(["ctr_dirD"]);
    expect(ids(await list(h, live, `name=${encodeURIComponent("%")}`))).toEqual(["ctr_dirD"]);
    expect(ids(await list(h, live, "name=a_p"))).toEqual([]); // "_" unescaped would match "Alpha Plumbing"
    expect(ids(await list(h, live, "trade=plumbing&state=CA&status=active"))).toEqual([
      "ctr_dirA",
      "ctr_dirE",
    ]);
  });

  it("shows standing, capacity and verification dates with their flags", async () => {
    const byId = new Map((await list(h, live, "")).contractors.map((c) => [c.contractor_id, c]));
    expect(byId.get("ctr_dirA")).toMatchObject({
      name: "Alpha Plumbing",
      status: "active",
      capacity: { max_active_jobs: 50, in_use: 0, free: 50, open_jobs: 0, pending_offers: 0 },
      verification: {
        insurance_verified_until: inDays(200),
        insurance: "verified",
        license_verified_until: inDays(10),
        license: "expiring",
      },
      record: {
        offers_received: 0,
        acceptance_rate: null,
        completion_rate: null,
        average_lateness_minutes: null,
      },
    });
    expect(byId.get("ctr_dirB")?.verification).toMatchObject({
      insurance_verified_until: inDays(-1),
      insurance: "expired",
      license_verified_until: null,
      license: "not_verified",
    });
    expect(byId.get("ctr_dirC")?.status).toBe("inactive");
    expect(byId.get("ctr_dirD")?.status).toBe("excluded");
  });

  it("places each contractor's base (its coordinates and service radius) for the dispatch team's map", async () => {
    const byId = new Map(
      (await list(h, live, "")).contractors.map((c) => [
        c.contractor_id,
        c as Item & Record<string, unknown>,
      ]),
    );
    expect(byId.get("ctr_dirA")).toMatchObject({
      base_zip: "94103",
      base_coordinates: { lat: 37.7725, lon: -122.4147 },
      service_radius_miles: 40,
    });
    expect(byId.get("ctr_dirD")?.base_coordinates).toEqual({
      lat: lookupZip("89501")?.lat,
      lon: lookupZip("89501")?.lon,
    });
    expect(byId.get("ctr_dirE")?.base_coordinates).toBeNull(); // base unknown
    const one = await h.get(`${LIST}/ctr_dirA`, { "x-api-key": live });
    expect(one.json().base_coordinates).toEqual({ lat: 37.7725, lon: -122.4147 });
  });

  it("sorts by distance from a ZIP or a point, unknown bases last, and keeps those within radius_miles", async () => {
    const near = await list(h, live, "zip=94103");
    expect(ids(near)).toEqual(["ctr_dirA", "ctr_dirB", "ctr_dirD", "ctr_dirC", "ctr_dirE"]);
    const miles = near.contractors.map((c) => c.distance_miles);
    expect(miles[0]).toBe(0);
    expect(miles[1]).toBeGreaterThan(3);
    expect(miles[1]).toBeLessThan(15); // Oakland
    expect(miles[2]).toBeGreaterThan(150);
    expect(miles[2]).toBeLessThan(250); // Reno
    expect(miles[3]).toBeGreaterThan(300);
    expect(miles[3]).toBeLessThan(400); // Los Angeles
    expect(miles[4]).toBeNull();
    expect(ids(await list(h, live, "zip=94103&radius_miles=50"))).toEqual(["ctr_dirA", "ctr_dirB"]);
    expect(ids(await list(h, live, "zip=94103&radius_miles=250&trade=plumbing"))).toEqual([
      "ctr_dirA",
      "ctr_dirD",
    ]);
    const sf = lookupZip("94103");
    const byPoint = await list(h, live, `lat=${sf?.lat}&lon=${sf?.lon}&radius_miles=400`);
    expect(ids(byPoint)).toEqual(["ctr_dirA", "ctr_dirB", "ctr_dirD", "ctr_dirC"]);
    // Without a location every distance is null.
    expect((await list(h, live, "")).contractors.every((c) => c.distance_miles === null)).toBe(true);
  });

  it("pages through either order with next_cursor, and refuses a cursor of the other order", async () => {
    for (const query of ["", "zip=94103"]) {
      const all = ids(await list(h, live, query));
      const seen: string[] = [];
      let cursor: string | null = null;
      let pages = 0;
      do {
        const page = await list(h, live, `${query}&limit=2${cursor ? `&cursor=${cursor}` : ""}`);
        expect(page.contractors.length).toBeLessThanOrEqual(2);
        seen.push(...ids(page));
        cursor = page.next_cursor;
        pages++;
      } while (cursor);
      expect(seen).toEqual(all);
      expect(pages).toBe(3);
    }
    const byName = (await list(h, live, "limit=1")).next_cursor as string;
    const body = expectProblem(
      await h.get(`${LIST}?zip=94103&cursor=${byName}`, { "x-api-key": live }),
      422,
      "validation_failed",
    );
    expect(body.errors).toEqual([{ field: "cursor", message: "is not a cursor this API returned" }]);
  });

  it("answers 422 naming the field for a radius without a location, an unknown ZIP, or half a point", async () => {
    for (const [query, field] of [
      ["radius_miles=10", "radius_miles"],
      ["zip=00000", "zip"],
      ["lat=37.7", "lon"],
      ["zip=94103&lat=1&lon=1", "zip"],
      ["status=retired", "status"],
      ["trade=carpentry", "trade"],
    ] as const) {
      const body = expectProblem(
        await h.get(`${LIST}?${query}`, { "x-api-key": live }),
        422,
        "validation_failed",
      );
      expect(body.errors[0].field, query).toBe(field);
    }
  });

  it("reads one contractor, and says which form a contractor id takes wherever a dispatcher passes one", async () => {
    const one = await h.get(`${LIST}/ctr_dirA`, { "x-api-key": live });
    expect(one.statusCode, one.body).toBe(200);
    expect(one.json()).toMatchObject({ contractor_id: "ctr_dirA", name: "Alpha Plumbing", held_orders: [] });
    expectProblem(await h.get(`${LIST}/ctr_nosuch1`, { "x-api-key": live }), 404, "not_found");
    for (const wrong of [
      "cref-4kZ0pQ7vXw2mN8rT1yB6cD",
      "cref_4kZ0pQ7vXw2mN8rT1yB6cD",
      "garbage",
      "ctr_",
      "ctr_a-b",
    ]) {
      const body = expectProblem(
        await h.get(`${LIST}/${wrong}`, { "x-api-key": live }),
        422,
        "validation_failed",
      );
      expect(body.errors).toEqual([{ field: "contractor_id", message: expect.stringContaining("ctr_") }]);
      if (wrong.startsWith("cref")) expect(body.errors[0].message).toMatch(/contractor_ref handle/);
    }
    const assign = expectProblem(
      await h.post(
        ASSIGN,
        {
          order_id: "ord_0VberZOdAb12Cd34Ef56",
          contractor_id: "cref_4kZ0pQ7vXw2mN8rT1yB6cD",
          reason: "asked for",
        },
        { "x-api-key": live },
      ),
      422,
      "validation_failed",
    );
    expect(assign.errors).toEqual([
      { field: "contractor_id", message: expect.stringMatching(/ctr_.*not a contractor_ref handle/) },
    ]);
    const pool = expectProblem(
      await h.post(
        POOL,
        { contractor_id: "Alpha Plumbing", action: "exclude", reason: "x" },
        { "x-api-key": live },
      ),
      422,
      "validation_failed",
    );
    expect(pool.errors[0]).toMatchObject({
      field: "contractor_id",
      message: expect.stringContaining("ctr_"),
    });
    // Well formed but unknown: 404, as before.
    expectProblem(
      await h.post(
        POOL,
        { contractor_id: "ctr_nosuch1", action: "exclude", reason: "x" },
        { "x-api-key": live },
      ),
      404,
      "not_found",
    );
  });

  it("shows a test key the sandbox pool and a live key the live pool, never the other", async () => {
    const sandbox = await list(h, test, "trade=plumbing&state=TX&limit=200");
    expect(sandbox.contractors.length).toBeGreaterThan(0);
    expect(sandbox.contractors.every((c) => c.name.startsWith("Sandbox "))).toBe(true);
    expect(ids(await list(h, test, "name=alpha"))).toEqual([]);
    const sandboxId = sandbox.contractors[0]?.contractor_id as string;
    expect((await h.get(`${LIST}/${sandboxId}`, { "x-api-key": test })).statusCode).toBe(200);
    expectProblem(await h.get(`${LIST}/${sandboxId}`, { "x-api-key": live }), 404, "not_found");
    expectProblem(await h.get(`${LIST}/ctr_dirA`, { "x-api-key": test }), 404, "not_found");
    expect(ids(await list(h, live, "zip=78701&radius_miles=20"))).toEqual([]);
    // Callers' keys are refused.
    expectProblem(
      await h.get(LIST, { "x-api-key": await h.key("acme", "live") }),
      403,
      "key_kind_not_allowed",
    );
  });
});

describe("the measured record", () => {
  it("counts offers, acceptance, completion and lateness from a scripted history", async () => {
    const h = await createHarness();
    // Offers go to `best` first: nearest, best rated, cheapest, quickest; `spare` takes what it passes on.
    await h.services.store.contractors.insert(
      [
        based("ctr_best", "Best Plumbing", "94103", {
          rating: 5,
          hourlyRateCents: 9_000,
          responseMinutes: 10,
        }),
        based("ctr_spare", "Spare Plumbing", "94607", {
          rating: 3,
          hourlyRateCents: 20_000,
          responseMinutes: 600,
        }),
      ],
      testRecord(),
    );
    await h.services.pool.load();
    const caller = await h.key("acme", "live");
    const dispatcher = await h.dispatcherKey("live");
    const issue = async (contractorId: string) =>
      (
        await h.services.keys.issue({
          accountName: "crew",
          mode: "live",
          actor: "operator:test",
          kind: "contractor",
          contractorId,
        })
      ).key;
    const best = await issue("ctr_best");
    // The service's clock, moved by the script (every command reads it).
    let clock = Date.parse("2026-03-02T15:00:00.000Z");
    h.services.now = () => new Date(clock);
    const minutes = (n: number) => {
      clock += n * 60_000;
    };

    const order = async () => {
      const res = await h.post(
        ORDER_PATH,
        { trade: "plumbing", location: { state: "CA", zip: "94103" }, description: "Leak" },
        { "x-api-key": caller },
      );
      expect(res.statusCode, res.body).toBe(200);
      const id = res.json().order_id as string;
      expect((await h.services.store.orders.byIds([id]))[0]?.contractor_id).toBe("ctr_best");
      return id;
    };
    const offerOf = async (orderId: string) =>
      (await h.services.store.orders.offersOf(orderId)).find((o) => o.status === "pending")?.id as string;
    const as = (key: string, path: string, body: Record<string, unknown>) =>
      h.post(`/api/contractor/v1/${path}`, body, { "x-api-key": key }).then((res) => {
        expect(res.statusCode, res.body).toBe(200);
      });
    const progress = (orderId: string, body: Record<string, unknown>) =>
      as(best, "jobs/status", { order_id: orderId, ...body });

    // 1: accepted; en route promising 30 minutes, on site after 40 (10 late); completed.
    const o1 = await order();
    await as(best, "offers/accept", { offer_id: await offerOf(o1) });
    await progress(o1, { status: "en_route", eta_minutes: 30 });
    minutes(40);
    await progress(o1, { status: "on_site" });
    await progress(o1, { status: "completed", final_cost_cents: 30_000 });
    // 2: accepted; promising 30, on site after 20 (early: 0 late); could not complete.
    const o2 = await order();
    await as(best, "offers/accept", { offer_id: await offerOf(o2) });
    await progress(o2, { status: "en_route", eta_minutes: 30 });
    minutes(20);
    await progress(o2, { status: "on_site" });
    await progress(o2, { status: "cannot_complete", reason: "part missing" });
    // 4: left unanswered past its deadline; the job goes to spare.
    const o4 = await order();
    minutes(120);
    expect(await new OfferSweeper(h.services).tick()).toBe(1);
    // 3: declined; the job goes to spare.
    const o3 = await order();
    await as(best, "offers/decline", { offer_id: await offerOf(o3), reason: "booked" });
    // 5: accepted and still to do.
    const o5 = await order();
    await as(best, "offers/accept", { offer_id: await offerOf(o5) });
    // 6: accepted, then given to spare by a dispatcher: it leaves best's record (but its offer stays).
    const o6 = await order();
    await as(best, "offers/accept", { offer_id: await offerOf(o6) });
    const moved = await h.post(
      ASSIGN,
      { order_id: o6, contractor_id: "ctr_spare", reason: "best fell ill" },
      { "x-api-key": dispatcher },
    );
    expect(moved.statusCode, moved.body).toBe(200);

    const page = await list(h, dispatcher, "");
    const [b, s] = page.contractors;
    expect(b).toMatchObject({
      contractor_id: "ctr_best",
      capacity: { in_use: 1, open_jobs: 1, pending_offers: 0 },
      record: {
        offers_received: 6,
        offers_accepted: 4,
        offers_declined: 1,
        offers_expired: 1,
        acceptance_rate: 0.6667,
        jobs_completed: 1,
        jobs_cannot_complete: 1,
        completion_rate: 0.5,
        arrivals: 2,
        late_arrivals: 1,
        average_lateness_minutes: 5,
      },
    });
    expect(s).toMatchObject({
      contractor_id: "ctr_spare",
      capacity: { in_use: 3, open_jobs: 1, pending_offers: 2 },
      record: { offers_received: 2, offers_accepted: 0, acceptance_rate: null, arrivals: 0 },
    });
    const detail = (await h.get(`${LIST}/ctr_spare`, { "x-api-key": dispatcher })).json();
    expect(detail.record).toEqual(s?.record);
    expect(
      detail.held_orders.map((o: { order_id: string; status: string }) => [o.order_id, o.status]).sort(),
    ).toEqual(
      [
        [o3, "offered"],
        [o4, "offered"],
        [o6, "accepted"],
      ].sort(),
    );
    const mine = (await h.get(`${LIST}/ctr_best`, { "x-api-key": dispatcher })).json();
    expect(mine.held_orders).toEqual([expect.objectContaining({ order_id: o5, status: "accepted" })]);
    // o1 and o2 are closed, and no longer held.
    expect([o1, o2].some((id) => mine.held_orders.some((o: { order_id: string }) => o.order_id === id))).toBe(
      false,
    );
  });
});

describe("the sandbox", () => {
  it("no longer plays a contractor once it has a key of its own, and plays it again once the key is revoked", async () => {
    const h = await createHarness();
    const job = (state: string, zip: string) => ({
      trade: "locksmith",
      location: { state, zip },
      description: "Locked out",
    });
    const place = async (state: string, zip: string) => {
      const res = await h.post(ORDER_PATH, job(state, zip), { "x-api-key": h.sandboxKey });
      expect(res.statusCode, res.body).toBe(200);
      const id = res.json().order_id as string;
      const [row] = await h.services.store.orders.byIds([id]);
      return { id, contractor: row?.contractor_id as string };
    };
    const statusOf = async (id: string) => (await h.services.store.orders.byIds([id]))[0]?.status;
    // One round of the simulated contractors, each a step after the last.
    let round = 0;
    const play = () => {
      const at = new Date(Date.now() + ++round * (SANDBOX_STEP_MS + 500));
      return new SandboxPlayer({ ...h.services, now: () => at }).tick();
    };

    const handPlayed = await place("VT", "05401");
    const simulated = await place("WY", "82001");
    const key = await h.services.keys.issue({
      accountName: "integrator",
      mode: "test",
      actor: "operator:test",
      kind: "contractor",
      contractorId: handPlayed.contractor,
    });
    await play();
    expect(await statusOf(simulated.id)).toBe("accepted");
    expect(await statusOf(handPlayed.id)).toBe("offered"); // left to its own key
    // The contractor answers itself, then reports; the simulator does not move its job on.
    const offer = (await h.services.store.orders.offersOf(handPlayed.id))[0];
    const accepted = await h.post(
      "/api/contractor/v1/offers/accept",
      { offer_id: offer?.id },
      { "x-api-key": key.key },
    );
    expect(accepted.statusCode, accepted.body).toBe(200);
    await play();
    expect(await statusOf(handPlayed.id)).toBe("accepted");
    expect(await statusOf(simulated.id)).toBe("en_route");
    // Revoked: the simulator takes the contractor back.
    await h.services.keys.revoke(key.id, "operator:test");
    await play();
    expect(await statusOf(handPlayed.id)).toBe("en_route");
  });
});

describe("the contractor directory's shifts and arrivals", () => {
  // Wednesday 14 January 2099, 15:00 in New York (20:00 UTC), the services' clock held there (a date
  // ahead: the store keeps the time off not over by the wall clock). Held, not running on: the order's
  // arrive-by and each contractor's earliest start are read to the minute, and a slow machine can take
  // over a minute to set the scene.
  const START = Date.parse("2099-01-14T20:00:00Z");
  let h: Harness;
  let dispatcher: string;
  let account: string;
  let orderId: string;

  const shiftsOf = async (query: string) => {
    const res = await h.get(`${LIST}?${query}`, { "x-api-key": dispatcher });
    expect(res.statusCode, res.body).toBe(200);
    const page = res.json() as {
      contractors: Array<{ contractor_id: string; shift: unknown; arrival: unknown }>;
    };
    return new Map(page.contractors.map((c) => [c.contractor_id, c]));
  };

  beforeAll(async () => {
    h = await createHarness({}, {}, { now: () => new Date(START) });
    const ny = (id: string, zip: string, hours: string | null) =>
      based(id, id, zip, { states: ["NY"], trades: ["plumbing"], serviceRadiusMiles: 100, hours });
    await h.services.store.contractors.insert(
      [
        ny("ctr_shiftTomorrow", "10001", "thu 07:00-17:00"),
        ny("ctr_shiftLate", "11101", "mon-sun 07:00-22:00"),
        ny("ctr_shiftAnyHours", "10027", null),
      ],
      testRecord(),
    );
    await h.services.pool.load();
    dispatcher = await h.dispatcherKey("live");
    account = await h.key("acme-ny", "live");
    const off = (contractor_id: string, start: string, end: string) =>
      h.post(
        "/api/dispatcher/v1/time-off",
        { contractor_id, start, end, reason: "dentist" },
        { "x-api-key": dispatcher },
      );
    // Off from 14:00 today to 09:00 tomorrow; an hour off from 16:00 today.
    for (const [id, start, end] of [
      ["ctr_shiftAnyHours", "2099-01-14T19:00:00Z", "2099-01-15T14:00:00Z"],
      ["ctr_shiftLate", "2099-01-14T21:00:00Z", "2099-01-14T22:00:00Z"],
    ] as const) {
      const res = await off(id, start, end);
      expect(res.statusCode, res.body).toBe(200);
    }
    const placed = await h.post(
      ORDER_PATH,
      {
        trade: "plumbing",
        urgency: "urgent",
        location: { state: "NY", zip: "10001", city: "New York", address: "350 5th Ave" },
        description: "Burst pipe in the lobby",
      },
      { "x-api-key": account },
    );
    expect(placed.statusCode, placed.body).toBe(200);
    orderId = placed.json().order_id;
  });

  afterAll(async () => {
    await h?.close();
  });

  it("gives each contractor's shift now: at work until when, or off (hours or time off) and back when, with its time off today", async () => {
    const byId = await shiftsOf("state=NY&zip=10001");
    expect(byId.get("ctr_shiftTomorrow")).toMatchObject({
      shift: {
        on_shift: false,
        off_reason: "hours",
        ends_at: null,
        next_on_shift_at: "2099-01-15T12:00:00.000Z",
        time_off_today: [],
      },
      arrival: null,
    });
    expect(byId.get("ctr_shiftLate")).toMatchObject({
      shift: {
        on_shift: true,
        off_reason: null,
        ends_at: "2099-01-14T21:00:00.000Z", // its hour off starts
        next_on_shift_at: null,
        time_off_today: [{ start: "2099-01-14T21:00:00.000Z", end: "2099-01-14T22:00:00.000Z" }],
      },
    });
    expect(byId.get("ctr_shiftAnyHours")).toMatchObject({
      shift: {
        on_shift: false,
        off_reason: "time_off",
        ends_at: null,
        next_on_shift_at: "2099-01-15T14:00:00.000Z",
        time_off_today: [{ start: "2099-01-14T19:00:00.000Z", end: "2099-01-15T14:00:00.000Z" }],
      },
    });
  });

  it("with order_id, says whether each can be on site by the order's arrive-by, and its earliest start there", async () => {
    const [order] = await h.services.store.orders.byIds([orderId]);
    expect(order?.arrive_by?.slice(0, 16)).toBe("2099-01-15T04:00"); // urgent: 8 hours
    const byId = await shiftsOf(`state=NY&zip=10001&order_id=${orderId}`);
    // Late: its hours start tomorrow at 07:00; back from time off tomorrow at 09:00.
    expect(byId.get("ctr_shiftTomorrow")?.arrival).toEqual({
      fits: false,
      earliest_at: "2099-01-15T12:00:00.000Z",
    });
    expect(byId.get("ctr_shiftAnyHours")?.arrival).toEqual({
      fits: false,
      earliest_at: "2099-01-15T14:00:00.000Z",
    });
    // On time: the job does not fit before its hour off, so it starts when that ends.
    expect(byId.get("ctr_shiftLate")?.arrival).toEqual({
      fits: true,
      earliest_at: "2099-01-14T22:00:00.000Z",
    });
  });

  it("refuses an order_id of no order of the key's mode, on the field", async () => {
    const missing = await h.get(`${LIST}?order_id=ord_nothing`, { "x-api-key": dispatcher });
    expectProblem(missing, 422, "validation_failed");
    expect(missing.json().errors).toEqual([expect.objectContaining({ field: "order_id" })]);
    const sandbox = await h.dispatcherKey("test");
    const otherMode = await h.get(`${LIST}?order_id=${orderId}`, { "x-api-key": sandbox });
    expectProblem(otherMode, 422, "validation_failed");
  });
});
