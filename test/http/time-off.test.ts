// Contractor calendars over HTTP: time off set by the contractor (its own only) and by the dispatch team
// (audited), and matching that leaves out a contractor off duty or off its hours.

import { afterEach, describe, expect, it } from "vitest";
import { liveContractor, testRecord } from "../helpers/fixtures.js";
import { createHarness, type Harness, ORDER_PATH, QUOTE_PATH } from "../helpers/harness.js";

/** Monday 2030-06-03 08:00 in San Francisco (PDT). */
const NOW = new Date("2030-06-03T15:00:00Z");
const MINE = "/api/contractor/v1/time-off";
const DISPATCH = "/api/dispatcher/v1/time-off";
const JOB = {
  trade: "plumbing",
  location: { state: "CA", zip: "94103", address: "1 Market St" },
  description: "Leak under the sink",
  urgency: "urgent",
};

const open: Harness[] = [];
afterEach(async () => {
  for (const h of open.splice(0)) await h.close();
});

/** Two live CA plumbers: `best` (rated 5, with `hours`) and `next` (rated 4, any time). */
async function setup(hours: string | null = null) {
  const h = await createHarness({}, {}, { now: () => new Date(NOW) });
  open.push(h);
  const tag = Math.random().toString(36).slice(2, 8);
  const ids = { best: `ctr_best${tag}`, next: `ctr_next${tag}` };
  await h.services.store.contractors.insert(
    [liveContractor({ id: ids.best, rating: 5, hours }), liveContractor({ id: ids.next, rating: 4 })],
    testRecord(),
  );
  await h.services.pool.load();
  const keys: Record<string, string> = {};
  for (const [name, id] of Object.entries(ids)) {
    const issued = await h.services.keys.issue({
      accountName: `crew-${name}`,
      mode: "live",
      actor: "operator:test",
      kind: "contractor",
      contractorId: id,
    });
    keys[name] = issued.key;
  }
  return { h, ids, keys, caller: await h.key("acme", "live"), dispatcher: await h.dispatcherKey("live") };
}

async function chosen(h: Harness, caller: string): Promise<string | null> {
  const res = await h.post(ORDER_PATH, JOB, { "x-api-key": caller });
  expect(res.statusCode, res.body).toBe(200);
  const [order] = await h.services.store.orders.byIds([res.json().order_id as string]);
  return order?.contractor_id ?? null;
}

