// Availability over HTTP: the bookable windows from the contractors' calendars with their counts (never
// who), the range rules, and an order naming a window that filled meanwhile: 409 window_unavailable with
// the next free ones.

import { afterEach, describe, expect, it } from "vitest";
import { liveContractor, testRecord } from "../helpers/fixtures.js";
import { createHarness, type Harness, ORDER_PATH } from "../helpers/harness.js";

/** Monday 2030-06-03 08:00 in San Francisco (PDT, UTC-7). */
const NOW = new Date("2030-06-03T15:00:00Z");
const PATH = "/api/dispatch/v1/availability";
const WHERE = { state: "CA", zip: "94103" };
const ASK = { trade: "plumbing", location: WHERE, start_date: "2030-06-04", end_date: "2030-06-08" };

const open: Harness[] = [];
afterEach(async () => {
  for (const h of open.splice(0)) await h.close();
});

type Window = { start: string; end: string; contractors_available: number };

/** Live CA plumbers: mornings (one job at a time), afternoons, Saturday mornings; plus any extras. */
async function setup(extra: Array<Parameters<typeof liveContractor>[0]> = []) {
  const h = await createHarness({}, {}, { now: () => new Date(NOW) });
  open.push(h);
  const tag = Math.random().toString(36).slice(2, 8);
  const ids = { morning: `ctr_am${tag}`, afternoon: `ctr_pm${tag}`, saturday: `ctr_sat${tag}` };
  await h.services.store.contractors.insert(
    [
      liveContractor({ id: ids.morning, hours: "mon-fri 08:00-12:00", maxActiveJobs: 1 }),
      liveContractor({ id: ids.afternoon, hours: "mon-fri 12:00-20:00" }),
      liveContractor({ id: ids.saturday, hours: "sat 08:00-12:00" }),
      ...extra.map((o, i) => liveContractor({ id: `ctr_x${i}${tag}`, ...o })),
    ],
    testRecord(),
  );
  await h.services.pool.load();
  return { h, ids, caller: await h.key("acme", "live") };
}

async function windows(h: Harness, key: string, body: object = ASK): Promise<Window[]> {
  const res = await h.post(PATH, body, { "x-api-key": key });
  expect(res.statusCode, res.body).toBe(200);
  return res.json().windows;
}

/** A local (PDT) window of that day and those hours, in UTC. */
const pdt = (day: string, from: number, to: number) => ({
  start: new Date(`${day}T${String(from).padStart(2, "0")}:00:00-07:00`).toISOString(),
  end: new Date(`${day}T${String(to).padStart(2, "0")}:00:00-07:00`).toISOString(),
});

describe("availability", () => {
  it("lists the windows some contractor's hours can take, in UTC with the zone named, with counts", async () => {
    const { h, caller } = await setup();
    const res = await h.post(PATH, ASK, { "x-api-key": caller });
    expect(res.statusCode, res.body).toBe(200);
    const body = res.json();
    expect(body).toMatchObject({ time_zone: "America/Los_Angeles", window_hours: 4, urgency: "routine" });
    const weekdays = ["2030-06-04", "2030-06-05", "2030-06-06", "2030-06-07"].flatMap((d) => [
      { ...pdt(d, 8, 12), contractors_available: 1 },
      { ...pdt(d, 12, 16), contractors_available: 1 },
      { ...pdt(d, 16, 20), contractors_available: 1 },
    ]);
    expect(body.windows).toEqual([...weekdays, { ...pdt("2030-06-08", 8, 12), contractors_available: 1 }]);
    // Counts, never who: no contractor id or handle anywhere in the answer.
    expect(res.body).not.toMatch(/ctr_|cref[-_]/);
  });

  it("counts every contractor that could take a window", async () => {
    const { h, caller } = await setup([{ hours: null }, { hours: "sat-sun 08:00-20:00" }]);
    const all = await windows(h, caller);
    expect(all.find((w) => w.start === pdt("2030-06-04", 8, 12).start)?.contractors_available).toBe(2);
    expect(all.find((w) => w.start === pdt("2030-06-08", 8, 12).start)?.contractors_available).toBe(3);
    expect(all.find((w) => w.start === pdt("2030-06-08", 16, 20).start)?.contractors_available).toBe(2);
  });

  it("leaves out windows already begun and windows of contractors off", async () => {
    const { h, caller } = await setup();
    const today = await windows(h, caller, { ...ASK, start_date: "2030-06-03", end_date: "2030-06-03" });
    // 08:00-12:00 today began at 08:00 sharp (now): it is offered; nothing earlier exists.
    expect(today.map((w) => w.start)).toEqual(
      [pdt("2030-06-03", 8, 12), pdt("2030-06-03", 12, 16), pdt("2030-06-03", 16, 20)].map((w) => w.start),
    );
  });

  it("refuses a range longer than 14 days, not ordered, or for as-soon-as-possible work, naming the field", async () => {
    const { h, caller } = await setup();
    const cases: Array<[object, string, string]> = [
      [{ ...ASK, end_date: "2030-06-18" }, "end_date", "range_too_long"],
      [{ ...ASK, end_date: "2030-06-03" }, "end_date", "range_not_ordered"],
      [{ ...ASK, urgency: "urgent" }, "urgency", "window_not_allowed"],
      [{ ...ASK, start_date: "2030-12-01", end_date: "2030-12-02" }, "start_date", "window_too_far_ahead"],
    ];
    for (const [body, field, code] of cases) {
      const res = await h.post(PATH, body, { "x-api-key": caller });
      expect(res.statusCode, res.body).toBe(422);
      expect(res.json().errors).toEqual([expect.objectContaining({ field, code })]);
    }
    // 14 days in all is the most.
    expect((await h.post(PATH, { ...ASK, end_date: "2030-06-17" }, { "x-api-key": caller })).statusCode).toBe(
      200,
    );
    const bad = await h.post(PATH, { ...ASK, start_date: "2030-02-30" }, { "x-api-key": caller });
    expect(bad.statusCode).toBe(422);
    expect(bad.json().errors[0].field).toBe("start_date");
    expect((await h.post(PATH, ASK)).statusCode).toBe(401);
  });
});

