// GET /api/dispatch/v1/orders: the caller's own orders, newest first, filtered, paged by cursor; never
// another account's or the other mode's.

import { describe, expect, it } from "vitest";
import { createHarness, ORDER_PATH, validOrder } from "../helpers/harness.js";

const LIST = "/api/dispatch/v1/orders";

describe("order list", () => {
  it("pages through the caller's orders newest first, with filters, and sees no one else's", async () => {
    const h = await createHarness();
    const key = await h.key("lister", "test");
    const other = await h.key("someone-else", "test");
    const live = await h.key("lister", "live");
    const created: string[] = [];
    for (let i = 0; i < 7; i++) {
      const res = await h.post(ORDER_PATH, validOrder({ reference_id: `WO-${i % 2}` }), { "x-api-key": key });
      expect(res.statusCode).toBe(200);
      created.push(res.json().order_id);
    }
    await h.post(ORDER_PATH, validOrder(), { "x-api-key": other });

    const seen: string[] = [];
    let cursor: string | null = null;
    let pages = 0;
    do {
      const query: string = `?limit=3${cursor ? `&cursor=${cursor}` : ""}`;
      const res = await h.get(LIST + query, { "x-api-key": key });
      expect(res.statusCode).toBe(200);
      const page = res.json() as {
        orders: Array<{ order_id: string; status_url: string }>;
        next_cursor: string | null;
      };
      expect(page.orders.length).toBeLessThanOrEqual(3);
      seen.push(...page.orders.map((o) => o.order_id));
      cursor = page.next_cursor;
      pages++;
    } while (cursor && pages < 10);
    expect(pages).toBe(3);
    expect(seen).toEqual([...created].reverse());

    const filtered = (await h.get(`${LIST}?reference_id=WO-1`, { "x-api-key": key })).json();
    expect(filtered.orders.map((o: { order_id: string }) => o.order_id)).toEqual(
      created.filter((_, i) => i % 2 === 1).reverse(),
    );
    const status = filtered.orders[0].status;
    expect(
      (await h.get(`${LIST}?status=${status}&limit=200`, { "x-api-key": key })).json().orders.length,
    ).toBe(created.length);
    const future = (await h.get(`${LIST}?since=2999-01-01T00:00:00.000Z`, { "x-api-key": key })).json();
    expect(future).toEqual({ orders: [], next_cursor: null });
    expect((await h.get(LIST, { "x-api-key": live })).json().orders).toEqual([]);
    await h.close();
  });

  it("places each order at its ZIP's centroid, else its city's, in the account's list, the dispatch team's and their events", async () => {
    const h = await createHarness();
    const key = await h.key("mapper", "test");
    const desk = await h.dispatcherKey("test");
    const place = async (location: Record<string, unknown>) => {
      const res = await h.post(ORDER_PATH, validOrder({ location }), { "x-api-key": key });
      expect(res.statusCode, res.body).toBe(200);
      return res.json().order_id as string;
    };
    const byZip = await place({ state: "CA", zip: "94103", city: "San Francisco" });
    const byCity = await place({ state: "HI", city: "Honolulu" });
    const nowhere = await place({ state: "TX", city: "Nowhere Special" });
    const expected = new Map<string, unknown>([
      [byZip, { lat: 37.7725, lon: -122.4147 }],
      [byCity, { lat: 21.3105, lon: -157.8431 }],
      [nowhere, null],
    ]);
    const pointsOf = (orders: Array<{ order_id: string; coordinates: unknown }>) =>
      new Map(orders.filter((o) => expected.has(o.order_id)).map((o) => [o.order_id, o.coordinates]));

    const mine = await h.get(LIST, { "x-api-key": key });
    expect(pointsOf(mine.json().orders)).toEqual(expected);
    const board = await h.get("/api/dispatcher/v1/orders?limit=200", { "x-api-key": desk });
    expect(pointsOf(board.json().orders)).toEqual(expected);
    // The event stream's orders carry them too, so that a map follows without reloading its list.
    for (const k of [key, desk]) {
      const res = await h.get("/api/events", { "x-api-key": k, accept: "application/json" });
      expect(res.statusCode, res.body).toBe(200);
      const events = res.json().events as Array<{
        data: { order: { order_id: string; coordinates: unknown } };
      }>;
      expect(events.length).toBeGreaterThan(0);
      for (const e of events) expect(e.data.order.coordinates).toEqual(expected.get(e.data.order.order_id));
    }
    await h.close();
  });

  it("answers 422 for a forged cursor, an unknown status or a bad limit, and 401 without a key", async () => {
    const h = await createHarness();
    const key = await h.key("lister", "test");
    for (const [query, field] of [
      ["?cursor=bm90LWEtY3Vyc29y", "cursor"],
      ["?status=teleported", "status"],
      ["?limit=0", "limit"],
      ["?limit=201", "limit"],
      ["?since=yesterday", "since"],
    ]) {
      const res = await h.get(LIST + query, { "x-api-key": key });
      expect(res.statusCode, query).toBe(422);
      expect(res.json().errors[0].field).toBe(field);
    }
    expect((await h.get(LIST)).statusCode).toBe(401);
    await h.close();
  });
});
