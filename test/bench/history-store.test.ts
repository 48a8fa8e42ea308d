// The history benchmark's order lives (bench/history-store.ts lifeOf, bench/order-rows.ts order): the
// audit records an order's row implies, in the order the service seals them.

import { describe, expect, it } from "vitest";
import { historyOrderId, lifeOf } from "../../bench/history-store.js";
import { COLUMNS, order, random } from "../../bench/order-rows.js";

const at = (name: (typeof COLUMNS)[number]) => COLUMNS.indexOf(name);
const received = Date.parse("2025-03-01T12:00:00.000Z");

function rowWith(status: string): unknown[] {
  const rnd = random(1);
  for (let i = 0; i < 10_000; i++) {
    const row = order(i, received, rnd, "acct_x", true);
    if (row[at("status")] === status && row[at("contractor_id")] !== null) return row;
  }
  throw new Error(`no ${status} order drawn`);
}

describe("history orders", () => {
  it("settled orders have no open status", () => {
    const rnd = random(2);
    const open = new Set(["offered", "accepted", "en_route", "on_site", "needs_dispatcher"]);
    for (let i = 0; i < 2_000; i++) {
      expect(open.has(order(i, received, rnd, "acct_x", true)[at("status")] as string)).toBe(false);
    }
  });

  it("an invoiced order's life: quote, creation, offer, acceptance, three steps, invoice", () => {
    const row = rowWith("invoiced");
    row[at("id")] = historyOrderId(7);
    const life = lifeOf(row, "acct_x", "key_x");
    expect(life.map((l) => l.input.kind)).toEqual([
      "quote.issued",
      "order.created",
      "order.offered",
      "order.accepted",
      "order.status_changed",
      "order.status_changed",
      "order.status_changed",
      "order.invoiced",
    ]);
    expect(life.slice(1).every((l) => l.input.orderId === historyOrderId(7))).toBe(true);
    expect(life.map((l) => l.event).filter(Boolean)).toEqual([
      "order.offered",
      "order.accepted",
      "order.en_route",
      "order.on_site",
      "order.completed",
      "order.invoiced",
    ]);
  });

  it("a cancelled order ends with its cancellation", () => {
    const life = lifeOf(rowWith("cancelled"), "acct_x", "key_x");
    expect(life.at(-1)?.input.kind).toBe("order.cancelled");
    expect(life.at(-1)?.input.actor).toBe("key:key_x");
  });
});
