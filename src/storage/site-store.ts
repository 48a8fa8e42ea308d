// Sites and assets (migration 0041), each mapped to and from its row here: livemode 0/1, a site's contact
// in three columns, an asset's tags as JSON text and its serial beside the key it is compared by.

import { type Kysely, sql } from "kysely";
import { type Asset, type Site, serialKey } from "../domain/sites/site.js";
import type { TradeCode } from "../domain/trades.js";
import type { StateCode } from "../domain/us-regions.js";
import type { AssetsTable, Database, SitesTable } from "./schema.js";
import type { SiteStore, WriteTx } from "./store.js";
import { trxOf } from "./write-tx.js";

function siteOf(row: SitesTable): Site {
  return {
    id: row.id,
    accountId: row.account_id,
    livemode: Number(row.livemode) === 1,
    name: row.name,
    address: row.address,
    city: row.city,
    state: row.state as StateCode,
    zip: row.zip,
    timeZone: row.time_zone,
    hours: row.hours,
    accessNotes: row.access_notes,
    contact: { name: row.contact_name, phone: row.contact_phone, email: row.contact_email },
    createdAt: row.created_at,
    updatedAt: row.updated_at,
    archivedAt: row.archived_at,
    seal: row.seal,
  };
}

/** A site's columns as it changes (every one but its id, account, mode and creation). */
function siteColumns(s: Site, actor: string) {
  return {
    name: s.name,
    address: s.address,
    city: s.city,
    state: s.state,
    zip: s.zip,
    time_zone: s.timeZone,
    hours: s.hours,
    access_notes: s.accessNotes,
    contact_name: s.contact.name,
    contact_phone: s.contact.phone,
    contact_email: s.contact.email,
    updated_at: s.updatedAt,
    updated_by: actor,
    archived_at: s.archivedAt,
    seal: s.seal,
  };
}

function assetOf(row: AssetsTable): Asset {
  return {
    id: row.id,
    siteId: row.site_id,
    accountId: row.account_id,
    livemode: Number(row.livemode) === 1,
    trade: row.trade as TradeCode,
    type: row.type,
    make: row.make,
    model: row.model,
    serial: row.serial,
    installedOn: row.installed_on,
    warrantyEndsOn: row.warranty_ends_on,
    tags: JSON.parse(row.tags) as string[],
    createdAt: row.created_at,
    updatedAt: row.updated_at,
    archivedAt: row.archived_at,
    seal: row.seal,
  };
}

function assetColumns(a: Asset, actor: string) {
  return {
    trade: a.trade,
    type: a.type,
    make: a.make,
    model: a.model,
    serial: a.serial,
    serial_key: a.serial === null ? null : serialKey(a.serial),
    installed_on: a.installedOn,
    warranty_ends_on: a.warrantyEndsOn,
    tags: JSON.stringify(a.tags),
    updated_at: a.updatedAt,
    updated_by: actor,
    archived_at: a.archivedAt,
    seal: a.seal,
  };
}

export class KyselySiteStore implements SiteStore {
  constructor(private readonly db: Kysely<Database>) {}

  async insertSite(s: Site, actor: string, tx: WriteTx): Promise<void> {
    await trxOf(tx, this.db)
      .insertInto("sites")
      .values({
        id: s.id,
        account_id: s.accountId,
        livemode: s.livemode ? 1 : 0,
        created_at: s.createdAt,
        created_by: actor,
        ...siteColumns(s, actor),
      })
      .execute();
  }

  async updateSite(s: Site, actor: string, tx: WriteTx): Promise<void> {
    await trxOf(tx, this.db).updateTable("sites").set(siteColumns(s, actor)).where("id", "=", s.id).execute();
  }

  async siteById(id: string, tx?: WriteTx): Promise<Site | undefined> {
    const row = await trxOf(tx, this.db)
      .selectFrom("sites")
      .selectAll()
      .where("id", "=", id)
      .executeTakeFirst();
    return row === undefined ? undefined : siteOf(row);
  }

  async sites(
    f: {
      accountId?: string | undefined;
      livemode: boolean;
      state?: string | undefined;
      text?: string | undefined;
      includeArchived?: boolean;
      after?: string | undefined;
      before?: string | undefined;
      newestFirst?: boolean;
      limit: number;
    },
    tx?: WriteTx,
  ): Promise<Site[]> {
    let q = trxOf(tx, this.db)
      .selectFrom("sites")
      .selectAll()
      .where("livemode", "=", f.livemode ? 1 : 0);
    if (f.accountId !== undefined) q = q.where("account_id", "=", f.accountId);
    if (f.before !== undefined) q = q.where("id", "<", f.before);
    if (!f.includeArchived) q = q.where("archived_at", "is", null);
    if (f.state !== undefined) q = q.where("state", "=", f.state);
    if (f.after !== undefined) q = q.where("id", ">", f.after);
    if (f.text !== undefined && f.text !== "") {
      // LIKE's wildcards in the text stand for themselves.
      const pattern = `%${f.text.toLowerCase().replace(/[\\%_]/g, (c) => `\\${c}`)}%`;
      q = q.where((eb) =>
        eb.or(
          (["name", "address", "city"] as const).map(
            (column) => sql<boolean>`lower(${eb.ref(column)}) like ${pattern} escape '\\'`,
          ),
        ),
      );
    }
    const rows = await q
      .orderBy("id", f.newestFirst ? "desc" : "asc")
      .limit(f.limit)
      .execute();
    return rows.map(siteOf);
  }

