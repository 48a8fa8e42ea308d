// Notifications to the people at the site (issue 35) end to end, on SQLite and (with TEST_DATABASE_URL,
// --project postgres) PostgreSQL: a real SMTP server on 127.0.0.1 receives every kind with both parts and
// the unsubscribe headers; without SMTP_URL messages are kept, listed and sealed; a server that refuses or
// hangs is retried with backoff on an injected clock (one Message-ID, one message received) and then
// failed, while requests go on; an opted-out address gets nothing; a resend is a new message; the account's
// opted-in people get the kinds they chose; two workers over one store make one message per event and
// recipient.

import { afterEach, describe, expect, it } from "vitest";
import { keptMailer } from "../../src/net/mailer.js";
import { createNotificationDispatcher, createServices } from "../../src/services/create-services.js";
import type { KyselyStore } from "../../src/storage/kysely-store.js";
import { openPostgresStore } from "../../src/storage/postgres.js";
import { NotificationDispatcher } from "../../src/workers/notification-dispatcher.js";
import { liveContractor, testRecord } from "../helpers/fixtures.js";
import { createHarness, type Harness, ORDER_PATH } from "../helpers/harness.js";
import { type SmtpSink, startSmtpSink } from "../helpers/smtp-sink.js";
import { testClock } from "../helpers/test-clock.js";
import { postgresUrl } from "../helpers/test-store.js";

const OFFERS = "/api/contractor/v1/offers";
const ACCEPT = "/api/contractor/v1/offers/accept";
const STATUS = "/api/contractor/v1/jobs/status";
const CANCEL = "/api/dispatch/v1/orders/cancel";
const RESCHEDULE = "/api/dispatcher/v1/orders/reschedule";
const LIST = "/api/dispatch/v1/notifications";
const CONTACT_EMAIL = "store42@example.com";
const HOUR = 3_600_000;

const harnesses: Harness[] = [];
const sinks: SmtpSink[] = [];
const closers: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const c of closers.splice(0)) await c();
  for (const h of harnesses.splice(0)) await h.close();
  for (const s of sinks.splice(0)) await s.close();
});

// biome-ignore lint/suspicious/noExplicitAny: JSON bodies.
type Json = any;
async function ok(res: Promise<{ statusCode: number; body: string; json(): unknown }>): Promise<Json> {
  const r = await res;
  expect(r.statusCode, r.body).toBe(200);
  return r.json();
}

/** A harness on an injected clock with one live plumber in San Francisco, an account with a site whose
 * contact has an email, a dispatcher's key, and the notifications' worker the settings describe. */
async function setup(env: Record<string, string> = {}) {
  const clock = testClock();
  const h = await createHarness(
    { NOTIFY_RETRY_BASE_MS: "60000", NOTIFY_MAX_ATTEMPTS: "3", ...env },
    {},
    { now: clock.now },
  );
  harnesses.push(h);
  const tag = Math.random().toString(36).slice(2, 8);
  const id = `ctr_ntf${tag}`;
  await h.services.store.contractors.insert(
    [liveContractor({ id, name: "Maria Lopez-Secretname", phone: "+1-555-0199" })],
    testRecord(),
  );
  await h.services.pool.load();
  const plumber = await h.contractorKey(id, `crew-${tag}`);
  const acme = await h.key(`Acme Retail Holdings ${tag}`, "live");
  const site = await ok(
    h.post(
      "/api/dispatch/v1/sites",
      {
        name: "Store #42 <b>bold</b>",
        address: "1 Market St",
        city: "San Francisco",
        state: "CA",
        zip: "94103",
        contact: { name: "Dana Ortiz", phone: "+1 415 555 0142", email: "Store42@Example.com" },
      },
      { "x-api-key": acme },
    ),
  );
  const worker = createNotificationDispatcher(h.services);
  closers.push(() => worker.close());
  return {
    h,
    clock,
    plumber,
    acme,
    site: site.site_id as string,
    worker,
    dispatcher: await h.dispatcherKey("live"),
  };
}
type Setup = Awaited<ReturnType<typeof setup>>;

/** An order at the site, accepted by the plumber (booked). */
async function booked(s: Setup, extra: Record<string, unknown> = {}): Promise<string> {
  const { h, acme, plumber, site } = s;
  const order = await ok(
    h.post(
      ORDER_PATH,
      { trade: "plumbing", description: "Leak under the sink", nte_cents: 45_000, site_id: site, ...extra },
      { "x-api-key": acme },
    ),
  );
  const offers = await ok(h.get(OFFERS, { "x-api-key": plumber }));
  const offer = offers.offers.find((o: { order_id: string }) => o.order_id === order.order_id);
  expect(offer, JSON.stringify(offers)).toBeDefined();
  await ok(h.post(ACCEPT, { offer_id: offer.offer_id }, { "x-api-key": plumber }));
  return order.order_id;
}

