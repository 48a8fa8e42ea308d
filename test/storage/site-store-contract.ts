// The sites' part of the storage contract (migration 0041): sites and assets written and read back as
// the domain holds them, an account's list filtered and paged, a serial unique among a site's assets in
// force (compared without case, spaces or dashes), and the site and assets an order names. Run against
// SQLite always and PostgreSQL when TEST_DATABASE_URL is set.

import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Clock } from "../../src/clock.js";
import type { Asset, Site } from "../../src/domain/sites/site.js";
import { newSortableId } from "../../src/ids.js";
import type { Store } from "../../src/storage/store.js";
import { testClock } from "../helpers/test-clock.js";

const AT = "2026-11-29T10:00:00.000Z";

function site(accountId: string, overrides: Partial<Site> = {}): Site {
  return {
    id: newSortableId("site"),
    accountId,
    livemode: false,
    name: "Store #42",
    address: "500 Congress Ave",
    city: "Austin",
    state: "TX",
    zip: "78701",
    timeZone: "America/Chicago",
    hours: "mon-fri 07:00-21:00",
    accessNotes: "Back door",
    contact: { name: "Dana", phone: "+1 512 555 0142", email: "dana@example.com" },
    createdAt: AT,
    updatedAt: AT,
    archivedAt: null,
    seal: "seal_contract",
    ...overrides,
  };
}

function asset(s: Site, overrides: Partial<Asset> = {}): Asset {
  return {
    id: newSortableId("ast"),
    siteId: s.id,
    accountId: s.accountId,
    livemode: s.livemode,
    trade: "hvac",
    type: "rtu",
    make: "Carrier",
    model: "48FC",
    serial: "AB-12 34",
    installedOn: "2022-04-18",
    warrantyEndsOn: "2027-04-17",
    tags: ["roof", "north"],
    createdAt: AT,
    updatedAt: AT,
    archivedAt: null,
    seal: "seal_contract",
    ...overrides,
  };
}

