// The notifications' part of the storage contract (migration 0044): a message written once per event and
// recipient however many fan-outs write it (at once too), a resend beside it; a due message claimed by one
// of two claims at once, under a lease another claim respects until it lapses; an attempt recorded only
// while the claim holds; the account's list, newest first, by order and status; opt-outs and opted-in
// people. Run against SQLite always and PostgreSQL when TEST_DATABASE_URL is set.

import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Clock } from "../../src/clock.js";
import type { NotificationsTable } from "../../src/storage/schema.js";
import type { Store } from "../../src/storage/store.js";
import { testClock } from "../helpers/test-clock.js";

const AT = "2026-11-29T10:00:00.000Z";
const LATER = "2026-11-29T10:05:00.000Z";

function message(over: Partial<NotificationsTable>): NotificationsTable {
  const id = over.id ?? `ntf_${Math.random().toString(36).slice(2, 14)}`;
  return {
    id,
    event_id: "nev_contract",
    resend_of: null,
    account_id: "acct_x",
    livemode: 0,
    order_id: "ord_x",
    event: "booked",
    recipient: "store42@example.com",
    recipient_role: "site_contact",
    status: "pending",
    attempts: 0,
    next_attempt_at: AT,
    lease_until: null,
    message_id: `<${id}@localhost>`,
    subject: "s",
    text_body: "t",
    html_body: "<p>h</p>",
    digest: "0".repeat(64),
    last_error: null,
    created_at: AT,
    updated_at: AT,
    sent_at: null,
    seal: null,
    ...over,
  };
}

export function runNotificationStoreContract(name: string, open: (clock: Clock) => Promise<Store>) {
  describe(`notification store contract: ${name}`, () => {
    let store: Store;
    let accountId: string;
    beforeAll(async () => {
      store = await open(testClock().now);
      await store.migrate();
      accountId = (await store.keys.ensureAccount(`notify-${Math.random()}`)).id;
    });
    afterAll(async () => {
      await store.close();
    });

    it("writes one message per event and recipient, however many fan-outs write it, and a resend beside it", async () => {
      const eventId = `nev_${Math.random().toString(36).slice(2, 12)}`;
      const a = message({ event_id: eventId, account_id: accountId });
      const b = message({ event_id: eventId, account_id: accountId });
      const written = await Promise.all([
        store.notifications.fanOut(eventId, [a]),
        store.notifications.fanOut(eventId, [b]),
      ]);
      expect(written.reduce((x, y) => x + y, 0)).toBe(1);
      expect(await store.notifications.fanOut(eventId, [message({ event_id: eventId })])).toBe(0);
      const resend = message({ event_id: eventId, account_id: accountId, resend_of: a.id });
      await store.notifications.insert(resend);
      expect(await store.notifications.ofEvent(eventId)).toHaveLength(2);
    });

    it("claims a due message once under a lease, and records an attempt only while the claim holds", async () => {
      const orderId = `ord_${Math.random().toString(36).slice(2, 12)}`;
      const m = message({ account_id: accountId, order_id: orderId, event_id: `nev_${orderId}` });
      await store.notifications.fanOut(m.event_id, [m]);
      const claims = await Promise.all([
        store.notifications.claimDue(AT, LATER, 100),
        store.notifications.claimDue(AT, LATER, 100),
      ]);
      const mine = claims.flat().filter((c) => c.id === m.id);
      expect(mine).toHaveLength(1);
      expect(mine[0]?.attempts).toBe(1);
      // Leased: not claimed again before the lease lapses; after it, claimed again (attempt 2).
      expect((await store.notifications.claimDue(AT, LATER, 100)).some((c) => c.id === m.id)).toBe(false);
      const again = (await store.notifications.claimDue(LATER, "2026-11-29T10:10:00.000Z", 100)).find(
        (c) => c.id === m.id,
      );
      expect(again?.attempts).toBe(2);
      const result = {
        startedAt: AT,
        durationMs: 5,
        outcome: "kept" as const,
        response: null,
        error: null,
        nextAttemptAt: null,
      };
      // The first claim lost its lease: its attempt is logged, the message left to the second.
      expect(
        await store.write((tx) => store.notifications.recordAttempt(m.id, 1, result, "seal_a", tx)),
      ).toBe(false);
      expect(
        await store.write((tx) => store.notifications.recordAttempt(m.id, 2, result, "seal_b", tx)),
      ).toBe(true);
      expect(await store.notifications.byId(m.id)).toMatchObject({
        status: "kept",
        seal: "seal_b",
        attempts: 2,
      });
      expect((await store.notifications.attemptsOf(m.id)).map((x) => x.attempt)).toEqual([1, 2]);
      const listed = await store.notifications.list({ accountId, livemode: false, orderId, limit: 10 });
      expect(listed.map((x) => x.id)).toEqual([m.id]);
      expect(
        await store.notifications.list({ accountId, livemode: false, status: "failed", limit: 10 }),
      ).toEqual([]);
      expect(await store.notifications.list({ accountId, livemode: true, limit: 10 })).toEqual([]);
    });

    it("keeps opt-outs and opted-in people per account and mode", async () => {
      const row = {
        account_id: accountId,
        livemode: 0,
        email: "a@example.com",
        created_at: AT,
        source: "api",
      };
      expect(await store.notifications.setOptOut(row, true)).toBe(true);
      expect(await store.notifications.setOptOut(row, true)).toBe(false);
      expect([
        ...(await store.notifications.optedOut(accountId, false, ["a@example.com", "b@example.com"])),
      ]).toEqual(["a@example.com"]);
      expect((await store.notifications.optedOut(accountId, true, ["a@example.com"])).size).toBe(0);
      expect(await store.notifications.setOptOut(row, false)).toBe(true);
      expect((await store.notifications.optedOut(accountId, false, ["a@example.com"])).size).toBe(0);
      const person = { account_id: accountId, livemode: 0, created_at: AT, seal: "seal_p" };
      await store.write((tx) =>
        store.notifications.setSubscribers(
          accountId,
          false,
          [{ ...person, email: "f@example.com", events: '["booked"]' }],
          tx,
        ),
      );
      await store.write((tx) =>
        store.notifications.setSubscribers(
          accountId,
          false,
          [{ ...person, email: "g@example.com", events: '["completed"]' }],
          tx,
        ),
      );
      expect((await store.notifications.subscribers(accountId, false)).map((s) => s.email)).toEqual([
        "g@example.com",
      ]);
      expect(await store.notifications.subscribers(accountId, true)).toEqual([]);
    });
  });
}
