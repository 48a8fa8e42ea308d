// Webhooks end to end: events written with the change (the outbox), fanned out to the account's default
// endpoint and the order's callback_url, signed per Standard Webhooks (verified with the standardwebhooks
// library, not our code), retried on a schedule with Retry-After honoured, 410 disabling the endpoint,
// redirects not followed, leases that let another worker finish a dead worker's delivery, secret
// rotation with overlap, the delivery log and redelivery, and one account never touching another's.

import { Webhook } from "standardwebhooks";
import { afterEach, describe, expect, it, vi } from "vitest";
import { createFetcher } from "../../src/services/create-services.js";
import { RETRY_DELAYS_MS } from "../../src/webhooks/events.js";
import { WebhookDispatcher } from "../../src/workers/webhook-dispatcher.js";
import { createHarness, type Harness, ORDER_PATH, validOrder } from "../helpers/harness.js";
import { expectProblem } from "../helpers/security-suite.js";
import { type ReceivedHook, startReceiver, type WebhookReceiver } from "../helpers/webhook-receiver.js";

// biome-ignore lint/suspicious/noExplicitAny: JSON bodies read by the tests.
type Json = any;

const WEBHOOKS = "/api/dispatch/v1/webhooks";
const CANCEL = "/api/dispatch/v1/orders/cancel";

const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  vi.useRealTimers();
  for (const c of cleanups.splice(0).reverse()) await c();
});

interface Setup {
  h: Harness;
  receiver: WebhookReceiver;
  key: string;
  dispatcher: WebhookDispatcher;
  clock: { ms: number };
}

/** A harness whose fetcher may reach the local receiver, and a dispatcher on a clock of the test's. */
async function setup(): Promise<Setup> {
  const receiver = await startReceiver();
  cleanups.push(() => receiver.close());
  const h = await createHarness({
    PROBE_ALLOW_PRIVATE_NETWORKS: "true",
    PROBE_ALLOWED_PORTS: String(receiver.port),
    WEBHOOK_INTERVAL_MS: "0",
    SANDBOX_SIMULATION: "false",
  });
  cleanups.push(() => h.close());
  const clock = { ms: Date.now() };
  const fetcher = createFetcher(h.config, { timeoutMs: 3000, maxRedirects: 0 });
  const dispatcher = new WebhookDispatcher(h.services.store, {
    fetcher,
    ownsFetcher: true,
    concurrency: 4,
    timeoutMs: 3000,
    retentionDays: 30,
    now: () => new Date(clock.ms),
    random: () => 0.5, // no jitter: the schedule's own delays
  });
  cleanups.push(() => dispatcher.close());
  return { h, receiver, key: h.sandboxKey, dispatcher, clock };
}

async function rotate(s: Setup, overlapHours = 24, key = s.key): Promise<string> {
  const res = await s.h.post(`${WEBHOOKS}/secret`, { overlap_hours: overlapHours }, { "x-api-key": key });
  expect(res.statusCode, res.body).toBe(200);
  expect(res.headers["cache-control"]).toBe("no-store");
  const secret = res.json().secret as string;
  expect(secret).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/);
  return secret;
}

async function order(s: Setup, extra: Record<string, unknown> = {}, key = s.key) {
  const res = await s.h.post(ORDER_PATH, validOrder(extra), { "x-api-key": key });
  expect(res.statusCode, res.body).toBe(200);
  return res.json() as { order_id: string; status: string };
}

async function deliveries(s: Setup, query = "", key = s.key) {
  const res = await s.h.get(`${WEBHOOKS}/deliveries?limit=200${query}`, { "x-api-key": key });
  expect(res.statusCode, res.body).toBe(200);
  return res.json().deliveries as Json[];
}

/** Verifies a received hook with the standardwebhooks library, at the time the hook was signed. */
function verify(secret: string, hook: ReceivedHook | undefined) {
  if (!hook) throw new Error("no hook received");
  vi.useFakeTimers({ toFake: ["Date"] });
  vi.setSystemTime(Number(hook.headers["webhook-timestamp"]) * 1000);
  try {
    return new Webhook(secret).verify(hook.body, {
      "webhook-id": String(hook.headers["webhook-id"]),
      "webhook-timestamp": String(hook.headers["webhook-timestamp"]),
      "webhook-signature": String(hook.headers["webhook-signature"]),
    }) as Json;
  } finally {
    vi.useRealTimers();
  }
}