export function runSiteStoreContract(name: string, open: (clock: Clock) => Promise<Store>) {
  describe(`site store contract: ${name}`, () => {
    let store: Store;
    let accountId: string;
    let otherId: string;
    beforeAll(async () => {
      store = await open(testClock().now);
      await store.migrate();
      accountId = (await store.keys.ensureAccount(`sites-${Math.random()}`)).id;
      otherId = (await store.keys.ensureAccount(`sites-other-${Math.random()}`)).id;
    });
    afterAll(async () => {
      await store.close();
    });

    it("writes a site and reads it back as written, changes and archives it", async () => {
      const s = site(accountId);
      await store.write((tx) => store.sites.insertSite(s, "key:k1", tx));
      expect(await store.sites.siteById(s.id)).toEqual(s);
      const changed = {
        ...s,
        hours: "",
        accessNotes: null,
        contact: { name: null, phone: null, email: null },
      };
      await store.write((tx) => store.sites.updateSite(changed, "key:k1", tx));
      expect(await store.sites.siteById(s.id)).toEqual(changed);
      const archived = { ...changed, archivedAt: "2026-11-30T00:00:00.000Z" };
      await store.write((tx) => store.sites.updateSite(archived, "key:k1", tx));
      expect((await store.sites.siteById(s.id))?.archivedAt).toBe(archived.archivedAt);
      expect(await store.sites.siteById("site_nothere")).toBeUndefined();
    });

    it("lists an account's sites of a mode by id, filtered by state and text, paged, archived ones only when asked", async () => {
      const mine = [
        site(accountId, { name: "Austin 100% Store", city: "Austin" }),
        site(accountId, { name: "Dallas", city: "Dallas", zip: "75201" }),
        site(accountId, { name: "Portland", state: "OR", zip: "97201", city: "Portland" }),
        site(accountId, { name: "Old", archivedAt: AT }),
      ];
      const theirs = site(otherId, { name: "Austin theirs" });
      const live = site(accountId, { name: "Austin live", livemode: true });
      await store.write(async (tx) => {
        for (const s of [...mine, theirs, live]) await store.sites.insertSite(s, "key:k1", tx);
      });
      const list = (f: {
        state?: string;
        text?: string;
        includeArchived?: boolean;
        after?: string;
        limit?: number;
      }) =>
        store.sites
          .sites({ accountId, livemode: false, limit: 50, ...f })
          .then((rows) => rows.filter((r) => mine.some((m) => m.id === r.id)).map((r) => r.name));
      // By id: ids made in one millisecond sort by their random part.
      const byId = (names: string[]) =>
        mine
          .filter((m) => names.includes(m.name))
          .sort((x, y) => (x.id < y.id ? -1 : 1))
          .map((m) => m.name);
      expect(await list({})).toEqual(byId(["Austin 100% Store", "Dallas", "Portland"]));
      expect(await list({ includeArchived: true })).toEqual(
        byId(["Austin 100% Store", "Dallas", "Portland", "Old"]),
      );
      expect(await list({ state: "OR" })).toEqual(["Portland"]);
      expect(await list({ text: "austin" })).toEqual(["Austin 100% Store"]);
      // LIKE's wildcards are the text itself: "100%" matches only a name holding it.
      expect(await list({ text: "0% s" })).toEqual(["Austin 100% Store"]);
      expect(await list({ text: "_allas" })).toEqual([]);
      const [one, two] = byId(["Austin 100% Store", "Dallas", "Portland"]);
      const after = mine.find((m) => m.name === one)?.id;
      const next = await store.sites.sites({ accountId, livemode: false, limit: 1, after });
      expect(next.map((s) => s.name)).toEqual([two]);
      expect(await store.sites.activeSiteCount(otherId, false)).toBe(1);
      // Every account's, newest first, before a position (the dispatch team's list).
      const everyone = await store.sites.sites({ livemode: false, newestFirst: true, limit: 500 });
      const ours = everyone.filter((r) => [...mine, theirs].some((m) => m.id === r.id)).map((r) => r.id);
      expect(ours).toEqual(
        [...mine, theirs]
          .filter((m) => m.archivedAt === null)
          .map((m) => m.id)
          .sort()
          .reverse(),
      );
      const newest = ours[0] as string;
      const older = await store.sites.sites({
        livemode: false,
        newestFirst: true,
        before: newest,
        limit: 500,
      });
      expect(older.map((r) => r.id)).not.toContain(newest);
      expect(older.map((r) => r.id)).toContain(ours[1]);
    });

    it("writes assets, finds one by serial among those in force at its site, and lists a site's", async () => {
      const s = site(accountId);
      const a = asset(s);
      const b = asset(s, {
        serial: null,
        tags: [],
        make: null,
        model: null,
        installedOn: null,
        warrantyEndsOn: null,
      });
      await store.write(async (tx) => {
        await store.sites.insertSite(s, "key:k1", tx);
        await store.sites.insertAsset(a, "key:k1", tx);
        await store.sites.insertAsset(b, "key:k1", tx);
      });
      expect(await store.sites.assetById(a.id)).toEqual(a);
      expect(await store.sites.assetById(b.id)).toEqual(b);
      expect((await store.sites.assetBySerial(s.id, "ab1234"))?.id).toBe(a.id);
      expect(await store.sites.assetBySerial(s.id, "AB1235")).toBeUndefined();
      expect((await store.sites.assetsByIds([b.id, a.id])).map((x) => x.id).sort()).toEqual(
        [a.id, b.id].sort(),
      );
      const archived = { ...a, archivedAt: AT };
      await store.write((tx) => store.sites.updateAsset(archived, "key:k1", tx));
      expect(await store.sites.assetBySerial(s.id, "AB-12 34")).toBeUndefined();
      expect((await store.sites.assetsOfSite(s.id, false)).map((x) => x.id)).toEqual([b.id]);
      expect((await store.sites.assetsOfSite(s.id, true)).map((x) => x.id)).toEqual([a.id, b.id].sort());
      // Its serial is free again at the site: a new asset takes it.
      const again = asset(s);
      await store.write((tx) => store.sites.insertAsset(again, "key:k1", tx));
      expect((await store.sites.assetBySerial(s.id, "AB1234"))?.id).toBe(again.id);
    });

    it("refuses a second asset in force with the same serial at one site (the unique index)", async () => {
      const s = site(accountId);
      await store.write(async (tx) => {
        await store.sites.insertSite(s, "key:k1", tx);
        await store.sites.insertAsset(asset(s, { serial: "X-1" }), "key:k1", tx);
      });
      await expect(
        store.write((tx) => store.sites.insertAsset(asset(s, { serial: "x 1" }), "key:k1", tx)),
      ).rejects.toThrow();
      // At another site the same serial is another asset's.
      const t = site(accountId);
      await store.write(async (tx) => {
        await store.sites.insertSite(t, "key:k1", tx);
        await store.sites.insertAsset(asset(t, { serial: "X-1" }), "key:k1", tx);
      });
      expect(await store.sites.assetBySerial(t.id, "X1")).toBeDefined();
    });

    it("records the site and assets an order names, and an asset's orders newest first", async () => {
      const s = site(accountId);
      const a = asset(s, { serial: null });
      await store.write(async (tx) => {
        await store.sites.insertSite(s, "key:k1", tx);
        await store.sites.insertAsset(a, "key:k1", tx);
      });
      const first = newSortableId("ord");
      const second = `${first.slice(0, -1)}${first.endsWith("z") ? "y" : "z"}`;
      const [older, newer] = [first, second].sort();
      await store.write(async (tx) => {
        await store.sites.nameOnOrder(older as string, s.id, [a.id, a.id], tx);
        await store.sites.nameOnOrder(newer as string, s.id, [a.id], tx);
      });
      const unnamed = newSortableId("ord");
      await store.write((tx) => store.sites.nameOnOrder(unnamed, s.id, [], tx));
      expect(await store.sites.ofOrder(older as string)).toEqual({ siteId: s.id, assetIds: [a.id] });
      expect(await store.sites.ofOrder(unnamed)).toEqual({ siteId: s.id, assetIds: [] });
      expect(await store.sites.ofOrder("ord_none")).toBeUndefined();
      expect(await store.sites.ordersOfAsset(a.id, 10)).toEqual([newer, older]);
      expect(await store.sites.ordersOfAsset(a.id, 1)).toEqual([newer]);
    });
  });
}
