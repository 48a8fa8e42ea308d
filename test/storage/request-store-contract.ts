// The requests' part of the storage contract (migration 0045): a site's request link (one in force, two
// issued at once leave one, revoked once, another after), a request written, listed by status and site and
// decided once (a second decision is not written), the site's open orders of a trade (closed ones and other
// trades' left out) and the account's policy (none, set, set again). Run against SQLite always and
// PostgreSQL when TEST_DATABASE_URL is set.

import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Clock } from "../../src/clock.js";
import type { RequestLinksTable, RequestsTable } from "../../src/storage/schema.js";
import type { Store } from "../../src/storage/store.js";
import { orderFixture } from "../helpers/order-fixture.js";
import { testClock } from "../helpers/test-clock.js";

const AT = "2026-11-29T10:00:00.000Z";
const rnd = () => Math.random().toString(36).slice(2, 12);

function link(siteId: string, accountId: string, n: number): RequestLinksTable {
  return {
    id: `${siteId.slice(-12)}rl${n}`.padEnd(22, "0").slice(0, 22),
    site_id: siteId,
    account_id: accountId,
    livemode: 0,
    created_at: AT,
    created_by: "key:k1",
    revoked_at: null,
    revoked_by: null,
    seal: "seal_contract",
  };
}

function request(id: string, siteId: string, accountId: string): RequestsTable {
  return {
    id,
    account_id: accountId,
    livemode: 0,
    site_id: siteId,
    link_id: null,
    source: "form",
    description: "<b>leak</b> ünïcode",
    urgency: "urgent",
    reporter_name: "Sam",
    reporter_contact: "+1 555 0100",
    guessed_trade: "plumbing",
    guess_confidence_pm: 800,
    trade: null,
    status: "pending",
    order_id: null,
    reason: "held",
    decided_by: null,
    decided_at: null,
    created_by: "system:request-link:x",
    created_at: AT,
    updated_at: AT,
    seal: "seal_received",
    decision_seal: null,
  };
}