  async activeSiteCount(accountId: string, livemode: boolean, tx?: WriteTx): Promise<number> {
    const row = await trxOf(tx, this.db)
      .selectFrom("sites")
      .select((eb) => eb.fn.countAll().as("n"))
      .where("account_id", "=", accountId)
      .where("livemode", "=", livemode ? 1 : 0)
      .where("archived_at", "is", null)
      .executeTakeFirst();
    return Number(row?.n ?? 0);
  }

  async insertAsset(a: Asset, actor: string, tx: WriteTx): Promise<void> {
    await trxOf(tx, this.db)
      .insertInto("assets")
      .values({
        id: a.id,
        site_id: a.siteId,
        account_id: a.accountId,
        livemode: a.livemode ? 1 : 0,
        created_at: a.createdAt,
        created_by: actor,
        ...assetColumns(a, actor),
      })
      .execute();
  }

  async updateAsset(a: Asset, actor: string, tx: WriteTx): Promise<void> {
    await trxOf(tx, this.db)
      .updateTable("assets")
      .set(assetColumns(a, actor))
      .where("id", "=", a.id)
      .execute();
  }

  async assetById(id: string, tx?: WriteTx): Promise<Asset | undefined> {
    const row = await trxOf(tx, this.db)
      .selectFrom("assets")
      .selectAll()
      .where("id", "=", id)
      .executeTakeFirst();
    return row === undefined ? undefined : assetOf(row);
  }

  async assetsByIds(ids: readonly string[], tx?: WriteTx): Promise<Asset[]> {
    if (ids.length === 0) return [];
    const rows = await trxOf(tx, this.db)
      .selectFrom("assets")
      .selectAll()
      .where("id", "in", [...ids])
      .orderBy("id")
      .execute();
    return rows.map(assetOf);
  }

  async assetsOfSite(siteId: string, includeArchived: boolean, tx?: WriteTx): Promise<Asset[]> {
    let q = trxOf(tx, this.db).selectFrom("assets").selectAll().where("site_id", "=", siteId);
    if (!includeArchived) q = q.where("archived_at", "is", null);
    const rows = await q.orderBy("id").execute();
    return rows.map(assetOf);
  }

  async assetBySerial(siteId: string, serial: string, tx?: WriteTx): Promise<Asset | undefined> {
    const row = await trxOf(tx, this.db)
      .selectFrom("assets")
      .selectAll()
      .where("site_id", "=", siteId)
      .where("serial_key", "=", serialKey(serial))
      .where("archived_at", "is", null)
      .executeTakeFirst();
    return row === undefined ? undefined : assetOf(row);
  }

  async nameOnOrder(
    orderId: string,
    siteId: string,
    assetIds: readonly string[],
    tx: WriteTx,
  ): Promise<void> {
    const db = trxOf(tx, this.db);
    await db.insertInto("order_sites").values({ order_id: orderId, site_id: siteId }).execute();
    if (assetIds.length > 0) {
      await db
        .insertInto("order_assets")
        .values([...new Set(assetIds)].map((asset_id) => ({ order_id: orderId, asset_id })))
        .execute();
    }
  }

  async sitesByIds(ids: readonly string[], tx?: WriteTx): Promise<Site[]> {
    if (ids.length === 0) return [];
    const rows = await trxOf(tx, this.db)
      .selectFrom("sites")
      .selectAll()
      .where("id", "in", [...new Set(ids)])
      .execute();
    return rows.map(siteOf);
  }

  async ofOrders(
    orderIds: readonly string[],
    tx?: WriteTx,
  ): Promise<Array<{ orderId: string; siteId: string; assetIds: string[] }>> {
    if (orderIds.length === 0) return [];
    const db = trxOf(tx, this.db);
    const ids = [...new Set(orderIds)];
    const [sites, assets] = await Promise.all([
      db.selectFrom("order_sites").selectAll().where("order_id", "in", ids).execute(),
      db.selectFrom("order_assets").selectAll().where("order_id", "in", ids).orderBy("asset_id").execute(),
    ]);
    return sites.map((row) => ({
      orderId: row.order_id,
      siteId: row.site_id,
      assetIds: assets.filter((a) => a.order_id === row.order_id).map((a) => a.asset_id),
    }));
  }

  async ofOrder(orderId: string, tx?: WriteTx): Promise<{ siteId: string; assetIds: string[] } | undefined> {
    const db = trxOf(tx, this.db);
    const row = await db
      .selectFrom("order_sites")
      .select("site_id")
      .where("order_id", "=", orderId)
      .executeTakeFirst();
    if (row === undefined) return undefined;
    const assets = await db
      .selectFrom("order_assets")
      .select("asset_id")
      .where("order_id", "=", orderId)
      .orderBy("asset_id")
      .execute();
    return { siteId: row.site_id, assetIds: assets.map((a) => a.asset_id) };
  }

  async ordersOfAsset(assetId: string, limit: number, tx?: WriteTx): Promise<string[]> {
    const rows = await trxOf(tx, this.db)
      .selectFrom("order_assets")
      .select("order_id")
      .where("asset_id", "=", assetId)
      .orderBy("order_id", "desc")
      .limit(limit)
      .execute();
    return rows.map((r) => r.order_id);
  }
}
