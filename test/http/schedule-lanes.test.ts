// The day's schedule board (issue 31): dispatcherScheduleLanes reads a page of contractor lanes for a date,
// each with its working hours and time off within the day and the jobs it holds as blocks (status and
// service-level standing), drawn in the lane's own zone or one asked for; sorted by name or load, paged,
// filtered; the dispatcher order list carries the names and clocks the console shows. The services'
// clock runs at 10:00 in San Francisco two days from now, so the day has room whatever the hour.

import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { lookupZip } from "../../src/domain/geo.js";
import { greatCircleTravel } from "../../src/domain/travel-time.js";
import { liveContractor, testRecord } from "../helpers/fixtures.js";
import { createHarness, type Harness, ORDER_PATH } from "../helpers/harness.js";

const LANES = "/api/dispatcher/v1/schedule/lanes";
const PLUMBER = "ctr_livelanesplumber";
const HVAC = "ctr_livelaneshvac";
const LA = "America/Los_Angeles";
const SERVICE_NOW = (() => {
  const d = new Date();
  return Date.UTC(d.getUTCFullYear(), d.getUTCMonth(), d.getUTCDate() + 2, 18);
})();
const OFFSET_MS = SERVICE_NOW - Date.now();
const DAY = new Date(SERVICE_NOW).toLocaleDateString("en-CA", { timeZone: LA });

/** Moves the services' clock on (the service-level clocks' standing as time passes). */
let later = 0;
let h: Harness;
let dispatcherKey: string;
let testDispatcherKey: string;
let acceptedId: string;

interface LanesAnswer {
  total: number;
  time_zone: string | null;
  lanes: Array<{
    contractor_id: string;
    name: string;
    time_zone: string;
    base_time_zone: string;
    day: { start: string; end: string };
    working: Array<{ start: string; end: string }>;
    time_off: Array<{ start: string; end: string }>;
    held_minutes: number;
    jobs: Array<{
      order_id: string;
      status: string;
      start: string;
      end: string;
      account_name: string | null;
      planned: boolean;
      service_level: string | null;
    }>;
  }>;
  next_cursor: string | null;
}

beforeAll(async () => {
  h = await createHarness({}, {}, { now: () => new Date(Date.now() + OFFSET_MS + later) });
  await h.services.store.contractors.insert(
    [
      liveContractor({ id: PLUMBER, name: "Bay Plumbing Co", trades: ["plumbing"] }),
      liveContractor({
        id: HVAC,
        name: "Mission Air & Heat",
        trades: ["hvac"],
        hours: "mon-sun 07:00-19:00",
      }),
    ],
    testRecord(),
  );
  await h.services.pool.load();
  const accountKey = await h.key("acme-properties", "live");
  dispatcherKey = await h.dispatcherKey("live");
  testDispatcherKey = await h.dispatcherKey("test");
  const plumberKey = (
    await h.services.keys.issue({
      accountName: "bay-plumbing",
      mode: "live",
      actor: "operator:test",
      kind: "contractor",
      contractorId: PLUMBER,
    })
  ).key;
  const placed = await h.post(
    ORDER_PATH,
    {
      trade: "plumbing",
      urgency: "urgent",
      location: { state: "CA", zip: "94110", city: "San Francisco", address: "3000 24th St" },
      description: "Kitchen sink backing up",
    },
    { "x-api-key": accountKey },
  );
  expect(placed.statusCode, placed.body).toBe(200);
  acceptedId = placed.json().order_id as string;
  const offers = (await h.get("/api/contractor/v1/offers", { "x-api-key": plumberKey })).json()
    .offers as Array<{ offer_id: string; order_id: string }>;
  const offer = offers.find((o) => o.order_id === acceptedId);
  const accepted = await h.post(
    "/api/contractor/v1/offers/accept",
    { offer_id: offer?.offer_id },
    { "x-api-key": plumberKey },
  );
  expect(accepted.statusCode, accepted.body).toBe(200);
  const off = await h.post(
    "/api/dispatcher/v1/time-off",
    {
      contractor_id: PLUMBER,
      start: `${DAY}T15:00:00-08:00`,
      end: `${DAY}T16:00:00-08:00`,
      reason: "dentist",
    },
    { "x-api-key": dispatcherKey },
  );
  expect(off.statusCode, off.body).toBe(200);
  await h.services.pool.load();
});

afterAll(async () => {
  await h?.close();
});

async function lanes(query: string, key = dispatcherKey): Promise<LanesAnswer> {
  const res = await h.get(`${LANES}?${query}`, { "x-api-key": key });
  expect(res.statusCode, res.body).toBe(200);
  return res.json() as LanesAnswer;
}

