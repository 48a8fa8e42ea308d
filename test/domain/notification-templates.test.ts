// The notifications' templates and recipients (domain/notifications/): every kind has a subject, a
// plain-text part and an HTML part saying the same; every value is escaped in the HTML; the window and
// ETA are in the site's time zone; the tracking link, the report link (the account's people only) and the
// unsubscribe link are where they belong; no price, no phone, no account.

import { describe, expect, it } from "vitest";
import { NOTIFICATION_KINDS, notificationKindOf } from "../../src/domain/notifications/events.js";
import { recipientsOf } from "../../src/domain/notifications/recipients.js";
import {
  escapeHtml,
  messageIdOf,
  type NotificationFacts,
  renderNotification,
} from "../../src/domain/notifications/templates.js";

const FACTS: NotificationFacts = {
  kind: "booked",
  role: "site_contact",
  trade: "Plumbing",
  siteName: "Store #42",
  technicianFirstName: "Maria",
  window: { start: "2026-12-01T15:00:00.000Z", end: "2026-12-01T17:00:00.000Z" },
  etaAt: "2026-12-01T15:40:00.000Z",
  timeZone: "America/Chicago",
  trackingUrl: "https://fd.example/t/abc.def",
  reportUrl: "https://fd.example/api/orders/ord_1/report",
  unsubscribeUrl: "https://fd.example/n/unsubscribe/ntf_1.xyz",
};

describe("notification templates", () => {
  it("maps the six order events to their kinds and nothing else (creation notifies nobody)", () => {
    expect(notificationKindOf("order.accepted")).toBe("booked");
    expect(notificationKindOf("order.en_route")).toBe("en_route");
    expect(notificationKindOf("order.on_site")).toBe("arrived");
    expect(notificationKindOf("order.completed")).toBe("completed");
    expect(notificationKindOf("order.rescheduled")).toBe("rescheduled");
    expect(notificationKindOf("order.cancelled")).toBe("cancelled");
    expect(notificationKindOf("order.offered")).toBeNull();
    expect(notificationKindOf("order.needs_dispatcher")).toBeNull();
    expect(notificationKindOf(undefined)).toBeNull();
  });

  it("renders every kind with a subject, a text part and an HTML part, each with the unsubscribe link", () => {
    for (const kind of NOTIFICATION_KINDS) {
      const m = renderNotification({ ...FACTS, kind });
      expect(m.subject.length, kind).toBeGreaterThan(5);
      expect(m.subject).not.toMatch(/[\r\n]/);
      expect(m.text).toContain(`Unsubscribe: ${FACTS.unsubscribeUrl}`);
      expect(m.html).toContain(`href="${FACTS.unsubscribeUrl}"`);
      expect(m.html).toMatch(/^<!doctype html>/);
      const tracked = ["booked", "en_route", "arrived", "rescheduled"].includes(kind);
      expect(m.text.includes(FACTS.trackingUrl as string), kind).toBe(tracked);
      expect(m.html.includes(FACTS.trackingUrl as string), kind).toBe(tracked);
    }
  });

  it("states the window and the ETA in the site's time zone, and the technician's first name and trade", () => {
    const booked = renderNotification(FACTS);
    expect(booked.text).toContain("Maria (Plumbing) is due Tue, Dec 1, 9:00 AM to 11:00 AM CST");
    expect(booked.subject).toBe("Your Plumbing visit is booked: Tue, Dec 1, 9:00 AM to 11:00 AM CST");
    const onTheWay = renderNotification({ ...FACTS, kind: "en_route" });
    expect(onTheWay.subject).toBe("Maria is on the way (arriving about 9:40 AM CST)");
    const asap = renderNotification({ ...FACTS, window: null });
    expect(asap.text).toContain("as soon as possible");
  });

  it("links the service report on completed for the account's people only", () => {
    const contact = renderNotification({ ...FACTS, kind: "completed" });
    expect(contact.text).not.toContain("/report");
    const subscriber = renderNotification({ ...FACTS, kind: "completed", role: "subscriber" });
    expect(subscriber.text).toContain(FACTS.reportUrl as string);
    expect(subscriber.html).toContain(FACTS.reportUrl as string);
  });

  it("escapes every value in the HTML part and keeps control characters out of the subject", () => {
    const evil = '<script>alert("x")</script>&\'';
    const m = renderNotification({
      ...FACTS,
      technicianFirstName: `${evil}\r\nBcc: x@evil.example`,
      siteName: evil,
      trade: evil,
      trackingUrl: 'https://fd.example/t/"><script>',
    });
    expect(m.html).not.toContain("<script>");
    expect(m.html).toContain("&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt;&amp;&#39;");
    expect(m.subject).not.toMatch(/[\r\n]/);
    expect(escapeHtml(`<a href="x">'&`)).toBe("&lt;a href=&quot;x&quot;&gt;&#39;&amp;");
  });

  it("never carries a price, a phone or the account", () => {
    for (const kind of NOTIFICATION_KINDS) {
      for (const role of ["site_contact", "subscriber"] as const) {
        const m = renderNotification({ ...FACTS, kind, role });
        for (const part of [m.subject, m.text, m.html]) {
          expect(part).not.toMatch(/\$\s?\d|cents|USD|price|cost/i);
          expect(part).not.toMatch(/\+?1?[-. ]?\(?\d{3}\)?[-. ]\d{3}[-. ]\d{4}/);
          expect(part).not.toMatch(/acct_|account_id/);
        }
      }
    }
  });

  it("makes the Message-ID from the notification's id, the same every time", () => {
    expect(messageIdOf("ntf_abc", "fd.example")).toBe("<ntf_abc@fd.example>");
    expect(messageIdOf("ntf_abc", "fd.example")).toBe(messageIdOf("ntf_abc", "fd.example"));
  });
});

describe("notification recipients", () => {
  const subscribers = [
    { email: "Facilities@Acme.example", events: ["booked", "completed"] as const },
    { email: "store42@example.com", events: ["booked"] as const },
    { email: "ops@acme.example", events: ["cancelled"] as const },
  ];
  it("are the site's contact and the people who want the kind, each once, none opted out", () => {
    expect(
      recipientsOf({
        kind: "booked",
        contactEmail: " Store42@Example.com ",
        subscribers,
        optedOut: new Set(),
      }),
    ).toEqual([
      { email: "store42@example.com", role: "site_contact" },
      { email: "facilities@acme.example", role: "subscriber" },
    ]);
    expect(
      recipientsOf({
        kind: "booked",
        contactEmail: "store42@example.com",
        subscribers,
        optedOut: new Set(["store42@example.com"]),
      }),
    ).toEqual([{ email: "facilities@acme.example", role: "subscriber" }]);
    expect(recipientsOf({ kind: "arrived", contactEmail: null, subscribers, optedOut: new Set() })).toEqual(
      [],
    );
  });
});
