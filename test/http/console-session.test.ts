// The web console's session: an API key exchanged once for an HttpOnly cookie that the API's operations
// take in place of the key, with the same checks (revocation, key kind), an idle expiry, and for every
// state-changing request the service's own Origin and the session's CSRF token.

import { createHash } from "node:crypto";
import type { LightMyRequestResponse } from "fastify";
import { beforeAll, describe, expect, it } from "vitest";
import { createHarness, type Harness, ORDER_PATH, validOrder } from "../helpers/harness.js";
import { openStream } from "../helpers/sse-client.js";
import { type TestClock, testClock } from "../helpers/test-clock.js";

const SESSION = "/console/session";
const ORDERS = "/api/dispatcher/v1/orders";
const CANCEL = "/api/dispatcher/v1/orders/cancel";
// app.inject's requests reach the service as Host localhost:80: that is its own origin here.
const OWN = "http://localhost";

interface Signed {
  cookie: string;
  csrf: string;
  setCookie: string;
  body: Record<string, unknown>;
}

function problemCode(res: LightMyRequestResponse): string {
  return (res.json() as { code: string }).code;
}

async function signIn(h: Harness, apiKey: string, headers: Record<string, string> = {}): Promise<Signed> {
  const res = await h.post(SESSION, { api_key: apiKey }, { origin: OWN, ...headers });
  expect(res.statusCode, res.body).toBe(200);
  const setCookie = String(res.headers["set-cookie"]);
  const value = /^fd_console=([^;]+)/.exec(setCookie)?.[1] as string;
  const body = res.json() as Record<string, unknown>;
  return { cookie: `fd_console=${value}`, csrf: body.csrf_token as string, setCookie, body };
}

/** A write with the session: own Origin and the CSRF token unless the test overrides them. */
function write(h: Harness, s: Signed, url: string, body: unknown, headers: Record<string, string> = {}) {
  return h.post(url, body, { cookie: s.cookie, origin: OWN, "x-csrf-token": s.csrf, ...headers });
}

async function needsDispatcher(h: Harness, accountKey: string): Promise<string> {
  // No live contractor does locksmith work: the order waits for the dispatch team.
  const res = await h.post(ORDER_PATH, validOrder({ trade: "locksmith" }), { "x-api-key": accountKey });
  expect(res.json().status).toBe("needs_dispatcher");
  return res.json().order_id as string;
}