describe("dispatch.schedule_lanes", () => {
  it("each lane: its day in its own zone, its hours and time off within it, its held jobs as blocks", async () => {
    const page = await lanes(`date=${DAY}&state=CA`);
    expect(page.total).toBe(2);
    expect(page.time_zone).toBeNull();
    expect(page.lanes.map((l) => l.name)).toEqual(["Bay Plumbing Co", "Mission Air & Heat"]);
    const [plumber, hvac] = page.lanes;
    expect(plumber?.time_zone).toBe(LA);
    expect(new Date(plumber?.day.start ?? "").toLocaleTimeString("en-GB", { timeZone: LA })).toBe("00:00:00");
    // No hours stated: the whole day; off 15:00-16:00 (in winter; 16:00-17:00 in summer's time).
    expect(plumber?.working).toEqual([plumber?.day]);
    expect(plumber?.time_off).toHaveLength(1);
    expect(
      plumber?.jobs.map((j) => [j.order_id, j.status, j.account_name, j.planned, j.service_level]),
    ).toEqual([[acceptedId, "accepted", "acme-properties", false, "on_track"]]);
    const job = plumber?.jobs[0];
    const minutes = (Date.parse(job?.end ?? "") - Date.parse(job?.start ?? "")) / 60_000;
    expect(minutes).toBeGreaterThan(0);
    expect(plumber?.held_minutes).toBe(Math.round(minutes));
    // 07:00-19:00 in its zone.
    expect(hvac?.working).toHaveLength(1);
    const local = (iso: string | undefined) =>
      new Date(iso ?? "").toLocaleTimeString("en-GB", { timeZone: LA });
    expect([local(hvac?.working[0]?.start), local(hvac?.working[0]?.end)]).toEqual(["07:00:00", "19:00:00"]);
    expect(hvac?.jobs).toEqual([]);
  });

  it("draws every lane in a zone asked for; refuses one ICU does not know", async () => {
    const chicago = await lanes(`date=${DAY}&state=CA&time_zone=America/Chicago`);
    expect(chicago.time_zone).toBe("America/Chicago");
    for (const lane of chicago.lanes) {
      expect(lane.time_zone).toBe("America/Chicago");
      expect(lane.base_time_zone).toBe(LA);
      const midnight = new Date(lane.day.start).toLocaleTimeString("en-GB", { timeZone: "America/Chicago" });
      expect(midnight).toBe("00:00:00");
    }
    const bad = await h.get(`${LANES}?date=${DAY}&time_zone=Mars/Olympus`, { "x-api-key": dispatcherKey });
    expect(bad.statusCode).toBe(422);
    expect(bad.json().errors).toEqual([expect.objectContaining({ field: "time_zone" })]);
  });

  it("sorts by load and pages (a cursor from the same filters), filters by name and trade", async () => {
    const first = await lanes(`date=${DAY}&state=CA&sort=load&limit=1`);
    expect(first.total).toBe(2);
    expect(first.lanes.map((l) => l.contractor_id)).toEqual([PLUMBER]);
    const second = await lanes(`date=${DAY}&state=CA&sort=load&limit=1&cursor=${first.next_cursor}`);
    expect(second.lanes.map((l) => l.contractor_id)).toEqual([HVAC]);
    expect(second.next_cursor).toBeNull();
    const byName = await lanes(`date=${DAY}&state=CA&limit=1`);
    const rest = await lanes(`date=${DAY}&state=CA&limit=1&cursor=${byName.next_cursor}`);
    expect([...byName.lanes, ...rest.lanes].map((l) => l.contractor_id)).toEqual([PLUMBER, HVAC]);
    expect((await lanes(`date=${DAY}&name=mission`)).lanes.map((l) => l.contractor_id)).toEqual([HVAC]);
    expect((await lanes(`date=${DAY}&trade=hvac`)).lanes.map((l) => l.contractor_id)).toEqual([HVAC]);
    // A cursor of the other order is refused, not misread.
    const wrong = await h.get(`${LANES}?date=${DAY}&sort=name&cursor=${first.next_cursor}`, {
      "x-api-key": dispatcherKey,
    });
    expect(wrong.statusCode).toBe(422);
  });

  it("reads the key's own mode only", async () => {
    const sandbox = await lanes(`date=${DAY}&name=mission`, testDispatcherKey);
    expect(sandbox.lanes).toEqual([]);
    expect(sandbox.total).toBe(0);
  });

  it("the dispatcher order list names the account and the contractor and carries the clocks", async () => {
    const res = await h.get("/api/dispatcher/v1/orders?status=accepted", { "x-api-key": dispatcherKey });
    const order = (res.json().orders as Array<Record<string, unknown>>).find(
      (o) => o.order_id === acceptedId,
    );
    expect(order).toMatchObject({
      account_name: "acme-properties",
      contractor_id: PLUMBER,
      contractor_name: "Bay Plumbing Co",
    });
    const clocks = order?.service_levels as Array<{ clock: string; standing: string; deadline: string }>;
    // Urgent work: the respond clock met by the acceptance, the arrive clock running to arrive_by.
    expect(clocks.map((c) => [c.clock, c.standing])).toEqual([
      ["respond", "met"],
      ["arrive", "on_track"],
    ]);
    expect(clocks[1]?.deadline).toBe(order?.arrive_by);
  });

  it("a block is flagged at risk once 80 % of its clock's time is used, breached once its deadline passes", async () => {
    const [order] = await h.services.store.orders.byIds([acceptedId]);
    const received = Date.parse(order?.received_at ?? "");
    const deadline = Date.parse(order?.arrive_by ?? "");
    const standing = async () =>
      (await lanes(`date=${DAY}&name=bay`)).lanes[0]?.jobs.find((j) => j.order_id === acceptedId)
        ?.service_level;
    try {
      later = received + 0.85 * (deadline - received) - (Date.now() + OFFSET_MS);
      expect(await standing()).toBe("at_risk");
      later = deadline + 60_000 - (Date.now() + OFFSET_MS);
      expect(await standing()).toBe("breached");
    } finally {
      later = 0;
    }
  });
});

