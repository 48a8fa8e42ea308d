// The service-level clocks' watch on an injected clock: at risk and breached fire once each (and not
// again from a new worker on the same services; a real restart: sla-watch-restart.test.ts), two workers fire once in total, an ETA
// after the deadline is at risk at once, closed orders fire nothing, and the webhook, the event stream and
// the audit log carry each event with its clock, deadline and time used. No waiting: the clock moves.

import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createFetcher } from "../../src/services/create-services.js";
import { SlaWatch } from "../../src/workers/sla-watch.js";
import { WebhookDispatcher } from "../../src/workers/webhook-dispatcher.js";
import { createHarness, type Harness, ORDER_PATH, validOrder } from "../helpers/harness.js";
import { startReceiver, type WebhookReceiver } from "../helpers/webhook-receiver.js";

const MINUTE = 60_000;

let h: Harness;
let key: string;
let receiver: WebhookReceiver;
// A clock that stands still until the test moves it, so that every boundary is exact.
let nowMs = Date.parse("2026-11-24T09:00:00.000Z");
const clock = { now: () => new Date(nowMs) };

beforeAll(async () => {
  receiver = await startReceiver();
  h = await createHarness(
    {
      PROBE_ALLOW_PRIVATE_NETWORKS: "true",
      PROBE_ALLOWED_PORTS: String(receiver.port),
      WEBHOOK_INTERVAL_MS: "0",
      SANDBOX_SIMULATION: "false",
    },
    {},
    { now: clock.now },
  );
  key = await h.key("clocks", "test", { ratePerMinute: 100_000, burst: 100_000 });
  const secret = await h.post("/api/dispatch/v1/webhooks/secret", {}, { "x-api-key": key });
  expect(secret.statusCode, secret.body).toBe(200);
});
afterAll(async () => {
  await receiver.close();
});

/** A new emergency order (respond in 15 minutes, arrive in 2 hours) offered to a sandbox contractor. */
async function emergencyOrder(): Promise<{ orderId: string; contractorId: string; receivedAt: number }> {
  const res = await h.post(
    ORDER_PATH,
    validOrder({ urgency: "emergency", callback_url: receiver.url("/hook") }),
    { "x-api-key": key },
  );
  expect(res.statusCode, res.body).toBe(200);
  const orderId = res.json().order_id as string;
  const row = await h.services.store.orders.byId(orderId);
  expect(row?.status).toBe("offered");
  return {
    orderId,
    contractorId: row?.contractor_id as string,
    receivedAt: Date.parse(row?.received_at as string),
  };
}

/** Moves the clock to `minutes` after `from`. */
function moveTo(from: number, minutes: number): void {
  nowMs = from + minutes * MINUTE;
}

async function auditKinds(
  orderId: string,
): Promise<Array<{ kind: string; disclosed: Record<string, unknown> }>> {
  const res = await h.get(`/api/audit?order_id=${orderId}&limit=100`, { "x-api-key": key });
  expect(res.statusCode, res.body).toBe(200);
  return (res.json().records as Array<{ kind: string; disclosed: Record<string, unknown> }>).filter((r) =>
    r.kind.startsWith("order.sla_"),
  );
}