describe("the console session", () => {
  let h: Harness;
  let clock: TestClock;
  let dispatcher: string;
  let account: string;

  beforeAll(async () => {
    clock = testClock();
    h = await createHarness({ CONSOLE_SESSION_IDLE_MINUTES: "30" }, {}, { now: clock.now });
    dispatcher = await h.dispatcherKey("live");
    account = await h.key("acme", "live");
  });

  it("exchanges a key for an HttpOnly, SameSite=Strict cookie and answers the key's kind and a CSRF token", async () => {
    const s = await signIn(h, dispatcher);
    expect(s.setCookie).toMatch(/^fd_console=[A-Za-z0-9_-]{43}; /);
    expect(s.setCookie).toContain("HttpOnly");
    expect(s.setCookie).toContain("SameSite=Strict");
    expect(s.setCookie).toContain("Path=/");
    expect(s.setCookie).not.toContain("Secure"); // served over plain http here
    expect(s.body).toMatchObject({ kind: "dispatcher", livemode: true, contractor_id: null });
    expect(s.csrf).toMatch(/^[A-Za-z0-9_-]{43}$/);
    // Stored only as a hash: the cookie's value appears nowhere in the table.
    const raw = s.cookie.slice("fd_console=".length);
    const sessions = h.services.store.consoleSessions;
    expect(await sessions.find(raw)).toBeUndefined();
    const stored = await sessions.find(createHash("sha256").update(raw).digest("hex"));
    expect(stored?.csrf_token).toBe(s.csrf);
    const who = await h.get(SESSION, { cookie: s.cookie });
    expect(who.statusCode).toBe(200);
    expect(who.json()).toMatchObject({ kind: "dispatcher", csrf_token: s.csrf });
    expect(who.headers["cache-control"]).toBe("no-store");
  });

  it("marks the cookie Secure when the service is reached over https", async () => {
    const other = await createHarness({ PUBLIC_BASE_URL: "https://dispatch.example.com" });
    const key = await other.dispatcherKey("test");
    const s = await signIn(other, key, { origin: "https://dispatch.example.com" });
    expect(s.setCookie).toContain("Secure");
    await other.close();
  });

  it("takes the key from a form too, answering with a redirect to the console", async () => {
    const res = await h.app.inject({
      method: "POST",
      url: SESSION,
      headers: { "content-type": "application/x-www-form-urlencoded", origin: OWN },
      payload: new URLSearchParams({ api_key: dispatcher }).toString(),
    });
    expect(res.statusCode).toBe(303);
    expect(res.headers.location).toBe("/console/");
    expect(String(res.headers["set-cookie"])).toMatch(/^fd_console=/);
  });

  it("refuses a bad key, a missing key and a sign-in from another site", async () => {
    const bad = await h.post(SESSION, { api_key: "fsd_live_nope" }, { origin: OWN });
    expect(bad.statusCode).toBe(401);
    expect(problemCode(bad)).toBe("invalid_api_key");
    expect(bad.headers["set-cookie"]).toBeUndefined();
    const missing = await h.post(SESSION, {}, { origin: OWN });
    expect(missing.statusCode).toBe(422);
    expect(problemCode(missing)).toBe("validation_failed");
    const foreign = await h.post(SESSION, { api_key: dispatcher }, { origin: "https://evil.example" });
    expect(foreign.statusCode).toBe(403);
    expect(problemCode(foreign)).toBe("forbidden_origin");
  });

  it("lets a good session read and write through the API's own operations", async () => {
    const s = await signIn(h, dispatcher);
    const orderId = await needsDispatcher(h, account);
    const read = await h.get(`${ORDERS}?status=needs_dispatcher`, { cookie: s.cookie });
    expect(read.statusCode, read.body).toBe(200);
    expect((read.json().orders as Array<{ order_id: string }>).map((o) => o.order_id)).toContain(orderId);
    const cancelled = await write(h, s, CANCEL, { order_id: orderId, reason: "duplicate" });
    expect(cancelled.statusCode, cancelled.body).toBe(200);
    expect(cancelled.json().status).toBe("cancelled");
    // The event stream takes the cookie too (its JSON page here; EventSource gets the stream).
    const events = await h.get("/api/events", { cookie: s.cookie, accept: "application/json" });
    expect(events.statusCode).toBe(200);
    const types = (events.json().events as Array<{ data: { order_id?: string } }>).map((e) => e.data);
    expect(types.length).toBeGreaterThan(0);
  });

  it("applies the key's kind: an account's session may not call the dispatch team's operations", async () => {
    const s = await signIn(h, account);
    expect(s.body.kind).toBe("account");
    const res = await h.get(ORDERS, { cookie: s.cookie });
    expect(res.statusCode).toBe(403);
    expect(problemCode(res)).toBe("key_kind_not_allowed");
    expect((await h.get("/api/dispatch/v1/orders", { cookie: s.cookie })).statusCode).toBe(200);
  });

  it("refuses a forged or malformed cookie", async () => {
    for (const cookie of [`fd_console=${"A".repeat(43)}`, "fd_console=not-a-session", "fd_console="]) {
      const res = await h.get(ORDERS, { cookie });
      expect(res.statusCode, cookie).toBe(401);
      expect(problemCode(res)).toBe("invalid_session");
    }
    const who = await h.get(SESSION, { cookie: `fd_console=${"B".repeat(43)}` });
    expect(who.statusCode).toBe(401);
    expect(problemCode(await h.get(SESSION))).toBe("invalid_session");
  });

  it("refuses a state-changing request from another origin, or without one", async () => {
    const s = await signIn(h, dispatcher);
    const orderId = await needsDispatcher(h, account);
    const foreign = await write(
      h,
      s,
      CANCEL,
      { order_id: orderId, reason: "x" },
      { origin: "https://evil.example" },
    );
    expect(foreign.statusCode).toBe(403);
    expect(problemCode(foreign)).toBe("forbidden_origin");
    const noOrigin = await h.post(
      CANCEL,
      { order_id: orderId, reason: "x" },
      {
        cookie: s.cookie,
        "x-csrf-token": s.csrf,
      },
    );
    expect(noOrigin.statusCode).toBe(403);
    expect(problemCode(noOrigin)).toBe("forbidden_origin");
    const still = await h.get(`/api/dispatcher/v1/orders?status=needs_dispatcher`, { cookie: s.cookie });
    expect((still.json().orders as Array<{ order_id: string }>).map((o) => o.order_id)).toContain(orderId);
  });

  it("refuses a state-changing request without the session's CSRF token", async () => {
    const s = await signIn(h, dispatcher);
    const other = await signIn(h, dispatcher);
    const orderId = await needsDispatcher(h, account);
    const missing = await h.post(
      CANCEL,
      { order_id: orderId, reason: "x" },
      { cookie: s.cookie, origin: OWN },
    );
    expect(missing.statusCode).toBe(403);
    expect(problemCode(missing)).toBe("csrf_token_mismatch");
    const wrong = await write(
      h,
      s,
      CANCEL,
      { order_id: orderId, reason: "x" },
      { "x-csrf-token": "x".repeat(43) },
    );
    expect(wrong.statusCode).toBe(403);
    expect(problemCode(wrong)).toBe("csrf_token_mismatch");
    // Another session's token is not this session's.
    const crossed = await write(
      h,
      s,
      CANCEL,
      { order_id: orderId, reason: "x" },
      { "x-csrf-token": other.csrf },
    );
    expect(crossed.statusCode).toBe(403);
    expect(problemCode(crossed)).toBe("csrf_token_mismatch");
    const [row] = await h.services.store.orders.byIds([orderId]);
    expect(row?.status).toBe("needs_dispatcher");
  });

  it("still takes an explicit API key as before, with no CSRF token, whatever cookie comes along", async () => {
    const orderId = await needsDispatcher(h, account);
    const res = await h.post(
      CANCEL,
      { order_id: orderId, reason: "duplicate" },
      {
        "x-api-key": dispatcher,
        cookie: `fd_console=${"C".repeat(43)}`,
        origin: "https://evil.example",
      },
    );
    expect(res.statusCode, res.body).toBe(200);
  });

  it("expires after the idle time, and each use moves the expiry on", async () => {
    const s = await signIn(h, dispatcher);
    clock.advance(20 * 60_000);
    expect((await h.get(ORDERS, { cookie: s.cookie })).statusCode).toBe(200);
    clock.advance(20 * 60_000); // 40 minutes since sign-in, 20 since the last use
    expect((await h.get(ORDERS, { cookie: s.cookie })).statusCode).toBe(200);
    clock.advance(31 * 60_000);
    const expired = await h.get(ORDERS, { cookie: s.cookie });
    expect(expired.statusCode).toBe(401);
    expect(problemCode(expired)).toBe("invalid_session");
    expect((await h.get(SESSION, { cookie: s.cookie })).statusCode).toBe(401);
  });

  it("stops working as soon as its key is revoked", async () => {
    const issued = await h.services.keys.issue({
      accountName: "ops",
      mode: "live",
      actor: "operator:test",
      kind: "dispatcher",
    });
    const s = await signIn(h, issued.key);
    expect((await h.get(ORDERS, { cookie: s.cookie })).statusCode).toBe(200);
    expect(await h.services.keys.revoke(issued.id, "operator:test")).toBe("revoked");
    const read = await h.get(ORDERS, { cookie: s.cookie });
    expect(read.statusCode).toBe(401);
    expect(problemCode(read)).toBe("api_key_revoked");
    expect((await h.get(SESSION, { cookie: s.cookie })).statusCode).toBe(401);
    const again = await h.post(SESSION, { api_key: issued.key }, { origin: OWN });
    expect(problemCode(again)).toBe("api_key_revoked");
  });

  it("signs out: the session ends and the cookie is cleared; a live session is ended by its own console only", async () => {
    const s = await signIn(h, dispatcher);
    const forged = await h.app.inject({
      method: "DELETE",
      url: SESSION,
      headers: { cookie: s.cookie, origin: OWN },
    });
    expect(forged.statusCode).toBe(403);
    expect(problemCode(forged)).toBe("csrf_token_mismatch");
    const out = await h.app.inject({
      method: "DELETE",
      url: SESSION,
      headers: { cookie: s.cookie, origin: OWN, "x-csrf-token": s.csrf },
    });
    expect(out.statusCode).toBe(204);
    expect(String(out.headers["set-cookie"])).toMatch(/^fd_console=; .*Max-Age=0/);
    const after = await h.get(ORDERS, { cookie: s.cookie });
    expect(after.statusCode).toBe(401);
    expect(problemCode(after)).toBe("invalid_session");
  });
});