describe("webhooks", () => {
  it("delivers signed events for each status change to the callback_url and the default endpoint", async () => {
    const s = await setup();
    const secret = await rotate(s);
    const set = await s.h.post(
      `${WEBHOOKS}/endpoint`,
      { url: s.receiver.url("/default") },
      { "x-api-key": s.key },
    );
    expect(set.statusCode, set.body).toBe(200);
    expect(set.json().endpoint).toMatchObject({ is_default: true, status: "enabled" });

    const created = await order(s, { callback_url: s.receiver.url("/order") });
    // Nothing is sent in the request's path: the event waits in the outbox for the dispatcher.
    expect(s.receiver.received).toHaveLength(0);
    await s.dispatcher.tick();
    const first = await s.receiver.waitFor(2);
    expect(first.map((r) => r.path).sort()).toEqual(["/default", "/order"]);
    for (const hook of first) {
      const event = verify(secret, hook);
      expect(event).toMatchObject({
        id: hook.headers["webhook-id"],
        type: "order.offered",
        livemode: false,
        data: { previous_status: "received", order: { order_id: created.order_id, status: "offered" } },
      });
      expect(hook.headers["content-type"]).toBe("application/json");
      expect(event.created_at).toMatch(/^\d{4}-\d{2}-\d{2}T/);
    }
    // One event, the same webhook-id at both endpoints.
    expect(new Set(first.map((r) => r.headers["webhook-id"])).size).toBe(1);

    const cancelled = await s.h.post(
      CANCEL,
      { order_id: created.order_id, reason: "fixed" },
      { "x-api-key": s.key },
    );
    expect(cancelled.statusCode, cancelled.body).toBe(200);
    await s.dispatcher.tick();
    const all = await s.receiver.waitFor(4);
    const second = all.slice(2).map((hook) => verify(secret, hook));
    expect(second.map((e) => e.type)).toEqual(["order.cancelled", "order.cancelled"]);
    expect(second[0]?.data.previous_status).toBe("offered");
    expect(second[0]?.data.order.status_reason).toBe("fixed");
    expect(second[0]?.id).not.toBe(first[0]?.headers["webhook-id"]);

    // A callback_url that is the default endpoint gets each event once.
    await order(s, { callback_url: s.receiver.url("/default") });
    await s.dispatcher.tick();
    await s.receiver.waitFor(5);
    expect(s.receiver.received).toHaveLength(5);

    const log = await deliveries(s);
    expect(log).toHaveLength(5);
    for (const d of log) {
      expect(d.status).toBe("succeeded");
      expect(d.attempt_log).toHaveLength(1);
      expect(d.attempt_log[0]).toMatchObject({ attempt: 1, status_code: 200, outcome: "succeeded" });
    }
    const byOrder = await deliveries(s, `&order_id=${created.order_id}`);
    expect(byOrder.map((d) => d.event_type).sort()).toEqual([
      "order.cancelled",
      "order.cancelled",
      "order.offered",
      "order.offered",
    ]);
  });

  it("retries a failing receiver on the schedule until it recovers, with the same webhook-id", async () => {
    const s = await setup();
    const secret = await rotate(s);
    s.receiver.script({ status: 500 }, { status: 502 }, { status: 204 });
    await order(s, { callback_url: s.receiver.url() });
    await s.dispatcher.tick();
    await s.receiver.waitFor(1);
    // Not due again yet: the next attempt waits for the first retry delay.
    s.clock.ms += RETRY_DELAYS_MS[0] - 1000;
    await s.dispatcher.tick();
    expect(s.receiver.received).toHaveLength(1);
    s.clock.ms += 1000;
    await s.dispatcher.tick();
    await s.receiver.waitFor(2);
    s.clock.ms += RETRY_DELAYS_MS[1];
    await s.dispatcher.tick();
    const hooks = await s.receiver.waitFor(3);
    expect(new Set(hooks.map((r) => r.headers["webhook-id"])).size).toBe(1);
    for (const hook of hooks) expect(verify(secret, hook).type).toBe("order.offered");
    // Each attempt signs its own timestamp.
    expect(new Set(hooks.map((r) => r.headers["webhook-timestamp"])).size).toBe(3);
    const [d] = await deliveries(s);
    expect(d).toMatchObject({ status: "succeeded", attempts: 3, last_status_code: 204 });
    expect(d?.attempt_log.map((a: Json) => [a.status_code, a.outcome])).toEqual([
      [500, "retrying"],
      [502, "retrying"],
      [204, "succeeded"],
    ]);
    // Nothing more is sent once it succeeded.
    s.clock.ms += 86_400_000;
    await s.dispatcher.tick();
    expect(s.receiver.received).toHaveLength(3);
  });

  it("honours Retry-After, and gives up after about three days", async () => {
    const s = await setup();
    await rotate(s);
    s.receiver.script({ status: 503, headers: { "retry-after": "7200" } });
    await order(s, { callback_url: s.receiver.url() });
    const start = s.clock.ms;
    await s.dispatcher.tick();
    const [d] = await deliveries(s);
    expect(d?.next_attempt_at).toBe(new Date(start + 7_200_000).toISOString());
    expect(d?.last_error).toBe("HTTP 503");

    // The receiver keeps failing: after every scheduled retry the delivery has failed.
    s.receiver.script({ status: 500 });
    for (let i = 0; i < 20; i++) {
      s.clock.ms += 86_400_000;
      await s.dispatcher.tick();
    }
    const [done] = await deliveries(s);
    expect(done?.status).toBe("failed");
    expect(done?.attempts).toBe(RETRY_DELAYS_MS.length + 1);
    expect(done?.last_error).toMatch(/gave up after 10 attempts/);
    expect(s.receiver.received).toHaveLength(RETRY_DELAYS_MS.length + 1);
    const total = RETRY_DELAYS_MS.reduce((a, b) => a + b, 0);
    expect(total / 3_600_000).toBeGreaterThan(60); // about three days of retries
    expect(total / 3_600_000).toBeLessThan(96);
  });

  it("disables an endpoint that answers 410 and stops its deliveries until it is enabled again", async () => {
    const s = await setup();
    await rotate(s);
    await s.h.post(`${WEBHOOKS}/endpoint`, { url: s.receiver.url("/gone") }, { "x-api-key": s.key });
    s.receiver.script({ status: 410 });
    await order(s);
    await s.dispatcher.tick();
    await s.receiver.waitFor(1);
    const config = (await s.h.get(WEBHOOKS, { "x-api-key": s.key })).json();
    expect(config.endpoints[0]).toMatchObject({
      status: "disabled",
      disabled_reason: "the endpoint answered 410 Gone",
    });
    const [gone] = await deliveries(s);
    expect(gone).toMatchObject({ status: "failed", last_status_code: 410 });

    const second = await order(s);
    s.clock.ms += 86_400_000;
    await s.dispatcher.tick();
    expect(s.receiver.received).toHaveLength(1); // nothing more to a disabled endpoint
    const [cancelled] = await deliveries(s, `&order_id=${second.order_id}`);
    expect(cancelled?.status).toBe("cancelled");

    // Redelivery is refused while disabled; enabling and redelivering sends it.
    const refused = await s.h.post(
      `${WEBHOOKS}/redeliver`,
      { delivery_id: cancelled?.delivery_id },
      { "x-api-key": s.key },
    );
    expectProblem(refused, 409, "endpoint_disabled");
    const enabled = await s.h.post(
      `${WEBHOOKS}/endpoint/enable`,
      { endpoint_id: config.endpoints[0].endpoint_id },
      { "x-api-key": s.key },
    );
    expect(enabled.statusCode, enabled.body).toBe(200);
    expect(enabled.json().status).toBe("enabled");
    s.receiver.script({ status: 200 });
    const again = await s.h.post(
      `${WEBHOOKS}/redeliver`,
      { delivery_id: cancelled?.delivery_id },
      { "x-api-key": s.key },
    );
    expect(again.statusCode, again.body).toBe(200);
    expect(again.json()).toMatchObject({ status: "pending", attempts: 0 });
    await s.dispatcher.tick();
    const hooks = await s.receiver.waitFor(2);
    expect(JSON.parse(hooks[1]?.body ?? "{}").data.order.order_id).toBe(second.order_id);
  });

  it("does not follow redirects: a 3xx is a failed attempt", async () => {
    const s = await setup();
    await rotate(s);
    s.receiver.script({ status: 302, headers: { location: s.receiver.url("/elsewhere") } });
    await order(s, { callback_url: s.receiver.url("/hook") });
    // tick() resolves once the attempt is recorded, that is once the fetch (and any redirect it might have
    // followed) has finished: whatever the receiver got from this attempt, it has got by now.
    await s.dispatcher.tick();
    const [d] = await deliveries(s);
    expect(d).toMatchObject({ status: "pending", attempts: 1, last_status_code: 302 });
    expect(d?.last_error).toMatch(/redirects are not followed/);
    expect(s.receiver.received.map((r) => r.path)).toEqual(["/hook"]);
  });

  it("lets another worker finish a delivery whose worker died holding it, once the lease lapses", async () => {
    const s = await setup();
    const secret = await rotate(s);
    await order(s, { callback_url: s.receiver.url() });
    const store = s.h.services.store.webhooks;
    const now = new Date(s.clock.ms);
    // A worker fans out and claims the delivery, then dies before sending it.
    expect(await store.fanOut(10, now.toISOString())).toBe(1);
    const lease = new Date(s.clock.ms + 60_000).toISOString();
    const claimed = await store.claimDue(now.toISOString(), lease, 10);
    expect(claimed).toHaveLength(1);
    // Others leave it alone while the lease holds...
    await s.dispatcher.tick();
    expect(s.receiver.received).toHaveLength(0);
    // ...and take it over once it lapses.
    s.clock.ms += 60_001;
    await s.dispatcher.tick();
    const [hook] = await s.receiver.waitFor(1);
    expect(verify(secret, hook).id).toBe(claimed[0]?.event.id);
    const [d] = await deliveries(s);
    expect(d).toMatchObject({ status: "succeeded", attempts: 2 });
  });

  it("waits for a signing secret, and signs with both secrets during a rotation's overlap", async () => {
    const s = await setup();
    await order(s, { callback_url: s.receiver.url() });
    await s.dispatcher.tick();
    expect(s.receiver.received).toHaveLength(0);
    const [waiting] = await deliveries(s);
    expect(waiting?.status).toBe("pending");
    expect(waiting?.last_error).toMatch(/no signing secret/);

    const a = await rotate(s);
    s.clock.ms += RETRY_DELAYS_MS[0];
    await s.dispatcher.tick();
    const [first] = await s.receiver.waitFor(1);
    expect(String(first?.headers["webhook-signature"]).split(" ")).toHaveLength(1);
    verify(a, first);

    const b = await rotate(s, 1);
    await order(s, { callback_url: s.receiver.url() });
    await s.dispatcher.tick();
    const [, during] = await s.receiver.waitFor(2);
    expect(String(during?.headers["webhook-signature"]).split(" ")).toHaveLength(2);
    verify(a, during);
    verify(b, during);

    s.clock.ms += 3_600_000 + 1000; // the overlap is over: only the new secret signs
    await order(s, { callback_url: s.receiver.url() });
    await s.dispatcher.tick();
    const [, , after] = await s.receiver.waitFor(3);
    expect(String(after?.headers["webhook-signature"]).split(" ")).toHaveLength(1);
    verify(b, after);
    expect(() => verify(a, after)).toThrow();
    const config = (await s.h.get(WEBHOOKS, { "x-api-key": s.key })).json();
    expect(config.secrets.length).toBeGreaterThanOrEqual(1);
    expect(JSON.stringify(config)).not.toContain(b.slice(6)); // the value is never shown again
  });

  it("writes an event only when the change has a recipient; an endpoint set later gets later changes", async () => {
    const s = await setup();
    await rotate(s);
    const before = await order(s);
    expect(await s.h.services.store.webhooks.eventsOfOrder(before.order_id)).toEqual([]);
    const set = await s.h.post(
      `${WEBHOOKS}/endpoint`,
      { url: s.receiver.url("/late") },
      { "x-api-key": s.key },
    );
    expect(set.statusCode, set.body).toBe(200);
    // The order's next change has a recipient now: its event is written and delivered, the earlier one
    // was never written.
    const cancelled = await s.h.post(
      CANCEL,
      { order_id: before.order_id, reason: "changed plans" },
      { "x-api-key": s.key },
    );
    expect(cancelled.statusCode, cancelled.body).toBe(200);
    const events = await s.h.services.store.webhooks.eventsOfOrder(before.order_id);
    expect(events.map((e) => e.type)).toEqual(["order.cancelled"]);
    await s.dispatcher.tick();
    const [hook] = await s.receiver.waitFor(1);
    expect(hook?.path).toBe("/late");
    expect(JSON.parse(hook?.body ?? "{}")).toMatchObject({ type: "order.cancelled" });
    // An order with its own callback_url always has a recipient.
    const s2 = await setup();
    const own = await order(s2, { callback_url: s2.receiver.url("/own") });
    expect((await s2.h.services.store.webhooks.eventsOfOrder(own.order_id)).length).toBe(1);
  });

  it("keeps each account's and mode's webhooks to themselves", async () => {
    const s = await setup();
    await rotate(s);
    await order(s, { callback_url: s.receiver.url() });
    await s.dispatcher.tick();
    await s.receiver.waitFor(1);
    const [mine] = await deliveries(s);
    const config = (await s.h.get(WEBHOOKS, { "x-api-key": s.key })).json();
    const other = await s.h.key("other-co", "test");
    expect(await deliveries(s, "", other)).toEqual([]);
    expect((await s.h.get(WEBHOOKS, { "x-api-key": other })).json().endpoints).toEqual([]);
    expectProblem(
      await s.h.post(`${WEBHOOKS}/redeliver`, { delivery_id: mine?.delivery_id }, { "x-api-key": other }),
      404,
      "not_found",
    );
    expectProblem(
      await s.h.post(
        `${WEBHOOKS}/endpoint/enable`,
        { endpoint_id: config.endpoints[0].endpoint_id },
        { "x-api-key": other },
      ),
      404,
      "not_found",
    );
    // A live key of the same account sees none of its sandbox webhooks.
    const live = await s.h.key("sandbox", "live");
    expect(await deliveries(s, "", live)).toEqual([]);
  });
});