describe("the service-level watch", () => {
  it("fires at risk then breached once each, and not again from a new worker", async () => {
    const { orderId, receivedAt } = await emergencyOrder();
    const watch = new SlaWatch(h.services);
    moveTo(receivedAt, 11);
    expect(await watch.tick()).toBe(0);
    moveTo(receivedAt, 12); // 80 % of the 15 minutes to respond_by
    expect(await watch.tick()).toBe(1);
    expect(await watch.tick()).toBe(0);
    moveTo(receivedAt, 15.5);
    expect(await watch.tick()).toBe(1);
    expect(await watch.tick()).toBe(0);
    expect(await new SlaWatch(h.services).tick()).toBe(0);

    const records = await auditKinds(orderId);
    expect(records.map((r) => r.kind).sort()).toEqual(["order.sla_at_risk", "order.sla_breached"]);
    const deadline = new Date(receivedAt + 15 * MINUTE).toISOString();
    expect(records.find((r) => r.kind === "order.sla_at_risk")?.disclosed).toMatchObject({
      clock: "respond",
      reason: "time_used",
      deadline,
      time_allowed_minutes: 15,
      time_used_minutes: 12,
      time_used_percent: 80,
      status: "offered",
    });
    expect(records.find((r) => r.kind === "order.sla_breached")?.disclosed).toMatchObject({
      clock: "respond",
      reason: "deadline_passed",
      deadline,
      time_used_minutes: 15.5,
    });

    // The webhook carries both, with the order as its other events show it.
    const dispatcher = new WebhookDispatcher(h.services.store, {
      fetcher: createFetcher(h.config, { timeoutMs: 3000, maxRedirects: 0 }),
      ownsFetcher: true,
      concurrency: 1,
      timeoutMs: 3000,
      retentionDays: 30,
      now: clock.now,
      random: () => 0.5,
    });
    try {
      await dispatcher.tick();
      await receiver.waitFor(3); // order.offered, order.sla_at_risk, order.sla_breached
    } finally {
      await dispatcher.close();
    }
    const hooks = receiver.received
      .map((r) => JSON.parse(r.body))
      .filter((b) => b.data.order.order_id === orderId && b.type.startsWith("order.sla_"));
    expect(hooks.map((b) => b.type).sort()).toEqual(["order.sla_at_risk", "order.sla_breached"]);
    const risk = hooks.find((b) => b.type === "order.sla_at_risk");
    expect(risk.data.previous_status).toBeNull();
    expect(risk.data.order.status).toBe("offered");
    expect(risk.data.sla).toMatchObject({ clock: "respond", deadline, time_used_minutes: 12 });

    // So does the event stream (one page of JSON).
    const page = await h.get("/api/events?limit=500", { "x-api-key": key, accept: "application/json" });
    expect(page.statusCode, page.body).toBe(200);
    const streamed = (
      page.json().events as Array<{ type: string; data: { order?: { order_id: string }; sla?: unknown } }>
    ).filter((e) => e.data.order?.order_id === orderId && e.type.startsWith("order.sla_"));
    expect(streamed.map((e) => e.type)).toEqual(["order.sla_at_risk", "order.sla_breached"]);
    expect(streamed[1]?.data.sla).toMatchObject({ clock: "respond", reason: "deadline_passed", deadline });
  });

  it("fires once in total from two workers", async () => {
    const { orderId, receivedAt } = await emergencyOrder();
    const both = () => Promise.all([new SlaWatch(h.services).tick(), new SlaWatch(h.services).tick()]);
    moveTo(receivedAt, 13);
    const first = await both();
    // Other orders of this file may fire too: this order's records are what is counted.
    expect(first[0] + first[1]).toBeGreaterThanOrEqual(1);
    moveTo(receivedAt, 16);
    await both();
    await both();
    expect((await auditKinds(orderId)).map((r) => r.kind).sort()).toEqual([
      "order.sla_at_risk",
      "order.sla_breached",
    ]);
  });

  it("puts the arrive clock at risk at once when the contractor's ETA is after arrive_by", async () => {
    const { orderId, contractorId, receivedAt } = await emergencyOrder();
    moveTo(receivedAt, 1);
    const issued = await h.services.keys.issue({
      accountName: "crew",
      mode: "test",
      actor: "operator:test",
      kind: "contractor",
      contractorId,
    });
    const crew = { "x-api-key": issued.key };
    const offers = await h.get("/api/contractor/v1/offers", crew);
    expect(offers.statusCode, offers.body).toBe(200);
    const offer = (offers.json().offers as Array<{ offer_id: string; order_id: string }>).find(
      (o) => o.order_id === orderId,
    );
    const accepted = await h.post("/api/contractor/v1/offers/accept", { offer_id: offer?.offer_id }, crew);
    expect(accepted.statusCode, accepted.body).toBe(200);
    moveTo(receivedAt, 10);
    // 150 minutes from now: 40 minutes after the 2-hour arrive_by.
    const enRoute = await h.post(
      "/api/contractor/v1/jobs/status",
      { order_id: orderId, status: "en_route", eta_minutes: 150 },
      crew,
    );
    expect(enRoute.statusCode, enRoute.body).toBe(200);
    const records = await auditKinds(orderId);
    expect(records.map((r) => r.kind)).toEqual(["order.sla_at_risk"]);
    expect(records[0]?.disclosed).toMatchObject({
      clock: "arrive",
      reason: "eta_after_deadline",
      deadline: new Date(receivedAt + 120 * MINUTE).toISOString(),
      eta_at: new Date(receivedAt + 160 * MINUTE).toISOString(),
      time_used_minutes: 10,
      status: "en_route",
    });
    // The contractor's stream tells it too, for the job it holds; the dispatch team's as well.
    for (const [who, headers] of [
      ["contractor", crew],
      ["dispatcher", { "x-api-key": await h.dispatcherKey("test") }],
    ] as const) {
      const page = await h.get("/api/events?limit=500", { ...headers, accept: "application/json" });
      expect(page.statusCode, page.body).toBe(200);
      const event = (
        page.json().events as Array<{
          type: string;
          data: { order_id?: string; order?: { order_id: string }; held?: boolean; sla?: unknown };
        }>
      ).find(
        (e) => e.type === "order.sla_at_risk" && (e.data.order_id ?? e.data.order?.order_id) === orderId,
      );
      expect(event?.data.sla, who).toMatchObject({ clock: "arrive", reason: "eta_after_deadline" });
      if (who === "contractor") expect(event?.data.held).toBe(true);
    }
    // The watch finds nothing more to say until the deadline passes, then the breach, once.
    const watch = new SlaWatch(h.services);
    await watch.tick();
    expect((await auditKinds(orderId)).length).toBe(1);
    moveTo(receivedAt, 121);
    await watch.tick();
    await watch.tick();
    const after = await auditKinds(orderId);
    expect(after.map((r) => r.kind)).toEqual(["order.sla_at_risk", "order.sla_breached"]);
    expect(after[1]?.disclosed).toMatchObject({ clock: "arrive", reason: "deadline_passed" });
  });

  it("breaches the respond clock at once when a dispatcher assigns the job after respond_by", async () => {
    const { orderId, contractorId, receivedAt } = await emergencyOrder();
    moveTo(receivedAt, 20); // no watch ran: the deadline passed unseen
    const assigned = await h.post(
      "/api/dispatcher/v1/orders/assign",
      { order_id: orderId, contractor_id: contractorId, reason: "called the contractor" },
      { "x-api-key": await h.dispatcherKey("test") },
    );
    expect(assigned.statusCode, assigned.body).toBe(200);
    const records = await auditKinds(orderId);
    expect(records.map((r) => r.kind)).toEqual(["order.sla_breached"]);
    expect(records[0]?.disclosed).toMatchObject({
      clock: "respond",
      reason: "done_late",
      time_used_minutes: 20,
      status: "accepted",
    });
    expect(await new SlaWatch(h.services).tick()).toBe(0);
  });

  it("fires nothing on a cancelled order", async () => {
    const { orderId, receivedAt } = await emergencyOrder();
    const cancelled = await h.post(
      "/api/dispatch/v1/orders/cancel",
      { order_id: orderId },
      { "x-api-key": key },
    );
    expect(cancelled.statusCode, cancelled.body).toBe(200);
    moveTo(receivedAt, 500);
    await new SlaWatch(h.services).tick();
    expect(await auditKinds(orderId)).toEqual([]);
  });
});
