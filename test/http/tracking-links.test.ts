// Tracking links (issue 35, step 1) end to end: an account issues its order's link (one in force, the
// same one again), the public page, its JSON and its live stream show the job's progress and nothing of
// the contractor's contact, the price or the account; a revocation ends the page and its open stream at
// once; the link expires TRACKING_LINK_DAYS_AFTER_CLOSE after the order closed (an injected clock); a
// tampered, unknown, revoked or expired token answers one identical 404; and the public routes are
// limited per token and per client IP.

import { afterEach, describe, expect, it } from "vitest";
import { trackingViewSchema } from "../../src/operations/tracking/tracking-view.js";
import { liveContractor, testRecord } from "../helpers/fixtures.js";
import { createHarness, type Harness, ORDER_PATH } from "../helpers/harness.js";
import { openStream, type SseStream } from "../helpers/sse-client.js";
import { testClock } from "../helpers/test-clock.js";

const LINKS = "/api/dispatch/v1/tracking-links";
const REVOKE = "/api/dispatch/v1/tracking-links/revoke";
const OFFERS = "/api/contractor/v1/offers";
const ACCEPT = "/api/contractor/v1/offers/accept";
const STATUS = "/api/contractor/v1/jobs/status";
const JOB = {
  trade: "plumbing",
  location: { state: "CA", zip: "94103", address: "1 Market St", name: "Acme Store 7" },
  description: "Leak under the sink",
  nte_cents: 45_000,
};
const DAY = 86_400_000;

const harnesses: Harness[] = [];
const streams: SseStream[] = [];
afterEach(async () => {
  for (const s of streams.splice(0)) s.close();
  for (const h of harnesses.splice(0)) await h.close();
});

/** A harness on an injected clock with one live plumber (a full name, a phone and an email), the
 * plumber's key, and two accounts. */
async function setup(env: Record<string, string> = {}) {
  const clock = testClock();
  const h = await createHarness(env, {}, { now: clock.now });
  harnesses.push(h);
  const tag = Math.random().toString(36).slice(2, 8);
  const id = `ctr_trk${tag}`;
  await h.services.store.contractors.insert(
    [
      liveContractor({
        id,
        name: "Maria Lopez-Secretname",
        phone: "+1-555-0199",
        email: "maria@secret-plumbing.example",
      }),
    ],
    testRecord(),
  );
  await h.services.pool.load();
  const issued = await h.services.keys.issue({
    accountName: `crew-${tag}`,
    mode: "live",
    actor: "operator:test",
    kind: "contractor",
    contractorId: id,
  });
  return {
    h,
    clock,
    plumber: issued.key,
    acme: await h.key(`Acme Retail Holdings ${tag}`, "live"),
    other: await h.key(`other-${tag}`, "live"),
  };
}

async function ok(res: Promise<{ statusCode: number; body: string; json(): unknown }>) {
  const r = await res;
  expect(r.statusCode, r.body).toBe(200);
  // biome-ignore lint/suspicious/noExplicitAny: JSON bodies.
  return r.json() as any;
}

/** An order of `key`'s, accepted by the plumber. */
async function acceptedOrder(h: Harness, key: string, plumber: string): Promise<string> {
  const order = await ok(h.post(ORDER_PATH, JOB, { "x-api-key": key }));
  const offers = await ok(h.get(OFFERS, { "x-api-key": plumber }));
  const offer = offers.offers.find((o: { order_id: string }) => o.order_id === order.order_id);
  expect(offer, JSON.stringify(offers)).toBeDefined();
  await ok(h.post(ACCEPT, { offer_id: offer.offer_id }, { "x-api-key": plumber }));
  return order.order_id;
}

const report = (h: Harness, plumber: string, body: Record<string, unknown>) =>
  ok(h.post(STATUS, body, { "x-api-key": plumber }));

const pathOf = (url: string) => new URL(url).pathname;

/** A 404's body without its request id (the one thing that differs between two requests). */
const problemOf = (body: string) => {
  const { request_id: _id, instance: _instance, ...rest } = JSON.parse(body) as Record<string, unknown>;
  return rest;
};