describe("webhook endpoints that could never be delivered", () => {
  it("refuses private addresses and, for live keys, plain http (422 naming the field)", async () => {
    const h = await createHarness();
    cleanups.push(() => h.close());
    const test = h.sandboxKey;
    const live = await h.key("acme", "live");
    for (const [key, url] of [
      [test, "http://127.0.0.1/hook"],
      [test, "http://169.254.169.254/latest"],
      [test, "https://localhost/hook"],
      [live, "http://hooks.example.com/hook"],
      [test, "not a url"],
    ] as const) {
      const res = await h.post(`${WEBHOOKS}/endpoint`, { url }, { "x-api-key": key });
      const body = expectProblem(res, 422, "validation_failed");
      expect(body.errors[0].field).toBe("url");
    }
    const ok = await h.post(
      `${WEBHOOKS}/endpoint`,
      { url: "https://hooks.example.com/hook" },
      { "x-api-key": live },
    );
    expect(ok.statusCode, ok.body).toBe(200);
    const cleared = await h.post(`${WEBHOOKS}/endpoint`, { url: null }, { "x-api-key": live });
    expect(cleared.json()).toEqual({ endpoint: null });
    const bad = await h.post(`${WEBHOOKS}/secret`, { overlap_hours: 500 }, { "x-api-key": live });
    expect(expectProblem(bad, 422, "validation_failed").errors[0].field).toBe("overlap_hours");
  });
});
