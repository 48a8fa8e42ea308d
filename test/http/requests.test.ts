// The request form (issue 35) end to end: a site's request link opens a public form; a submission becomes a
// request that the account's policy holds (the default) or makes an order at once (trade guessed by the
// published keyword model), linked to an open order of the same site and trade rather than doubled; the
// account approves (the trade confirmed or overridden) or rejects; rotating the link ends the old one at
// once; a tampered, guessed or rotated-away token answers one identical 404; submissions are limited per
// client IP and per link (an injected clock refills them), the body is capped, and script in every field is
// kept as text. Also the agent's own request, the QR code and the scoping to the account.

import sharp from "sharp";
import { afterEach, describe, expect, it } from "vitest";
import { createHarness, type Harness } from "../helpers/harness.js";
import { testClock } from "../helpers/test-clock.js";

const SITES = "/api/dispatch/v1/sites";
const LINKS = "/api/dispatch/v1/request-links";
const ROTATE = "/api/dispatch/v1/request-links/rotate";
const REQUESTS = "/api/dispatch/v1/requests";
const POLICY = "/api/dispatch/v1/request-policy";
const SITE = {
  name: "Store #42",
  address: "500 Congress Ave",
  city: "Austin",
  state: "TX",
  zip: "78701",
  contact: { name: "Dana Ortiz", phone: "+1 512 555 0142", email: "store42@example.com" },
};
const LEAK = {
  description: "Water leaking under the sink in the back room, the toilet is clogged too",
  urgency: "urgent",
  name: "Sam (shift lead)",
  contact: "+1-512-555-0100",
};

const harnesses: Harness[] = [];
afterEach(async () => {
  for (const h of harnesses.splice(0)) await h.close();
});

async function setup(env: Record<string, string> = {}) {
  const clock = testClock();
  // The limits refill as the test's clock moves (it only moves forward).
  const h = await createHarness(env, {}, { now: clock.now, limitsOnClock: true });
  harnesses.push(h);
  const tag = Math.random().toString(36).slice(2, 8);
  const key = await h.key(`Acme ${tag}`, "test");
  const other = await h.key(`other-${tag}`, "test");
  const site = await ok(h.post(SITES, SITE, { "x-api-key": key }));
  const link = await ok(h.post(LINKS, { site_id: site.site_id }, { "x-api-key": key }));
  return { h, clock, key, other, site, link, page: new URL(link.url).pathname };
}

async function ok(res: Promise<{ statusCode: number; body: string; json(): unknown }>, status = 200) {
  const r = await res;
  expect(r.statusCode, r.body).toBe(status);
  // biome-ignore lint/suspicious/noExplicitAny: JSON bodies.
  return r.json() as any;
}

/** A submission of the form from `ip`. */
function submit(h: Harness, page: string, body: unknown, ip = "203.0.113.7") {
  return h.app.inject({
    method: "POST",
    url: page,
    remoteAddress: ip,
    headers: { "content-type": "application/json" },
    payload: typeof body === "string" ? body : JSON.stringify(body),
  });
}

/** A photo's bytes sent to a request, from `ip`. */
function photo(
  h: Harness,
  page: string,
  reference: string,
  bytes: Buffer,
  type = "image/png",
  ip = "203.0.113.9",
) {
  return h.app.inject({
    method: "POST",
    url: `${page}/photos/${reference}`,
    remoteAddress: ip,
    headers: { "content-type": type },
    payload: bytes,
  });
}

const png = (w: number) =>
  sharp({ create: { width: w, height: 60, channels: 3, background: "#3a7" } })
    .png()
    .toBuffer();

const problemOf = (body: string) => {
  const { request_id: _id, instance: _instance, ...rest } = JSON.parse(body) as Record<string, unknown>;
  return rest;
};