describe("dispatch.schedule_lanes: the drive before each job", () => {
  /** Monday 2030-06-03 08:00 in San Francisco (PDT, UTC-7). */
  const NOW = new Date("2030-06-03T15:00:00Z");
  const TUE = "2030-06-04";
  const pdt = (hour: number) => new Date(`${TUE}T${String(hour).padStart(2, "0")}:00:00-07:00`).toISOString();
  const BASE = { lat: 37.77, lon: -122.41 };

  it("the first job's drive from the contractor's base, the second's from the first job's place", async () => {
    const t = await createHarness({}, {}, { now: () => new Date(NOW) });
    try {
      const id = "ctr_livelanesdriver";
      await t.services.store.contractors.insert(
        [liveContractor({ id, name: "Drive Time Plumbing", hours: "mon-fri 08:00-17:00", ...BASE })],
        testRecord(),
      );
      await t.services.pool.load();
      const caller = await t.key("acme", "live");
      const dispatcher = await t.dispatcherKey("live");
      const book = async (zip: string, start: string) => {
        const placed = await t.post(
          ORDER_PATH,
          {
            trade: "plumbing",
            urgency: "scheduled",
            location: { state: "CA", zip, address: "1 Main St" },
            description: "Replace the water heater",
            service_window: { start: pdt(8), end: pdt(17) },
          },
          { "x-api-key": caller },
        );
        expect(placed.statusCode, placed.body).toBe(200);
        const orderId = placed.json().order_id as string;
        const assigned = await t.post(
          "/api/dispatcher/v1/orders/assign",
          { order_id: orderId, contractor_id: id, reason: "dropped on the board", start },
          { "x-api-key": dispatcher },
        );
        expect(assigned.statusCode, assigned.body).toBe(200);
        return orderId;
      };
      // San Francisco at 09:00, Oakland at 13:00 (plumbing's typical job is 2 hours).
      const sf = await book("94103", pdt(9));
      const oakland = await book("94607", pdt(13));
      const res = await t.get(`${LANES}?date=${TUE}&name=drive`, { "x-api-key": dispatcher });
      expect(res.statusCode, res.body).toBe(200);
      const jobs = (res.json() as LanesAnswer).lanes[0]?.jobs as unknown as Array<{
        order_id: string;
        start: string;
        travel_minutes: number;
        travel_start: string;
        travel_from_order_id: string | null;
      }>;
      const sfPoint = lookupZip("94103") ?? null;
      const oaklandPoint = lookupZip("94607") ?? null;
      const fromBase = Math.round(greatCircleTravel.minutes(BASE, sfPoint));
      const across = Math.round(greatCircleTravel.minutes(sfPoint, oaklandPoint));
      expect(across).toBeGreaterThan(10); // across the bay: a drive worth drawing
      const less = (minutes: number, iso: string) =>
        new Date(Date.parse(iso) - minutes * 60_000).toISOString();
      expect(jobs.map((j) => [j.order_id, j.travel_from_order_id, j.travel_minutes, j.travel_start])).toEqual(
        [
          [sf, null, fromBase, less(fromBase, pdt(9))],
          [oakland, sf, across, less(across, pdt(13))],
        ],
      );
    } finally {
      await t.close();
    }
  });
});