describe("tracking links", () => {
  it("issues one link per order, the same one again, and never another account's", async () => {
    const { h, acme, other, plumber } = await setup();
    const orderId = await acceptedOrder(h, acme, plumber);
    const link = await ok(h.post(LINKS, { order_id: orderId }, { "x-api-key": acme }));
    expect(link).toMatchObject({ order_id: orderId, state: "active", expires_at: null, revoked_at: null });
    expect(pathOf(link.url)).toMatch(/^\/t\/[0-9A-Za-z]{22}\.[0-9A-Za-z]{22}$/);
    expect(link.url).not.toContain(orderId);
    const again = await ok(h.post(LINKS, { order_id: orderId }, { "x-api-key": acme }));
    expect(again).toEqual(link);
    const listed = await ok(
      h.get(`/api/dispatch/v1/orders/${orderId}/tracking-links`, { "x-api-key": acme }),
    );
    expect(listed.links).toEqual([link]);
    const theirs = await h.post(LINKS, { order_id: orderId }, { "x-api-key": other });
    expect(theirs.statusCode).toBe(404);
    const bad = await h.post(LINKS, { order_id: "" }, { "x-api-key": acme });
    expect(bad.statusCode).toBe(422);
    expect(bad.json().errors.map((e: { field: string }) => e.field)).toEqual(["order_id"]);
    // Sealed: the issue's record, with the link's id and never its token's mac.
    const seals = await h.services.store.audit.orderSeals(orderId);
    const issued = seals.find((s) => s.kind === "tracking.link_issued");
    expect(issued).toBeDefined();
    const record = (await h.services.store.audit.findAudit(issued?.seal ?? "")).record;
    const [id, mac] = pathOf(link.url).slice(3).split(".") as [string, string];
    expect(JSON.parse(record?.record ?? "{}").data).toEqual({ link_id: id, order_id: orderId });
    expect(record?.record).not.toContain(mac);
  });

  it("shows the job's progress and the technician's first name, and nothing private", async () => {
    const { h, acme, plumber } = await setup();
    const orderId = await acceptedOrder(h, acme, plumber);
    const link = await ok(h.post(LINKS, { order_id: orderId }, { "x-api-key": acme }));
    const page = pathOf(link.url);
    const booked = trackingViewSchema.parse(await ok(h.get(`${page}/status`)));
    expect(booked).toMatchObject({ stage: "booked", technician: { first_name: "Maria", trade: "Plumbing" } });
    expect(booked.steps.map((s) => [s.step, s.done])).toEqual([
      ["accepted", true],
      ["en_route", false],
      ["on_site", false],
      ["completed", false],
    ]);
    await report(h, plumber, { order_id: orderId, status: "en_route", eta_minutes: 25 });
    const res = await h.get(`${page}/status`);
    expect(res.statusCode).toBe(200);
    const enRoute = trackingViewSchema.parse(res.json());
    expect(enRoute.stage).toBe("en_route");
    expect(enRoute.eta_at).not.toBeNull();
    expect(enRoute.steps[1]).toMatchObject({ step: "en_route", done: true });
    expect(enRoute.steps[1]?.at).not.toBeNull();
    for (const secret of [
      "555",
      "secret-plumbing",
      "Lopez",
      "Secretname",
      "Acme",
      "45000",
      "Market",
      orderId,
    ]) {
      expect(res.body).not.toContain(secret);
    }
    expect(res.headers["x-robots-tag"]).toContain("noindex");
    expect(res.headers["cache-control"]).toBe("no-store");
    expect(res.headers["set-cookie"]).toBeUndefined();
    const html = await h.get(page);
    expect(html.statusCode).toBe(200);
    expect(html.headers["content-type"]).toMatch(/^text\/html/);
    expect(html.headers["x-robots-tag"]).toContain("noindex");
    expect(html.headers["content-security-policy"]).toContain("script-src 'self'");
    expect(html.headers["referrer-policy"]).toBe("no-referrer");
    expect(html.body).toContain('<meta name="robots" content="noindex, nofollow">');
    // No inline script: the one script element loads the static file.
    expect(html.body.match(/<script[^>]*>/g)).toEqual(['<script src="/t/assets/tracking.js" defer>']);
    expect(html.body).not.toMatch(/<script[^>]*>[^<]/);
    const script = await h.get("/t/assets/tracking.js");
    expect(script.statusCode).toBe(200);
    expect(script.headers["content-type"]).toMatch(/^text\/javascript/);
    expect(script.body).not.toContain("innerHTML");
  });

  it("streams each change of the order, and a revocation ends the page and its stream at once", async () => {
    const { h, acme, plumber } = await setup();
    const base = await h.app.listen({ port: 0, host: "127.0.0.1" });
    const orderId = await acceptedOrder(h, acme, plumber);
    const link = await ok(h.post(LINKS, { order_id: orderId }, { "x-api-key": acme }));
    const page = pathOf(link.url);
    const stream = await openStream(base, "", {}, `${page}/events`);
    streams.push(stream);
    expect(stream.status, stream.body).toBe(200);
    expect(stream.headers["content-type"]).toMatch(/^text\/event-stream/);
    const stage = (s: string) => (e: { event: string; data: unknown }) =>
      e.event === "tracking.status" && (e.data as { stage?: string }).stage === s;
    await stream.next(stage("booked"));
    await report(h, plumber, { order_id: orderId, status: "en_route", eta_minutes: 20 });
    const enRoute = await stream.next(stage("en_route"));
    expect(trackingViewSchema.parse(enRoute.data).eta_at).not.toBeNull();
    await report(h, plumber, { order_id: orderId, status: "on_site" });
    await stream.next(stage("on_site"));
    expect(JSON.stringify(stream.events)).not.toContain("555");

    const revoked = await ok(
      h.post(REVOKE, { order_id: orderId, reason: "wrong contact" }, { "x-api-key": acme }),
    );
    expect(revoked).toMatchObject({ state: "revoked", url: null });
    await stream.next((e) => e.event === "stream.closed");
    await stream.ended;
    expect((await h.get(`${page}/status`)).statusCode).toBe(404);
    expect((await h.get(page)).statusCode).toBe(404);
    const again = await h.post(REVOKE, { order_id: orderId }, { "x-api-key": acme });
    expect(again.statusCode).toBe(404);
    // A new link: another token; the old one stays dead.
    const fresh = await ok(h.post(LINKS, { order_id: orderId }, { "x-api-key": acme }));
    expect(fresh.url).not.toBe(link.url);
    expect((await h.get(`${pathOf(fresh.url)}/status`)).statusCode).toBe(200);
    expect((await h.get(`${page}/status`)).statusCode).toBe(404);
    const seals = await h.services.store.audit.orderSeals(orderId);
    expect(seals.filter((s) => s.kind.startsWith("tracking.")).map((s) => s.kind)).toEqual([
      "tracking.link_issued",
      "tracking.link_revoked",
      "tracking.link_issued",
    ]);
  });

  it("expires N days after the order closed, and answers every dead token alike", async () => {
    const { h, clock, acme, plumber } = await setup({ TRACKING_LINK_DAYS_AFTER_CLOSE: "3" });
    const orderId = await acceptedOrder(h, acme, plumber);
    const link = await ok(h.post(LINKS, { order_id: orderId }, { "x-api-key": acme }));
    const page = pathOf(link.url);
    // Open, the link lives however long it takes.
    clock.advance(30 * DAY);
    expect((await h.get(`${page}/status`)).statusCode).toBe(200);
    await report(h, plumber, { order_id: orderId, status: "en_route", eta_minutes: 20 });
    await report(h, plumber, { order_id: orderId, status: "on_site" });
    await report(h, plumber, { order_id: orderId, status: "completed", final_cost_cents: 30_000 });
    const done = trackingViewSchema.parse(await ok(h.get(`${page}/status`)));
    expect(done.stage).toBe("completed");
    expect(done.steps.every((s) => s.done && s.at !== null)).toBe(true);
    expect(JSON.stringify(done)).not.toContain("30000");
    const listed = await ok(
      h.get(`/api/dispatch/v1/orders/${orderId}/tracking-links`, { "x-api-key": acme }),
    );
    const expiresAt = Date.parse(listed.links[0].expires_at);
    expect(expiresAt - Date.parse(h.services.now().toISOString())).toBeGreaterThan(3 * DAY - 60_000);
    clock.advance(3 * DAY - 60_000);
    expect((await h.get(`${page}/status`)).statusCode).toBe(200);
    clock.advance(120_000);
    const expired = await h.get(`${page}/status`);
    expect(expired.statusCode).toBe(404);
    const expiredPage = await h.get(page);
    expect(expiredPage.statusCode).toBe(404);
    expect(
      (await ok(h.get(`/api/dispatch/v1/orders/${orderId}/tracking-links`, { "x-api-key": acme }))).links[0]
        .state,
    ).toBe("expired");

    // A tampered mac, a tampered id, a made-up token, another shape: the same answer as the expired one.
    const token = page.slice(3);
    const [id, mac] = token.split(".") as [string, string];
    const flip = (s: string) => (s[0] === "A" ? "B" : "A") + s.slice(1);
    for (const dead of [
      `${id}.${flip(mac)}`,
      `${flip(id)}.${mac}`,
      `${"x".repeat(22)}.${"y".repeat(22)}`,
      "nope",
    ]) {
      const res = await h.get(`/t/${dead}/status`);
      expect(res.statusCode, dead).toBe(404);
      expect(problemOf(res.body)).toEqual(problemOf(expired.body));
      const html = await h.get(`/t/${dead}`);
      expect(html.statusCode).toBe(404);
      expect(html.body).toBe(expiredPage.body);
      expect((await h.get(`/t/${dead}/events`)).statusCode).toBe(404);
    }
  });

  it("holds a bounded number of live streams per link", async () => {
    const { h, acme, plumber } = await setup({ TRACKING_MAX_STREAMS_PER_LINK: "2" });
    const base = await h.app.listen({ port: 0, host: "127.0.0.1" });
    const orderId = await acceptedOrder(h, acme, plumber);
    const link = await ok(h.post(LINKS, { order_id: orderId }, { "x-api-key": acme }));
    const events = `${pathOf(link.url)}/events`;
    const open = async () => {
      const s = await openStream(base, "", {}, events);
      streams.push(s);
      return s;
    };
    const [a, b] = [await open(), await open()];
    expect([a.status, b.status]).toEqual([200, 200]);
    const third = await open();
    expect(third.status).toBe(429);
    expect(third.headers["retry-after"]).toBe("5");
    // One closed: its place is free again (once the server has seen it go).
    a.close();
    let again = await open();
    for (let i = 0; again.status !== 200 && i < 50; i++) {
      await new Promise((resolve) => setTimeout(resolve, 20));
      again = await open();
    }
    expect(again.status).toBe(200);
  });

  it("limits the public routes per token and per client IP", async () => {
    const { h, acme, plumber } = await setup({
      TRACKING_TOKEN_RATE_LIMIT_PER_MINUTE: "1",
      TRACKING_TOKEN_RATE_LIMIT_BURST: "3",
      TRACKING_IP_RATE_LIMIT_PER_MINUTE: "1",
      TRACKING_IP_RATE_LIMIT_BURST: "6",
    });
    const orderId = await acceptedOrder(h, acme, plumber);
    const link = await ok(h.post(LINKS, { order_id: orderId }, { "x-api-key": acme }));
    const page = pathOf(link.url);
    const codes: number[] = [];
    for (let i = 0; i < 4; i++) codes.push((await h.get(`${page}/status`)).statusCode);
    expect(codes).toEqual([200, 200, 200, 429]);
    const limited = await h.get(page);
    expect(limited.statusCode).toBe(429);
    expect(limited.headers["retry-after"]).toBeDefined();
    // Other tokens from the same IP (127.0.0.1): the IP's budget (6) runs out after one more request.
    const guessed = await h.get(`/t/${"a".repeat(22)}.${"b".repeat(22)}/status`);
    expect(guessed.statusCode).toBe(404);
    const next = await h.get(`/t/${"c".repeat(22)}.${"d".repeat(22)}/status`);
    expect(next.statusCode).toBe(429);
    // A key's API is not the public routes' budget.
    await ok(h.get(`/api/dispatch/v1/orders/${orderId}/tracking-links`, { "x-api-key": acme }));
  });
});
