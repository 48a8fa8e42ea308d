// The live event stream (GET /api/events): each key sees exactly its own scope (an account its orders, a
// contractor its offers and jobs and the events that take one away, the dispatch team every order of its
// mode), resumes exactly after Last-Event-ID, keeps the connection alive with comments, holds a bounded
// number of streams per key, ends once its key is revoked, and is not an agent tool.

import { afterEach, describe, expect, it } from "vitest";
import { ApiKeyService } from "../../src/auth/api-key-service.js";
import { MAX_OFFERS } from "../../src/domain/orders/policy.js";
import { AGENT_OPERATIONS } from "../../src/operations/registry.js";
import { liveContractor, testRecord } from "../helpers/fixtures.js";
import { createHarness, type Harness, ORDER_PATH } from "../helpers/harness.js";
import { openStream, type SseEvent, type SseStream } from "../helpers/sse-client.js";

const DECLINE = "/api/contractor/v1/offers/decline";
const CANCEL = "/api/dispatch/v1/orders/cancel";
const ASSIGN = "/api/dispatcher/v1/orders/assign";
const JOB = {
  trade: "plumbing",
  location: { state: "CA", zip: "94103", address: "1 Market St" },
  description: "Leak under the sink",
};

const harnesses: Harness[] = [];
const streams: SseStream[] = [];
afterEach(async () => {
  for (const s of streams.splice(0)) s.close();
  for (const h of harnesses.splice(0)) await h.close();
});

/** A listening server with `n` live plumbers (ids[0] ranked first), two callers, their contractors' keys
 * and the dispatch team's key. */
async function setup(env: Record<string, string> = {}, n = MAX_OFFERS + 1) {
  const h = await createHarness(env);
  harnesses.push(h);
  const ids = Array.from({ length: n }, (_, i) => `ctr_ev${i}${Math.random().toString(36).slice(2, 8)}`);
  await h.services.store.contractors.insert(
    ids.map((id, i) => liveContractor({ id, rating: 4.9 - i * 0.2, maxActiveJobs: 3 })),
    testRecord(),
  );
  await h.services.pool.load();
  const contractorKeys: string[] = [];
  for (const id of ids) {
    const issued = await h.services.keys.issue({
      accountName: "crew",
      mode: "live",
      actor: "operator:test",
      kind: "contractor",
      contractorId: id,
    });
    contractorKeys.push(issued.key);
  }
  const base = await h.app.listen({ port: 0, host: "127.0.0.1" });
  return {
    h,
    base,
    ids,
    contractorKeys,
    acme: await h.key("acme", "live"),
    other: await h.key("other", "live"),
    dispatcher: await h.dispatcherKey("live"),
  };
}

async function stream(base: string, key: string, headers: Record<string, string> = {}) {
  const s = await openStream(base, key, headers);
  streams.push(s);
  expect(s.status, s.body).toBe(200);
  return s;
}

async function order(h: Harness, key: string): Promise<string> {
  const res = await h.post(ORDER_PATH, JOB, { "x-api-key": key });
  expect(res.statusCode, res.body).toBe(200);
  return res.json().order_id as string;
}

const about = (orderId: string, type?: string) => (e: SseEvent) =>
  (e.data.data.order?.order_id ?? e.data.data.order_id) === orderId &&
  (type === undefined || e.event === type);

const orderIdOf = (e: SseEvent) => (e.data.data.order?.order_id ?? e.data.data.order_id) as string;