describe("the console session's event stream (issue 28, item 20)", () => {
  it("ends with a stream.closed event once the session signs out", async () => {
    // Checked every API_KEY_CACHE_TTL_MS.
    const h = await createHarness({ API_KEY_CACHE_TTL_MS: "50" });
    try {
      const account = await h.key("streamer", "live");
      const base = await h.app.listen({ port: 0, host: "127.0.0.1" });
      const s = await signIn(h, account);
      const events = await openStream(base, "", { cookie: s.cookie });
      expect(events.status, events.body).toBe(200);
      const order = await h.post(ORDER_PATH, validOrder({ trade: "locksmith" }), {
        cookie: s.cookie,
        origin: OWN,
        "x-csrf-token": s.csrf,
      });
      expect(order.statusCode, order.body).toBe(200);
      await events.next((e) => e.data.data.order?.order_id === order.json().order_id);
      const out = await h.app.inject({
        method: "DELETE",
        url: SESSION,
        headers: { cookie: s.cookie, origin: OWN, "x-csrf-token": s.csrf },
      });
      expect(out.statusCode).toBe(204);
      const closed = await events.next((e) => e.event === "stream.closed");
      expect(closed.data).toMatchObject({ status: 401, code: "invalid_session" });
      await events.ended;
    } finally {
      await h.close();
    }
  });
});