export function runRequestStoreContract(name: string, open: (clock: Clock) => Promise<Store>) {
  describe(`request store contract: ${name}`, () => {
    let store: Store;
    let accountId: string;
    beforeAll(async () => {
      store = await open(testClock().now);
      await store.migrate();
      accountId = (await store.keys.ensureAccount(`requests-${Math.random()}`)).id;
    });
    afterAll(async () => {
      await store.close();
    });

    it("keeps one link in force per site, revokes it once, and issues another after", async () => {
      const siteId = `site_${rnd()}`;
      const first = link(siteId, accountId, 1);
      expect(await store.write((tx) => store.requests.insertLink(first, tx))).toBe(true);
      expect(await store.requests.linkById(first.id)).toEqual(first);
      expect(await store.requests.liveLink(siteId)).toEqual(first);
      expect(await store.write((tx) => store.requests.insertLink(link(siteId, accountId, 2), tx))).toBe(
        false,
      );
      expect(await store.write((tx) => store.requests.revokeLink(first.id, AT, "key:k1", tx))).toBe(true);
      expect(await store.write((tx) => store.requests.revokeLink(first.id, AT, "key:k1", tx))).toBe(false);
      expect(await store.requests.liveLink(siteId)).toBeUndefined();
      const third = link(siteId, accountId, 3);
      expect(await store.write((tx) => store.requests.insertLink(third, tx))).toBe(true);
      expect((await store.requests.liveLink(siteId))?.id).toBe(third.id);
      // Two at once: one is written.
      const other = `site_${rnd()}`;
      const results = await Promise.all(
        [4, 5].map((n) => store.write((tx) => store.requests.insertLink(link(other, accountId, n), tx))),
      );
      expect(results.filter(Boolean)).toHaveLength(1);
    });

    it("writes a request, lists it by status and site, and decides it once", async () => {
      const siteId = `site_${rnd()}`;
      const a = request(`wrq_a${rnd()}`, siteId, accountId);
      const b = request(`wrq_b${rnd()}`, `site_${rnd()}`, accountId);
      await store.write(async (tx) => {
        await store.requests.insert(a, tx);
        await store.requests.insert(b, tx);
      });
      expect(await store.requests.byId(a.id)).toEqual(a);
      const listed = await store.requests.list({ accountId, livemode: false, limit: 10 });
      expect(listed.map((r) => r.id)).toEqual([b.id, a.id]);
      expect(
        (await store.requests.list({ accountId, livemode: false, siteId, limit: 10 })).map((r) => r.id),
      ).toEqual([a.id]);
      expect(await store.requests.list({ accountId, livemode: true, limit: 10 })).toEqual([]);
      expect(
        (await store.requests.list({ accountId, livemode: false, before: b.id, limit: 10 })).map((r) => r.id),
      ).toEqual([a.id]);
      const decision = {
        status: "ordered" as const,
        trade: "plumbing" as const,
        order_id: "ord_x",
        reason: null,
        decided_by: "key:k1",
        decided_at: AT,
        updated_at: AT,
        decision_seal: "seal_ordered",
      };
      expect(await store.write((tx) => store.requests.decide(a.id, decision, tx))).toBe(true);
      expect(
        await store.write((tx) => store.requests.decide(a.id, { ...decision, status: "rejected" }, tx)),
      ).toBe(false);
      expect(await store.requests.byId(a.id)).toEqual({ ...a, ...decision });
      expect(
        (await store.requests.list({ accountId, livemode: false, status: "pending", limit: 10 })).map(
          (r) => r.id,
        ),
      ).toEqual([b.id]);
    });

    it("reads a site's open orders of a trade, newest first", async () => {
      const siteId = `site_${rnd()}`;
      const mk = (id: string, trade: "plumbing" | "hvac", status: "accepted" | "completed", at: string) =>
        orderFixture({
          id,
          account_id: accountId,
          livemode: false,
          trade,
          status,
          created_at: at,
          reference_id: id,
        });
      const orders = [
        mk(`ord_o1${rnd()}`, "plumbing", "accepted", "2026-11-01T00:00:00.000Z"),
        mk(`ord_o2${rnd()}`, "plumbing", "accepted", "2026-11-02T00:00:00.000Z"),
        mk(`ord_o3${rnd()}`, "plumbing", "completed", "2026-11-03T00:00:00.000Z"),
        mk(`ord_o4${rnd()}`, "hvac", "accepted", "2026-11-04T00:00:00.000Z"),
      ];
      for (const o of orders) {
        await store.write(async (tx) => {
          await tx.insertOrder(o);
          await store.sites.nameOnOrder(o.id, siteId, [], tx);
        });
      }
      const open = await store.requests.openOrdersAt(siteId, "plumbing");
      expect(open.map((o) => o.id)).toEqual([orders[1]?.id, orders[0]?.id]);
      expect(await store.requests.openOrdersAt(`site_${rnd()}`, "plumbing")).toEqual([]);
    });

    it("reads no policy until one is set, then the latest", async () => {
      expect(await store.requests.policy(accountId, false)).toBeUndefined();
      const row = {
        account_id: accountId,
        livemode: 0,
        mode: "create" as const,
        updated_at: AT,
        updated_by: "key:k1",
        seal: "s1",
      };
      await store.write((tx) => store.requests.setPolicy(row, tx));
      await store.write((tx) => store.requests.setPolicy({ ...row, mode: "hold", seal: "s2" }, tx));
      expect(await store.requests.policy(accountId, false)).toEqual({ ...row, mode: "hold", seal: "s2" });
      expect(await store.requests.policy(accountId, true)).toBeUndefined();
    });

    it("keeps a request's photos in order, and counts their blobs as named", async () => {
      const id = `wrq_p${rnd()}`;
      const sha = (n: number) => `${id}${n}`.padEnd(64, "0");
      const row = (n: number) => ({
        request_id: id,
        position: n,
        sha256: sha(n),
        size: 100 * n,
        media_type: "image/png",
        thumbnail_sha256: n === 1 ? sha(9) : null,
        created_at: AT,
      });
      await store.write(async (tx) => {
        await store.requests.addPhoto(row(2), tx);
        await store.requests.addPhoto(row(1), tx);
      });
      expect(await store.requests.photosOf(id)).toEqual([row(1), row(2)]);
      // The same position twice is not written (two photos at once cannot both be the second): false.
      expect(await store.write((tx) => store.requests.addPhoto({ ...row(2), sha256: sha(7) }, tx))).toBe(
        false,
      );
      expect((await store.requests.photosOf(id)).map((p) => p.sha256)).toEqual([sha(1), sha(2)]);
      expect(await store.attachments.referenced([sha(1), sha(9), sha(5)])).toEqual(new Set([sha(1), sha(9)]));
    });
  });
}
