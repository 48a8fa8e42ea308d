// The order event log's payloads (operations/orders/event-log.ts) keep the order and the offer in their
// rows' form, as every earlier version wrote them, and the live event stream reads a payload written
// before later columns existed as it reads a new one: a store's history outlives upgrades.

import { describe, expect, it } from "vitest";
import type { Principal } from "../../../src/auth/api-key-service.js";
import { ContractorRefs } from "../../../src/auth/contractor-refs.js";
import { createOrder } from "../../../src/domain/orders/commands.js";
import type { OrderChange } from "../../../src/domain/orders/order.js";
import { loggedEvent } from "../../../src/operations/orders/event-log.js";
import { eventView } from "../../../src/operations/orders/event-stream.js";
import type { StoredOrderEvent } from "../../../src/storage/order-event-store.js";
import { orderRequestFixture } from "../../helpers/order-fixture.js";

const NOW = new Date("2026-11-23T12:00:00.000Z");
const at = {
  baseUrl: "https://dispatch.example",
  services: { refs: new ContractorRefs(Buffer.alloc(32, 7)) },
};

/** A sandbox order offered to ctr_a (ranked before ctr_b). */
function created(): OrderChange {
  return createOrder(
    {
      request: orderRequestFixture({
        id: "ord_log1",
        livemode: false,
        zip: "78701",
        received_at: NOW.toISOString(),
        created_at: NOW.toISOString(),
      }),
      candidates: ["ctr_a", "ctr_b"].map((id) => ({
        contractorId: id,
        priceCents: 20_000,
        etaTier: "same_day",
        score: 1,
      })),
      modelPriceCents: 25_000,
      matchingTimeMs: 0.02,
      actor: "key:k",
      createdData: {},
      decisionData: {},
      time: { timeZone: "America/Chicago", window: null },
    },
    { now: NOW, unavailable: new Set(), sandboxPlayed: true, newId: (p) => `${p}_1` },
  );
}

function stored(payload: unknown): StoredOrderEvent {
  return {
    id: 7,
    type: "order.offered",
    order_id: "ord_log1",
    account_id: "acct_1",
    livemode: 0,
    contractor_id: "ctr_a",
    previous_contractor_id: null,
    created_at: NOW.toISOString(),
    payload: JSON.stringify(payload),
  };
}

const principal = (kind: Principal["kind"], contractorId: string | null = null): Principal => ({
  accountId: "acct_1",
  keyId: "key_1",
  livemode: false,
  kind,
  contractorId,
  role: "admin",
  approvalLimitCents: null,
  ratePerMinute: null,
  burst: null,
});
const PRINCIPALS = [principal("account"), principal("dispatcher"), principal("contractor", "ctr_a")];

/** Columns earlier versions left out of a new order's row (their defaults stood). */
const LEFT_OUT = ["on_site_at", "override_count", "version"];
/** Migration 0020's. */
const SLA_COLUMNS = [
  "sla_respond_at_risk_at",
  "sla_respond_breached_at",
  "sla_arrive_at_risk_at",
  "sla_arrive_breached_at",
];
/** Migration 0017's. */
const TIME_COLUMNS = ["time_zone", "window_start", "window_end", "window_source", "respond_by", "arrive_by"];

describe("the order event log's payload", () => {
  it("keeps the order and its offer in their rows' form: livemode 0/1, no ranking", () => {
    const row = loggedEvent(created());
    expect(row).toMatchObject({ type: "order.offered", livemode: 0, contractor_id: "ctr_a" });
    const payload = JSON.parse(row?.payload ?? "{}");
    expect(payload.order).toMatchObject({ id: "ord_log1", livemode: 0, status: "offered", version: 0 });
    expect(payload.order).not.toHaveProperty("ranking");
    expect(payload.offer).toMatchObject({ contractor_id: "ctr_a", livemode: 0, attempt: 1 });
  });

  it("reads a payload an earlier version wrote for a new order (no version, counters, clocks) as a new one", () => {
    const payload = JSON.parse(loggedEvent(created())?.payload ?? "{}");
    const old = structuredClone(payload);
    for (const column of [...LEFT_OUT, ...SLA_COLUMNS]) delete old.order[column];
    for (const p of PRINCIPALS) {
      const fresh = eventView(stored(payload), p, at);
      expect(fresh.livemode).toBe(false);
      expect(eventView(stored(old), p, at)).toEqual(fresh);
    }
    expect(eventView(stored(old), principal("contractor", "ctr_a"), at).data).toMatchObject({
      held: true,
      offer: { offer_id: "ofr_1", attempt: 1 },
      job: null,
    });
  });

  it("reads a payload from before orders stated their time: no zone, window or deadlines", () => {
    const old = JSON.parse(loggedEvent(created())?.payload ?? "{}");
    for (const column of [...LEFT_OUT, ...SLA_COLUMNS, ...TIME_COLUMNS]) delete old.order[column];
    const view = eventView(stored(old), principal("account"), at).data as { order: Record<string, unknown> };
    expect(view.order).toMatchObject({
      order_id: "ord_log1",
      livemode: false,
      status: "offered",
      time_zone: null,
      arrival_window: null,
      respond_by: null,
      arrive_by: null,
    });
  });
});