describe("time off", () => {
  it("is set, listed and removed by the contractor, for itself only", async () => {
    const { h, keys } = await setup();
    const period = {
      start: "2030-06-03T07:00:00-07:00",
      end: "2030-06-04T07:00:00-07:00",
      reason: "dentist",
    };
    const added = await h.post(MINE, period, { "x-api-key": keys.best as string });
    expect(added.statusCode, added.body).toBe(200);
    const off = added.json();
    expect(off).toMatchObject({
      start: "2030-06-03T14:00:00.000Z",
      end: "2030-06-04T14:00:00.000Z",
      reason: "dentist",
      created_by: "contractor",
    });
    const mine = await h.get(MINE, { "x-api-key": keys.best as string });
    expect(mine.json().time_off.map((t: { time_off_id: string }) => t.time_off_id)).toEqual([
      off.time_off_id,
    ]);
    // Another contractor neither sees it nor removes it.
    const theirs = await h.get(MINE, { "x-api-key": keys.next as string });
    expect(theirs.json().time_off).toEqual([]);
    const stolen = await h.post(
      `${MINE}/remove`,
      { time_off_id: off.time_off_id },
      { "x-api-key": keys.next as string },
    );
    expect(stolen.statusCode).toBe(404);
    const removed = await h.post(
      `${MINE}/remove`,
      { time_off_id: off.time_off_id },
      { "x-api-key": keys.best as string },
    );
    expect(removed.statusCode, removed.body).toBe(200);
    expect((await h.get(MINE, { "x-api-key": keys.best as string })).json().time_off).toEqual([]);
  });

  it("refuses a period that is not ordered, already over or too long, naming the field and the rule", async () => {
    const { h, keys } = await setup();
    const key = { "x-api-key": keys.best as string };
    const cases: Array<[Record<string, string>, string, string]> = [
      [{ start: "2030-06-05T00:00:00Z", end: "2030-06-04T00:00:00Z" }, "end", "time_off_not_ordered"],
      [{ start: "2030-06-01T00:00:00Z", end: "2030-06-02T00:00:00Z" }, "end", "time_off_in_past"],
      [{ start: "2030-06-05T00:00:00Z", end: "2031-07-05T00:00:00Z" }, "end", "time_off_too_long"],
    ];
    for (const [body, field, code] of cases) {
      const res = await h.post(MINE, body, key);
      expect(res.statusCode, res.body).toBe(422);
      expect(res.json().errors).toEqual([expect.objectContaining({ field, code })]);
    }
    const bad = await h.post(MINE, { start: "tomorrow", end: "2030-06-04T00:00:00Z" }, key);
    expect(bad.statusCode).toBe(422);
    expect(bad.json().errors[0].field).toBe("start");
  });

  it("is set and removed by the dispatch team with a reason, audited, in its own pool only", async () => {
    const { h, ids, keys, dispatcher } = await setup();
    const auth = { "x-api-key": dispatcher };
    const added = await h.post(
      DISPATCH,
      {
        contractor_id: ids.best,
        start: "2030-06-10T00:00:00Z",
        end: "2030-06-12T00:00:00Z",
        reason: "van in the shop",
      },
      auth,
    );
    expect(added.statusCode, added.body).toBe(200);
    expect(added.json().created_by).toBe("dispatcher");
    // The contractor sees it among its own.
    const mine = await h.get(MINE, { "x-api-key": keys.best as string });
    expect(mine.json().time_off).toHaveLength(1);
    const listed = await h.get(`/api/dispatcher/v1/contractors/${ids.best}/time-off`, auth);
    expect(listed.json().time_off).toHaveLength(1);
    // A test-mode dispatcher key does not reach the live pool.
    const sandbox = await h.dispatcherKey("test");
    const elsewhere = await h.get(`/api/dispatcher/v1/contractors/${ids.best}/time-off`, {
      "x-api-key": sandbox,
    });
    expect(elsewhere.statusCode).toBe(404);
    const removed = await h.post(
      `${DISPATCH}/remove`,
      { time_off_id: added.json().time_off_id, reason: "fixed early" },
      auth,
    );
    expect(removed.statusCode, removed.body).toBe(200);
    const audit = await h.get("/api/dispatcher/v1/audit?kind=pool.time_off_added", auth);
    expect(audit.statusCode, audit.body).toBe(200);
    expect(audit.json().records).toHaveLength(1);
    const gone = await h.get("/api/dispatcher/v1/audit?kind=pool.time_off_removed", auth);
    expect(gone.json().records).toHaveLength(1);
  });
});

describe("matching with calendars", () => {
  it("passes over a contractor off its working hours, and counts it under calendar", async () => {
    // The best works Saturdays only; it is Monday.
    const { h, ids, caller, dispatcher } = await setup("sat 08:00-17:00");
    expect(await chosen(h, caller)).toBe(ids.next);
    // The dispatch team sees its hours (canonical) and the zone they are read in.
    const seen = await h.get(`/api/dispatcher/v1/contractors/${ids.best}`, { "x-api-key": dispatcher });
    expect(seen.json()).toMatchObject({ hours: "sat 08:00-17:00", time_zone: "America/Los_Angeles" });
    const quote = await h.post(QUOTE_PATH, JOB, { "x-api-key": caller });
    expect(quote.statusCode, quote.body).toBe(200);
    const records = await h.get("/api/audit?kind=quote.issued", { "x-api-key": caller });
    expect(records.json().records[0].record.data.rejected.calendar).toBe(1);
  });

  it("passes over a contractor on time off, and matches it again once the time off is removed", async () => {
    const { h, ids, caller, keys } = await setup("mon-fri 07:00-18:00");
    expect(await chosen(h, caller)).toBe(ids.best);
    const key = { "x-api-key": keys.best as string };
    const off = await h.post(MINE, { start: "2030-06-03T00:00:00Z", end: "2030-06-05T00:00:00Z" }, key);
    expect(off.statusCode, off.body).toBe(200);
    expect(await chosen(h, caller)).toBe(ids.next);
    await h.post(`${MINE}/remove`, { time_off_id: off.json().time_off_id }, key);
    expect(await chosen(h, caller)).toBe(ids.best);
  });

  it("reports the ETA its calendar allows", async () => {
    // Starts at 10:00 PDT, two hours from now: the ETA is those 120 minutes, not response plus travel.
    const { h, caller } = await setup("mon-fri 10:00-18:00");
    const quote = await h.post(
      QUOTE_PATH,
      { ...JOB, location: { state: "CA", zip: "94103" } },
      { "x-api-key": caller },
    );
    expect(quote.statusCode, quote.body).toBe(200);
    expect(quote.json()).toMatchObject({ eta_minutes: 120, eta_tier: "within_2_hours" });
  });
});