describe("booking a window", () => {
  const order = (window: { start: string; end: string }) => ({
    trade: "plumbing",
    location: { ...WHERE, address: "1 Market St" },
    description: "Replace the water heater",
    urgency: "scheduled",
    service_window: window,
  });

  it("books an offered window; once it filled, answers 409 window_unavailable with the next free ones", async () => {
    const { h, ids, caller } = await setup();
    const tuesdayMorning = pdt("2030-06-04", 8, 12);
    const first = await h.post(ORDER_PATH, order(tuesdayMorning), { "x-api-key": caller });
    expect(first.statusCode, first.body).toBe(200);
    const [row] = await h.services.store.orders.byIds([first.json().order_id]);
    expect(row?.contractor_id).toBe(ids.morning);
    // The only contractor for weekday mornings holds one job at a time: the morning windows are gone.
    const after = await windows(h, caller);
    expect(after.some((w) => w.start === tuesdayMorning.start)).toBe(false);
    const second = await h.post(ORDER_PATH, order(tuesdayMorning), { "x-api-key": caller });
    expect(second.statusCode, second.body).toBe(409);
    const problem = second.json();
    expect(problem).toMatchObject({ code: "window_unavailable", time_zone: "America/Los_Angeles" });
    expect(problem.errors).toEqual([expect.objectContaining({ field: "service_window" })]);
    expect(problem.alternatives.slice(0, 2)).toEqual([
      { ...pdt("2030-06-04", 12, 16), contractors_available: 1 },
      { ...pdt("2030-06-04", 16, 20), contractors_available: 1 },
    ]);
    // An alternative is bookable.
    const { start, end } = problem.alternatives[0];
    const third = await h.post(ORDER_PATH, order({ start, end }), { "x-api-key": caller });
    expect(third.statusCode, third.body).toBe(200);
  });

  it("gives the last place in a window to one of two concurrent orders; the other gets 409 with alternatives", async () => {
    const { h, ids, caller } = await setup();
    const wednesdayMorning = pdt("2030-06-05", 8, 12);
    const [a, b] = await Promise.all([
      h.post(ORDER_PATH, order(wednesdayMorning), { "x-api-key": caller }),
      h.post(ORDER_PATH, order(wednesdayMorning), { "x-api-key": caller }),
    ]);
    const codes = [a.statusCode, b.statusCode].sort();
    expect(codes, `${a.body}\n${b.body}`).toEqual([200, 409]);
    const won = a.statusCode === 200 ? a : b;
    const lost = a.statusCode === 200 ? b : a;
    const [row] = await h.services.store.orders.byIds([won.json().order_id]);
    expect(row?.contractor_id).toBe(ids.morning);
    expect(lost.json().code).toBe("window_unavailable");
    expect(lost.json().alternatives.length).toBeGreaterThan(0);
  });
});