describe("request form", () => {
  it("holds a submission by default; the account approves it and it becomes an order at the site", async () => {
    const { h, key, site, link, page } = await setup();
    expect(new URL(link.url).pathname).toMatch(/^\/r\/[0-9A-Za-z]{22}\.[0-9A-Za-z]{22}$/);
    expect(await ok(h.post(LINKS, { site_id: site.site_id }, { "x-api-key": key }))).toEqual(link);
    const html = await h.get(page);
    expect(html.statusCode).toBe(200);
    expect(html.headers["x-robots-tag"]).toBe("noindex, nofollow");
    expect(html.headers["content-security-policy"]).toContain("script-src 'self'");
    expect(html.headers["set-cookie"]).toBeUndefined();
    expect(html.body).not.toContain("Store #42");
    // What the form shows of the site: its name and city, nothing else.
    const shown = await ok(h.get(`${page}/site`));
    expect(shown).toEqual({ site: { name: "Store #42", city: "Austin", state: "TX" } });

    const sent = await ok(submit(h, page, LEAK), 201);
    expect(sent).toMatchObject({ status: "received" });
    expect(sent.reference).toMatch(/^wrq_/);
    const pending = await ok(h.get(`${REQUESTS}?status=pending`, { "x-api-key": key }));
    expect(pending.requests).toHaveLength(1);
    const held = pending.requests[0];
    expect(held).toMatchObject({
      request_id: sent.reference,
      site_id: site.site_id,
      source: "form",
      status: "pending",
      urgency: "urgent",
      name: LEAK.name,
      contact: LEAK.contact,
      trade_guess: { trade: "plumbing" },
      order_id: null,
    });
    expect(held.trade_guess.confidence).toBeGreaterThanOrEqual(0.6);
    expect(held.reason).toMatch(/holds requests/);

    const approved = await ok(
      h.post(`${REQUESTS}/approve`, { request_id: held.request_id }, { "x-api-key": key }),
    );
    expect(approved).toMatchObject({
      status: "ordered",
      trade: "plumbing",
      decided_by: expect.stringMatching(/^key:/),
    });
    const order = await ok(h.get(`/api/dispatch/v1/orders/${approved.order_id}`, { "x-api-key": key }));
    expect(order).toMatchObject({ trade: "plumbing", urgency: "urgent", reference_id: held.request_id });
    expect(order.site.site_id).toBe(site.site_id);
    expect(order.description).toContain(LEAK.description);
    // Decided once: approving or rejecting again answers 409.
    const again = await h.post(`${REQUESTS}/approve`, { request_id: held.request_id }, { "x-api-key": key });
    expect(again.statusCode).toBe(409);
    expect(again.json()).toMatchObject({ code: "request_decided", status: 409, order_id: approved.order_id });
    // Sealed: received (a digest, not the text) and ordered (on the order).
    const seals = await h.services.store.audit.orderSeals(approved.order_id);
    expect(seals.map((s) => s.kind)).toContain("request.ordered");
  });

  it("under the create policy orders at once, links a second report of the same trade, holds a text it cannot guess", async () => {
    const { h, key, other, page } = await setup();
    const set = await ok(h.post(POLICY, { mode: "create" }, { "x-api-key": key }));
    expect(set.mode).toBe("create");
    expect((await ok(h.get(POLICY, { "x-api-key": key }))).mode).toBe("create");
    expect((await ok(h.get(POLICY, { "x-api-key": other }))).mode).toBe("hold");

    const first = await ok(submit(h, page, LEAK), 201);
    expect(first.status).toBe("ordered");
    const r1 = await ok(h.get(`${REQUESTS}/${first.reference}`, { "x-api-key": key }));
    expect(r1).toMatchObject({ status: "ordered", trade: "plumbing", decided_by: "system:request-policy" });
    const second = await ok(
      submit(h, page, { ...LEAK, description: "The sink drain still leaks", name: "Alex" }),
      201,
    );
    expect(second.status).toBe("linked");
    const r2 = await ok(h.get(`${REQUESTS}/${second.reference}`, { "x-api-key": key }));
    expect(r2).toMatchObject({ status: "linked", order_id: r1.order_id });
    // Never another order's details in the form's answer.
    expect(JSON.stringify(second)).not.toContain(r1.order_id);
    // A text the model cannot place waits, whatever the policy.
    const vague = await ok(submit(h, page, { ...LEAK, description: "Something is not right here" }), 201);
    expect(vague.status).toBe("received");
    const r3 = await ok(h.get(`${REQUESTS}/${vague.reference}`, { "x-api-key": key }));
    expect(r3).toMatchObject({ status: "pending", trade_guess: { trade: null, confidence: 0 } });
    // It guessed none: approval needs a trade; given one, the order is created with it.
    const noTrade = await h.post(`${REQUESTS}/approve`, { request_id: r3.request_id }, { "x-api-key": key });
    expect(noTrade.statusCode).toBe(422);
    const fixed = await ok(
      h.post(`${REQUESTS}/approve`, { request_id: r3.request_id, trade: "handyman" }, { "x-api-key": key }),
    );
    expect(fixed).toMatchObject({ status: "ordered", trade: "handyman" });
    expect(fixed.order_id).not.toBe(r1.order_id);
    // Another account sees none of it.
    expect((await h.get(`${REQUESTS}/${r3.request_id}`, { "x-api-key": other })).statusCode).toBe(404);
    expect((await ok(h.get(REQUESTS, { "x-api-key": other }))).requests).toEqual([]);
  });

  it("under the create policy makes one order of two reports of the same trade sent at once, the other linked", async () => {
    const { h, key, page } = await setup();
    await ok(h.post(POLICY, { mode: "create" }, { "x-api-key": key }));
    const [a, b] = await Promise.all([
      ok(submit(h, page, LEAK, "203.0.113.40"), 201),
      ok(
        submit(h, page, { ...LEAK, description: "The sink still leaks badly", name: "Alex" }, "203.0.113.41"),
        201,
      ),
    ]);
    expect([a.status, b.status].sort()).toEqual(["linked", "ordered"]);
    const ra = await ok(h.get(`${REQUESTS}/${a.reference}`, { "x-api-key": key }));
    const rb = await ok(h.get(`${REQUESTS}/${b.reference}`, { "x-api-key": key }));
    expect(ra.order_id).toBe(rb.order_id);
    const orders = await ok(h.get("/api/dispatch/v1/orders?limit=50", { "x-api-key": key }));
    expect(orders.orders.filter((o: { trade: string }) => o.trade === "plumbing")).toHaveLength(1);
  });

  it("rejects with a reason; the agent reports at a site; lists narrow by status and site", async () => {
    const { h, key, other, site } = await setup();
    const made = await ok(
      h.post(
        REQUESTS,
        {
          site_id: site.site_id,
          description: "Walk-in freezer is warm",
          name: "Dana",
          contact: "dana@example.com",
        },
        { "x-api-key": key },
      ),
    );
    expect(made).toMatchObject({
      source: "agent",
      status: "pending",
      trade_guess: { trade: "appliance_repair" },
    });
    const theirs = await h.post(
      REQUESTS,
      { site_id: site.site_id, description: "x", name: "y", contact: "z" },
      { "x-api-key": other },
    );
    expect(theirs.statusCode).toBe(404);
    const rejected = await ok(
      h.post(
        `${REQUESTS}/reject`,
        { request_id: made.request_id, reason: "fixed on site" },
        { "x-api-key": key },
      ),
    );
    expect(rejected).toMatchObject({ status: "rejected", reason: "fixed on site", order_id: null });
    expect(
      (
        await h.post(
          `${REQUESTS}/reject`,
          { request_id: made.request_id, reason: "again" },
          { "x-api-key": key },
        )
      ).statusCode,
    ).toBe(409);
    expect(
      (await ok(h.get(`${REQUESTS}?status=rejected&site_id=${site.site_id}`, { "x-api-key": key }))).requests,
    ).toHaveLength(1);
    expect((await ok(h.get(`${REQUESTS}?status=pending`, { "x-api-key": key }))).requests).toHaveLength(0);
  });

  it("rotates the link: the old token answers the same 404 as a tampered or guessed one", async () => {
    const { h, key, other, site, link, page } = await setup();
    const qr = await h.get(`${SITES}/${site.site_id}/request-link/qr`, { "x-api-key": key });
    expect(qr.statusCode).toBe(200);
    expect(qr.headers["content-type"]).toMatch(/^image\/svg\+xml/);
    expect(qr.body).toMatch(/^<svg[^>]*xmlns="http:\/\/www.w3.org\/2000\/svg"/);
    expect((await h.get(`${SITES}/${site.site_id}/request-link/qr`, { "x-api-key": other })).statusCode).toBe(
      404,
    );

    const rotated = await ok(
      h.post(ROTATE, { site_id: site.site_id, reason: "posted online" }, { "x-api-key": key }),
    );
    expect(rotated.link_id).not.toBe(link.link_id);
    const fresh = new URL(rotated.url).pathname;
    expect((await h.get(fresh)).statusCode).toBe(200);
    expect((await h.get(`${SITES}/${site.site_id}/request-link/qr`, { "x-api-key": key })).body).not.toBe(
      qr.body,
    );
    const gone = await h.get(`${page}/site`);
    expect(gone.statusCode).toBe(404);
    const gonePage = await h.get(page);
    expect(gonePage.statusCode).toBe(404);
    const goneSubmit = await submit(h, page, LEAK);
    expect(goneSubmit.statusCode).toBe(404);
    expect(problemOf(goneSubmit.body)).toEqual(problemOf(gone.body));

    const token = fresh.slice(3);
    const [id, mac] = token.split(".") as [string, string];
    const flip = (s: string) => (s[0] === "A" ? "B" : "A") + s.slice(1);
    // A tracking link's token is no request link's: another secret.
    const trackingToken = h.services.tracking.tokenOf(id);
    let n = 0;
    for (const dead of [
      `${id}.${flip(mac)}`,
      `${flip(id)}.${mac}`,
      `${"x".repeat(22)}.${"y".repeat(22)}`,
      "nope",
      trackingToken,
    ]) {
      const res = await h.get(`/r/${dead}/site`);
      expect(res.statusCode, dead).toBe(404);
      expect(problemOf(res.body)).toEqual(problemOf(gone.body));
      expect((await h.get(`/r/${dead}`)).body).toBe(gonePage.body);
      expect(problemOf((await submit(h, `/r/${dead}`, LEAK, `192.0.2.${++n}`)).body)).toEqual(
        problemOf(gone.body),
      );
    }
  });

  it("limits submissions per client IP and per link, refilled as the clock moves", async () => {
    const { h, clock, page } = await setup({
      REQUEST_SUBMIT_IP_RATE_LIMIT_PER_MINUTE: "1",
      REQUEST_SUBMIT_IP_RATE_LIMIT_BURST: "2",
      REQUEST_SUBMIT_LINK_RATE_LIMIT_PER_MINUTE: "1",
      REQUEST_SUBMIT_LINK_RATE_LIMIT_BURST: "4",
    });
    const codes: number[] = [];
    for (let i = 0; i < 3; i++) codes.push((await submit(h, page, LEAK, "198.51.100.1")).statusCode);
    expect(codes).toEqual([201, 201, 429]);
    const limited = await submit(h, page, LEAK, "198.51.100.1");
    expect(limited.statusCode).toBe(429);
    expect(limited.headers["retry-after"]).toBeDefined();
    expect(limited.json().code).toBe("rate_limited");
    // Another IP: its own budget, but the link's (4) is shared: two more, then 429 from any IP.
    expect((await submit(h, page, LEAK, "198.51.100.2")).statusCode).toBe(201);
    expect((await submit(h, page, LEAK, "198.51.100.3")).statusCode).toBe(201);
    expect((await submit(h, page, LEAK, "198.51.100.4")).statusCode).toBe(429);
    // A minute later each budget has one more. (The in-memory limiter runs on the services' clock; the
    // shared one, on Redis, on Redis's own, which no test moves: there the limits above are the test.)
    if (h.config.REDIS_URL) return;
    clock.advance(60_000);
    expect((await submit(h, page, LEAK, "198.51.100.1")).statusCode).toBe(201);
    expect((await submit(h, page, LEAK, "198.51.100.5")).statusCode).toBe(429);
  });

  it("caps the body, refuses bad fields, and keeps script in every field as text", async () => {
    const { h, key, page } = await setup();
    const big = await submit(h, page, { ...LEAK, description: "x".repeat(20_000) });
    expect(big.statusCode).toBe(413);
    expect(big.json()).toMatchObject({ code: "payload_too_large", limit_bytes: 16384 });
    // A 10 MB "photo" pasted into the form: refused at the cap, as the body arrives.
    const photo = await submit(h, page, {
      ...LEAK,
      description: `data:image/jpeg;base64,${"A".repeat(10 * 1024 * 1024)}`,
    });
    expect(photo.statusCode).toBe(413);
    expect(photo.json().code).toBe("payload_too_large");
    const pending = await ok(h.get(REQUESTS, { "x-api-key": key }));
    expect(pending.requests).toEqual([]);
    const bad = await submit(h, page, {
      description: "",
      urgency: "whenever",
      name: "a",
      contact: "b",
      extra: 1,
    });
    expect(bad.statusCode).toBe(422);
    const fields = bad
      .json()
      .errors.map((e: { field: string }) => e.field)
      .sort();
    expect(fields).toContain("description");
    expect(fields).toContain("urgency");
    const nul = await submit(h, page, { ...LEAK, name: "a\u0000b" });
    expect(nul.statusCode).toBe(422);
    const script = "<script>alert(1)</script><img src=x onerror=alert(2)>";
    const sent = await ok(
      submit(h, page, { description: `${script} leak`, urgency: "routine", name: script, contact: script }),
      201,
    );
    const stored = await ok(h.get(`${REQUESTS}/${sent.reference}`, { "x-api-key": key }));
    expect(stored).toMatchObject({ description: `${script} leak`, name: script, contact: script });
    const approved = await ok(
      h.post(`${REQUESTS}/approve`, { request_id: sent.reference, trade: "plumbing" }, { "x-api-key": key }),
    );
    const order = await ok(h.get(`/api/dispatch/v1/orders/${approved.order_id}`, { "x-api-key": key }));
    expect(order.description).toContain(script);
  });

  it("takes up to two photos by content and size, kept with the request and attached to its order", async () => {
    const { h, clock, key, page } = await setup();
    const sent = await ok(submit(h, page, LEAK), 201);
    const ref = sent.reference;
    expect((await ok(photo(h, page, ref, await png(80)), 201)).photo).toBe(1);
    // A file that is not an image, whatever it says it is: 415; a type the route does not take: 415.
    expect(
      (await photo(h, page, ref, Buffer.from("just text, not a photo"), "image/jpeg", "203.0.113.10"))
        .statusCode,
    ).toBe(415);
    expect((await photo(h, page, ref, await png(80), "text/plain", "203.0.113.11")).statusCode).toBe(415);
    // A 10 MB "photo": 413, with the limit.
    const huge = await photo(h, page, ref, Buffer.alloc(10 * 1024 * 1024, 1), "image/jpeg", "203.0.113.12");
    expect(huge.statusCode).toBe(413);
    expect(huge.json()).toMatchObject({ code: "payload_too_large", limit_bytes: 8 * 1024 * 1024 });
    expect((await ok(photo(h, page, ref, await png(90), "image/png", "203.0.113.13"), 201)).photo).toBe(2);
    const third = await photo(h, page, ref, await png(100), "image/png", "203.0.113.14");
    expect(third.statusCode).toBe(409);
    // Another link's (or an unknown) reference reads as not found.
    expect(
      (await photo(h, page, "wrq_0000000000000000", await png(80), "image/png", "203.0.113.15")).statusCode,
    ).toBe(404);

    const approved = await ok(h.post(`${REQUESTS}/approve`, { request_id: ref }, { "x-api-key": key }));
    const attachments = await ok(h.get(`/api/orders/${approved.order_id}/attachments`, { "x-api-key": key }));
    expect(attachments.attachments).toHaveLength(2);
    expect(attachments.attachments[0]).toMatchObject({
      kind: "photo",
      media_type: "image/png",
      caption: `Sent with request ${ref}`,
    });

    // Under the create policy a photo sent after the report (already an order) goes to the order at once;
    // past the window, the reference takes no more.
    await ok(h.post(POLICY, { mode: "create" }, { "x-api-key": key }));
    const later = await ok(
      submit(h, page, { ...LEAK, description: "Roof leaks by the skylight" }, "203.0.113.20"),
      201,
    );
    expect(later.status).toBe("ordered");
    await ok(photo(h, page, later.reference, await png(70), "image/png", "203.0.113.21"), 201);
    const laterRequest = await ok(h.get(`${REQUESTS}/${later.reference}`, { "x-api-key": key }));
    const laterFiles = await ok(
      h.get(`/api/orders/${laterRequest.order_id}/attachments`, { "x-api-key": key }),
    );
    expect(laterFiles.attachments).toHaveLength(1);
    clock.advance(31 * 60_000);
    expect(
      (await photo(h, page, later.reference, await png(71), "image/png", "203.0.113.22")).statusCode,
    ).toBe(404);
  });

  it("takes three photos sent at once as two, in positions 1 and 2, and refuses the third with 409", async () => {
    const { h, key, page } = await setup();
    const sent = await ok(submit(h, page, LEAK), 201);
    const images = await Promise.all([png(80), png(81), png(82)]);
    const answers = await Promise.all(
      images.map((bytes, i) => photo(h, page, sent.reference, bytes, "image/png", `203.0.113.${30 + i}`)),
    );
    const codes = answers.map((a) => a.statusCode).sort();
    expect(codes, answers.map((a) => a.body).join("\n")).toEqual([201, 201, 409]);
    const positions = answers.filter((a) => a.statusCode === 201).map((a) => a.json().photo);
    expect(positions.sort()).toEqual([1, 2]);
    const approved = await ok(
      h.post(`${REQUESTS}/approve`, { request_id: sent.reference }, { "x-api-key": key }),
    );
    const files = await ok(h.get(`/api/orders/${approved.order_id}/attachments`, { "x-api-key": key }));
    expect(files.attachments).toHaveLength(2);
  });
});