const report = (s: Setup, body: Record<string, unknown>) =>
  ok(s.h.post(STATUS, body, { "x-api-key": s.plumber }));

const list = async (s: Setup, query = ""): Promise<Json[]> =>
  (await ok(s.h.get(`${LIST}${query}`, { "x-api-key": s.acme }))).notifications;

/** A window `fromNow` ahead, `hours` long, on the hour. */
function windowAt(s: Setup, fromNow: number, hours = 4) {
  const start = Math.ceil((s.clock.now().getTime() + fromNow) / HOUR) * HOUR;
  return { start: new Date(start).toISOString(), end: new Date(start + hours * HOUR).toISOString() };
}

describe("notifications", () => {
  it("sends every kind through SMTP with a plain-text and an HTML part, and nothing private", async () => {
    const sink = await startSmtpSink();
    sinks.push(sink);
    const s = await setup({ SMTP_URL: sink.url });
    const a = await booked(s);
    await report(s, { order_id: a, status: "en_route", eta_minutes: 25 });
    await report(s, { order_id: a, status: "on_site" });
    await report(s, { order_id: a, status: "completed", final_cost_cents: 30_000 });
    const b = await booked(s, { urgency: "scheduled", service_window: windowAt(s, 2 * 24 * HOUR) });
    await ok(
      s.h.post(
        RESCHEDULE,
        { order_id: b, service_window: windowAt(s, 3 * 24 * HOUR), reason: "the store is closed" },
        { "x-api-key": s.dispatcher },
      ),
    );
    await ok(s.h.post(CANCEL, { order_id: b }, { "x-api-key": s.acme }));
    // The requests wrote outbox rows only; nothing was sent before the worker ran.
    expect(sink.received).toHaveLength(0);
    await s.worker.tick();
    await sink.waitFor(7);
    const sent = await list(s);
    expect(sent.map((n) => n.status)).toEqual(Array(7).fill("sent"));
    expect(new Set(sent.map((n) => n.event))).toEqual(
      new Set(["booked", "en_route", "arrived", "completed", "rescheduled", "cancelled"]),
    );
    for (const mail of sink.received) {
      const n = sent.find((x) => x.message_id === mail.messageId);
      expect(n, mail.messageId).toBeDefined();
      expect(mail.to && "text" in mail.to ? mail.to.text : "").toBe(CONTACT_EMAIL);
      expect(mail.subject).toBe(n.subject);
      expect(mail.text).toContain("Unsubscribe: http");
      expect(mail.html).toContain("<h1");
      expect(mail.html).toContain("Store #42 &lt;b&gt;bold&lt;/b&gt;");
      const header = (key: string) =>
        (mail.headerLines.find((l) => l.key === key)?.line ?? "").replace(/\r\n\s+/g, " ");
      const unsubscribe = /Unsubscribe: (\S+)/.exec(mail.text ?? "")?.[1] ?? "none";
      expect(header("list-unsubscribe")).toBe(`List-Unsubscribe: <${unsubscribe}>`);
      expect(header("list-unsubscribe-post")).toBe("List-Unsubscribe-Post: List-Unsubscribe=One-Click");
      for (const secret of ["555", "Lopez", "Secretname", "Acme", "45000", "450.00", "30000", "300.00"]) {
        // Links' tokens are random: they may hold any digits.
        const words = `${mail.subject}${mail.text}${mail.html}`.replace(/https?:\/\/[^\s"<>]+/g, "");
        expect(words, `${n.event}: ${secret}`).not.toContain(secret);
      }
      if (["booked", "en_route", "arrived", "rescheduled"].includes(n.event))
        expect(mail.text).toMatch(/\/t\//);
      if (n.event !== "cancelled") expect(mail.text).toContain("Maria");
    }
    // Sealed: each message's digest, never its body or its address.
    const seals = await s.h.services.store.audit.orderSeals(a);
    const records = await Promise.all(
      seals
        .filter((x) => x.kind === "notification.sent")
        .map(async (x) => (await s.h.services.store.audit.findAudit(x.seal)).record?.record ?? ""),
    );
    expect(records).toHaveLength(4);
    for (const text of records) {
      const data = JSON.parse(text).data;
      const n = sent.find((x) => x.notification_id === data.notification_id);
      expect(data).toMatchObject({ digest: n.digest, status: "sent", recipient_role: "site_contact" });
      expect(text).not.toContain(CONTACT_EMAIL);
      expect(text).not.toContain(n.subject);
    }
    // Nothing more to send: another tick sends nothing twice.
    expect(await s.worker.tick()).toBe(0);
    expect(sink.received).toHaveLength(7);
  });

  it("keeps the messages without SMTP_URL, lists and reads them, and resends one as a new message", async () => {
    const s = await setup();
    const a = await booked(s);
    expect(await s.worker.tick()).toBe(1);
    const [kept] = await list(s, `?order_id=${a}`);
    expect(kept).toMatchObject({ event: "booked", status: "kept", recipient: CONTACT_EMAIL, attempts: 1 });
    expect(kept.seal).toMatch(/^seal_/);
    const one = await ok(s.h.get(`${LIST}/${kept.notification_id}`, { "x-api-key": s.acme }));
    expect(one.text).toContain("is booked");
    expect(one.html).toContain("<h1");
    expect(one.attempts_log).toMatchObject([{ attempt: 1, outcome: "kept" }]);
    const other = await s.h.key("someone-else", "live");
    expect((await s.h.get(`${LIST}/${kept.notification_id}`, { "x-api-key": other })).statusCode).toBe(404);
    expect((await ok(s.h.get(LIST, { "x-api-key": other }))).notifications).toEqual([]);

    const again = await ok(
      s.h.post(`${LIST}/resend`, { notification_id: kept.notification_id }, { "x-api-key": s.acme }),
    );
    expect(again).toMatchObject({ status: "pending", resend_of: kept.notification_id, event: "booked" });
    expect(again.message_id).not.toBe(kept.message_id);
    expect(await s.worker.tick()).toBe(1);
    const all = await list(s);
    expect(all.map((n) => [n.notification_id, n.status])).toEqual([
      [again.notification_id, "kept"],
      [kept.notification_id, "kept"],
    ]);
    const page = await ok(s.h.get(`${LIST}?limit=1`, { "x-api-key": s.acme }));
    expect(page.notifications).toHaveLength(1);
    const next = await ok(s.h.get(`${LIST}?limit=1&cursor=${page.next_cursor}`, { "x-api-key": s.acme }));
    expect(next.notifications[0].notification_id).toBe(kept.notification_id);
    expect(next.next_cursor).toBeNull();
  });

  it("retries a server that refuses or hangs with backoff, one Message-ID, then fails; requests go on", async () => {
    const sink = await startSmtpSink();
    sinks.push(sink);
    const s = await setup({ SMTP_URL: sink.url, NOTIFY_TIMEOUT_MS: "300" });
    const a = await booked(s);
    sink.mode = { kind: "refuse", code: 451 };
    expect(await s.worker.tick()).toBe(1);
    let [n] = await list(s);
    expect(n).toMatchObject({ status: "pending", attempts: 1 });
    expect(n.last_error).toContain("451");
    // Not due yet: nothing is attempted.
    expect(await s.worker.tick()).toBe(0);
    s.clock.advance(60_000);
    sink.mode = { kind: "hang" };
    const hanging = s.worker.tick();
    // The request path never waits on SMTP.
    await report(s, { order_id: a, status: "en_route", eta_minutes: 10 });
    await hanging;
    [n] = await list(s, "?status=pending");
    const booking = (await list(s)).find((x) => x.event === "booked");
    expect(booking).toMatchObject({ status: "pending", attempts: 2 });
    expect(booking.last_error).toMatch(/time|greeting/i);
    sink.mode = { kind: "accept" };
    s.clock.advance(120_000);
    await s.worker.tick();
    await sink.waitFor(2);
    const byEvent = Object.fromEntries((await list(s)).map((x) => [x.event, x]));
    expect(byEvent.booked).toMatchObject({ status: "sent", attempts: 3 });
    expect(sink.received.filter((m) => m.messageId === byEvent.booked.message_id)).toHaveLength(1);
    const log = await ok(s.h.get(`${LIST}/${byEvent.booked.notification_id}`, { "x-api-key": s.acme }));
    expect(log.attempts_log.map((x: { outcome: string }) => x.outcome)).toEqual([
      "retrying",
      "retrying",
      "sent",
    ]);

    sink.mode = { kind: "refuse", code: 550 };
    await report(s, { order_id: a, status: "on_site" });
    await s.worker.tick();
    s.clock.advance(60_000);
    await s.worker.tick();
    s.clock.advance(120_000);
    await s.worker.tick();
    const arrived = (await list(s)).find((x) => x.event === "arrived");
    expect(arrived).toMatchObject({ status: "failed", attempts: 3 });
    expect(arrived.last_error).toContain("gave up after 3 attempts");
  });

  it("honours an opt-out by the message's link or the account, and the account's opted-in people", async () => {
    const s = await setup();
    await ok(
      s.h.post(
        "/api/dispatch/v1/notification-subscribers",
        { subscribers: [{ email: "Facilities@Acme.example", events: ["completed"] }] },
        { "x-api-key": s.acme },
      ),
    );
    const a = await booked(s);
    await s.worker.tick();
    const [first] = await list(s);
    const one = await ok(s.h.get(`${LIST}/${first.notification_id}`, { "x-api-key": s.acme }));
    const link = new URL(/Unsubscribe: (\S+)/.exec(one.text)?.[1] ?? "").pathname;
    const tampered = await s.h.get(`${link.slice(0, -2)}${link.endsWith("xx") ? "yy" : "xx"}`);
    expect(tampered.statusCode).toBe(404);
    const confirm = await s.h.get(link);
    expect(confirm.statusCode).toBe(200);
    expect(confirm.body).toContain('<form method="post">');
    expect(confirm.headers["x-robots-tag"]).toContain("noindex");
    // GET alone opts nobody out.
    await report(s, { order_id: a, status: "en_route", eta_minutes: 10 });
    await s.worker.tick();
    expect((await list(s)).map((n) => n.event)).toEqual(["en_route", "booked"]);
    const done = await s.h.app.inject({
      method: "POST",
      url: link,
      headers: { "content-type": "application/x-www-form-urlencoded" },
      payload: "List-Unsubscribe=One-Click",
    });
    expect(done.statusCode, done.body).toBe(200);
    expect(done.body).toContain("unsubscribed");
    await report(s, { order_id: a, status: "on_site" });
    await report(s, { order_id: a, status: "completed", final_cost_cents: 30_000 });
    await s.worker.tick();
    const after = await list(s);
    expect(after.map((n) => [n.event, n.recipient])).toEqual([
      ["completed", "facilities@acme.example"],
      ["en_route", CONTACT_EMAIL],
      ["booked", CONTACT_EMAIL],
    ]);
    const completed = await ok(s.h.get(`${LIST}/${after[0].notification_id}`, { "x-api-key": s.acme }));
    expect(completed.text).toContain(`/api/orders/${a}/report`);

    // Back in by the account; a message waiting for an address opted out meanwhile is cancelled.
    const optIn = await ok(
      s.h.post(
        "/api/dispatch/v1/notification-opt-outs",
        { email: CONTACT_EMAIL, opted_out: false },
        { "x-api-key": s.acme },
      ),
    );
    expect(optIn).toEqual({ email: CONTACT_EMAIL, opted_out: false, changed: true });
    const b = await booked(s);
    await s.worker.fanOut();
    await ok(
      s.h.post(
        "/api/dispatch/v1/notification-opt-outs",
        { email: CONTACT_EMAIL, opted_out: true },
        { "x-api-key": s.acme },
      ),
    );
    await s.worker.tick();
    const [cancelled] = await list(s, `?order_id=${b}`);
    expect(cancelled).toMatchObject({ event: "booked", status: "cancelled", seal: null });
  });

  it("makes one message per event and recipient with two workers over one store", async () => {
    const s = await setup();
    const orders = [];
    for (let i = 0; i < 3; i++) orders.push(await booked(s));
    for (const id of orders) await report(s, { order_id: id, status: "en_route", eta_minutes: 15 });
    const store = s.h.services.store as KyselyStore;
    // On PostgreSQL the second worker has its own connections to the same schema, as another process would.
    const second =
      store.dialect === "postgres"
        ? openPostgresStore(postgresUrl(store.schema), {
            poolSize: 4,
            schema: store.schema,
            clock: s.clock.now,
          })
        : store;
    if (second !== store) closers.push(() => second.close());
    const services =
      second === store ? s.h.services : createServices(s.h.config, second, { now: s.clock.now });
    const other = new NotificationDispatcher(services, { mailer: keptMailer, baseUrl: "http://localhost" });
    await Promise.all([s.worker.tick(), other.tick(), s.worker.tick(), other.tick()]);
    await Promise.all([s.worker.tick(), other.tick()]);
    const all = await list(s, "?limit=200");
    expect(all).toHaveLength(6);
    expect(all.every((n) => n.status === "kept" && n.attempts === 1)).toBe(true);
    const pairs = all.map((n) => `${n.order_id}|${n.event}`);
    expect(new Set(pairs).size).toBe(6);
    let sealed = 0;
    for (const id of orders) {
      sealed += (await s.h.services.store.audit.orderSeals(id)).filter(
        (x) => x.kind === "notification.sent",
      ).length;
    }
    expect(sealed).toBe(6);
  });
});
