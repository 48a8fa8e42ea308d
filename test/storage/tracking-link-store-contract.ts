// The tracking links' part of the storage contract (migration 0043): a link written and read back, at
// most one in force per order (a second insert, or two at once, leave one), a revocation once, a new link
// after it, and an order's progress reports read from the audit log in order. Run against SQLite always
// and PostgreSQL when TEST_DATABASE_URL is set.

import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { sealRecord } from "../../src/audit/record.js";
import type { Clock } from "../../src/clock.js";
import type { TrackingLinksTable } from "../../src/storage/schema.js";
import type { Store } from "../../src/storage/store.js";
import { testClock } from "../helpers/test-clock.js";

const AT = "2026-11-29T10:00:00.000Z";

function link(orderId: string, accountId: string, n: number): TrackingLinksTable {
  return {
    id: `${orderId.slice(-12)}link${n}`.padEnd(22, "0").slice(0, 22),
    order_id: orderId,
    account_id: accountId,
    livemode: 0,
    created_at: AT,
    created_by: "key:k1",
    expires_at: null,
    revoked_at: null,
    revoked_by: null,
    seal: "seal_contract",
  };
}

export function runTrackingLinkStoreContract(name: string, open: (clock: Clock) => Promise<Store>) {
  describe(`tracking link store contract: ${name}`, () => {
    let store: Store;
    let accountId: string;
    beforeAll(async () => {
      store = await open(testClock().now);
      await store.migrate();
      accountId = (await store.keys.ensureAccount(`tracking-${Math.random()}`)).id;
    });
    afterAll(async () => {
      await store.close();
    });

    it("keeps one link in force per order, revokes it once, and issues another after", async () => {
      const orderId = `ord_trk${Math.random().toString(36).slice(2, 12)}`;
      const first = link(orderId, accountId, 1);
      expect(await store.write((tx) => store.trackingLinks.insert(first, tx))).toBe(true);
      expect(await store.trackingLinks.byId(first.id)).toEqual(first);
      expect(await store.trackingLinks.live(orderId)).toEqual(first);
      // A second while the first is in force: not written.
      expect(await store.write((tx) => store.trackingLinks.insert(link(orderId, accountId, 2), tx))).toBe(
        false,
      );
      expect(await store.trackingLinks.ofOrder(orderId)).toEqual([first]);

      expect(await store.write((tx) => store.trackingLinks.revoke(first.id, AT, "key:k1", tx))).toBe(true);
      expect(await store.write((tx) => store.trackingLinks.revoke(first.id, AT, "key:k1", tx))).toBe(false);
      expect(await store.trackingLinks.live(orderId)).toBeUndefined();
      expect((await store.trackingLinks.byId(first.id))?.revoked_at).toBe(AT);

      const third = { ...link(orderId, accountId, 3), created_at: "2026-11-29T11:00:00.000Z" };
      expect(await store.write((tx) => store.trackingLinks.insert(third, tx))).toBe(true);
      expect((await store.trackingLinks.ofOrder(orderId)).map((l) => l.id)).toEqual([third.id, first.id]);
    });

    it("writes one of two links issued at once", async () => {
      const orderId = `ord_trk${Math.random().toString(36).slice(2, 12)}`;
      const results = await Promise.all(
        [4, 5].map((n) => store.write((tx) => store.trackingLinks.insert(link(orderId, accountId, n), tx))),
      );
      expect(results.filter(Boolean)).toHaveLength(1);
      expect(await store.trackingLinks.ofOrder(orderId)).toHaveLength(1);
    });

    it("reads an order's progress reports from the audit log, oldest first", async () => {
      const orderId = `ord_trk${Math.random().toString(36).slice(2, 12)}`;
      const report = (to: string, at: string) =>
        sealRecord({
          kind: "order.status_changed",
          at,
          accountId,
          livemode: false,
          orderId,
          actor: "contractor:ctr_x",
          data: { from: "accepted", to },
        });
      await store.write(async (tx) => {
        tx.appendAudit(report("en_route", "2026-11-29T10:05:00.000Z"));
        tx.appendAudit(report("on_site", "2026-11-29T10:30:00.000Z"));
      });
      const times = await store.trackingLinks.progressTimes(orderId);
      expect(times.map((t) => [t.at, JSON.parse(t.record).data.to])).toEqual([
        ["2026-11-29T10:05:00.000Z", "en_route"],
        ["2026-11-29T10:30:00.000Z", "on_site"],
      ]);
    });
  });
}