describe("the event stream", () => {
  it("shows each key its own scope only, with the account's handles and the dispatch team's ids", async () => {
    const { h, base, ids, contractorKeys, acme, other, dispatcher } = await setup();
    const [c0, c1] = ids as [string, string];
    const [k0, k1] = contractorKeys as [string, string];
    const sAcme = await stream(base, acme);
    const sOther = await stream(base, other);
    const sOps = await stream(base, dispatcher);
    const s0 = await stream(base, k0);
    const s1 = await stream(base, k1);
    expect(sAcme.headers["content-type"]).toMatch(/^text\/event-stream/);
    expect(sAcme.headers["request-id"]).toBeTruthy();

    // acme's order is offered to c0, the best-ranked plumber.
    const first = await order(h, acme);
    const offered = await sAcme.next(about(first, "order.offered"));
    expect(offered.id).toBe(offered.data.id);
    expect(offered.data.data.order?.contractor_ref).toBe(await h.refOf(acme, c0));
    expect(offered.data.data.previous_status).toBe("received");
    const board = await sOps.next(about(first, "order.offered"));
    expect(board.data.data.order).toMatchObject({ contractor_id: c0, contractor_ref: null });
    const mine = await s0.next(about(first, "order.offered"));
    expect(mine.data.data).toMatchObject({ held: true, job: null });
    const offer = mine.data.data.offer as { offer_id: string; order_id: string };
    expect(offer.order_id).toBe(first);

    // c0 declines: the job passes to c1. c0 hears it is no longer its own, and nothing of c1.
    const declined = await h.post(DECLINE, { offer_id: offer.offer_id }, { "x-api-key": k0 });
    expect(declined.statusCode, declined.body).toBe(200);
    const gone = await s0.next((e) => about(first)(e) && e.id !== mine.id);
    expect(gone.data.data).toMatchObject({ held: false, offer: null, job: null });
    expect(JSON.stringify(gone.data)).not.toContain(c1);
    const reached = await s1.next(about(first, "order.offered"));
    expect(reached.data.data).toMatchObject({ held: true });
    expect((await sOps.next((e) => about(first)(e) && e.id === reached.id)).data.data.order).toMatchObject({
      contractor_id: c1,
    });

    // The other account's order, then acme's cancellation: the last event every stream can see.
    const second = await order(h, other);
    await sOther.next(about(second, "order.offered"));
    const cancelled = await h.post(CANCEL, { order_id: first }, { "x-api-key": acme });
    expect(cancelled.statusCode, cancelled.body).toBe(200);
    await sAcme.next(about(first, "order.cancelled"));
    await sOps.next(about(first, "order.cancelled"));
    await s1.next(about(first, "order.cancelled"));
    // A dispatcher assigns the other account's order to c0: c0's last event (ids come in order, so
    // once it arrived c0 was sent all it ever will be of what came before).
    const assigned = await h.post(
      ASSIGN,
      { order_id: second, contractor_id: c0, reason: "regular plumber" },
      { "x-api-key": dispatcher },
    );
    expect(assigned.statusCode, assigned.body).toBe(200);
    const now0 = await s0.next(about(second, "order.accepted"));
    expect(now0.data.data).toMatchObject({ held: true, offer: null });
    await sOther.next(about(second, "order.accepted"));
    await sOps.next(about(second, "order.accepted"));

    expect(sAcme.events.map(orderIdOf).every((id) => id === first)).toBe(true);
    expect(sOther.events.map(orderIdOf).every((id) => id === second)).toBe(true);
    // c0 never saw its job's cancellation, which happened after the job left it.
    expect(s0.events.filter(about(first)).map((e) => e.id)).toEqual([mine.id, gone.id]);
    // c1 had nothing to do with the second order.
    expect(s1.events.some(about(second))).toBe(false);
    // The stream's ids increase, and its events are the webhooks' types.
    const opsIds = sOps.events.map((e) => Number(e.id));
    expect(opsIds).toEqual([...opsIds].sort((a, b) => a - b));
    expect(new Set(opsIds).size).toBe(opsIds.length);
    // Nothing of a live account's orders reaches the sandbox's keys.
    const sandbox = await openStream(base, h.sandboxKey, { "last-event-id": "0" });
    streams.push(sandbox);
    const page = await h.get("/api/events?after=0", {
      "x-api-key": h.sandboxKey,
      accept: "application/json",
    });
    expect(page.json().events).toEqual([]);
    expect(sandbox.events).toEqual([]);
  });

  it("resumes exactly after Last-Event-ID, from the log, and pages it as JSON", async () => {
    const { h, base, acme, dispatcher } = await setup();
    const live = await stream(base, dispatcher);
    const orders = [await order(h, acme), await order(h, acme), await order(h, acme)];
    for (const id of orders) await live.next(about(id, "order.offered"));
    const [firstEvent] = live.events;
    const expected = live.events.slice(1).map((e) => e.id);

    const resumed = await stream(base, dispatcher, { "last-event-id": firstEvent?.id ?? "" });
    const lastId = expected[expected.length - 1] as string;
    await resumed.next((e) => e.id === lastId);
    // Then live again, no gap and no repeat.
    const fourth = await order(h, acme);
    await resumed.next(about(fourth, "order.offered"));
    const after = await live.next(about(fourth, "order.offered"));
    expect(resumed.events.map((e) => e.id)).toEqual([...expected, after.id]);
    expect(resumed.events.at(-1)?.data).toEqual(after.data);

    // `after` in the query does the same; Last-Event-ID wins over it.
    const byQuery = await openStream(base, dispatcher, {}, `/api/events?after=${firstEvent?.id}`);
    streams.push(byQuery);
    await byQuery.next((e) => e.id === after.id);
    expect(byQuery.events.map((e) => e.id)).toEqual([...expected, after.id]);

    const page = await h.get(`/api/events?after=${firstEvent?.id}&limit=2`, {
      "x-api-key": acme,
      accept: "application/json",
    });
    expect(page.statusCode, page.body).toBe(200);
    expect(page.json().events.map((e: { id: string }) => e.id)).toEqual(expected.slice(0, 2));
    expect(page.json().last_event_id).toBe(expected[1]);
    const bad = await h.get("/api/events?after=x", { "x-api-key": acme, accept: "application/json" });
    expect(bad.statusCode).toBe(422);
  });

  it("tells the dispatch team's stream, and no other, when a contractor's time off or standing changes", async () => {
    const { h, base, ids, acme, contractorKeys, dispatcher } = await setup({}, 2);
    const live = await stream(base, dispatcher);
    const asDispatcher = { "x-api-key": dispatcher };
    const start = new Date(Date.now() + 86_400_000).toISOString();
    const end = new Date(Date.now() + 2 * 86_400_000).toISOString();
    const added = await h.post(
      "/api/dispatcher/v1/time-off",
      { contractor_id: ids[0], start, end, reason: "dentist" },
      asDispatcher,
    );
    expect(added.statusCode, added.body).toBe(200);
    const off = await live.next((e) => e.event === "pool.contractor_changed");
    expect(off.data).toMatchObject({
      type: "pool.contractor_changed",
      livemode: true,
      data: { change: "pool.time_off_added", contractor_id: ids[0], seal: expect.stringMatching(/^seal_/) },
    });
    const paused = await h.post(
      "/api/dispatcher/v1/contractors/status",
      { contractor_id: ids[1], action: "deactivate", reason: "on leave" },
      asDispatcher,
    );
    expect(paused.statusCode, paused.body).toBe(200);
    const standing = await live.next((e) => e.event === "pool.contractor_changed" && e.id !== off.id);
    expect(standing.data.data).toMatchObject({ change: "pool.changed", contractor_id: ids[1] });
    // The seal is the audit record's: the change is read there in full.
    const audit = await h.get("/api/dispatcher/v1/audit?kind=pool.changed", asDispatcher);
    expect(audit.json().records.map((r: { seal: string }) => r.seal)).toContain(standing.data.data.seal);
    // An account's key and the contractor's own see none of it (pool events name no order).
    for (const key of [acme, contractorKeys[0] as string]) {
      const page = await h.get("/api/events?after=0", { "x-api-key": key, accept: "application/json" });
      expect(page.json().events.filter((e: { type: string }) => e.type.startsWith("pool."))).toEqual([]);
    }
  });

  it("sends a heartbeat comment every EVENTS_HEARTBEAT_MS", async () => {
    const { base, acme } = await setup({ EVENTS_HEARTBEAT_MS: "20" });
    const s = await stream(base, acme);
    await s.comment(4);
    expect(s.comments.slice(1).every((c) => c === ":")).toBe(true);
  });

  it("holds EVENTS_MAX_STREAMS_PER_KEY streams per key, and frees one when its client goes", async () => {
    const { base, acme, other } = await setup({ EVENTS_MAX_STREAMS_PER_KEY: "1" });
    const first = await stream(base, acme);
    const refused = await openStream(base, acme);
    expect(refused.status).toBe(429);
    expect(JSON.parse(refused.body).code).toBe("rate_limited");
    await stream(base, other); // another key is not affected
    first.close();
    for (let tries = 0; ; tries++) {
      const again = await openStream(base, acme);
      streams.push(again);
      if (again.status === 200) break;
      expect(tries).toBeLessThan(100);
      await new Promise((r) => setTimeout(r, 20));
    }
  });

  it("ends the stream with a stream.closed event once its key is revoked elsewhere (issue 28, item 20)", async () => {
    // The key cache lives API_KEY_CACHE_TTL_MS; the stream is checked as often.
    const { h, base } = await setup({ API_KEY_CACHE_TTL_MS: "50" });
    const issued = await h.services.keys.issue({
      accountName: "leaver",
      mode: "live",
      actor: "operator:test",
    });
    const s = await stream(base, issued.key);
    const id = await order(h, issued.key);
    await s.next(about(id, "order.offered"));
    // Revoked by another process (the operator's CLI): this process's key cache is not told.
    expect(await new ApiKeyService(h.services.store, 0).revoke(issued.id, "operator:test")).toBe("revoked");
    const closed = await s.next((e) => e.event === "stream.closed");
    expect(closed.id).toBe("");
    expect(closed.data).toMatchObject({ status: 401, code: "api_key_revoked", instance: "/api/events" });
    await s.ended;
    expect(s.events[s.events.length - 1]).toBe(closed);
  });

  it("refuses a missing key, and is REST only", async () => {
    const { h } = await setup();
    const res = await h.get("/api/events", { accept: "application/json" });
    expect(res.statusCode).toBe(401);
    expect(AGENT_OPERATIONS.some((op) => op.id === "dispatchEvents")).toBe(false);
  });
});
