// The equipment at an account's sites (issue 34): create, change, archive and list, each change sealed
// (asset.created, asset.updated, asset.archived). An asset's type comes from its trade's short list; its
// serial is unique among the assets in force at its site (422 on serial).

import { z } from "zod";
import { sealRecord } from "../../audit/record.js";
import { ASSET_LIMITS, type Asset, checkAsset } from "../../domain/sites/site.js";
import type { TradeCode } from "../../domain/trades.js";
import { validationError } from "../../errors.js";
import { newSortableId } from "../../ids.js";
import type { Store, WriteTx } from "../../storage/store.js";
import { defineOperation } from "../kernel/operation.js";
import { tradeSchema } from "../kernel/schemas.js";
import {
  assetFieldsShape,
  assetIdSchema,
  assetRecord,
  assetSchema,
  assetView,
  ownAsset,
  ownerOf,
  ownSite,
  siteIdSchema,
} from "./site-views.js";

/** Refuses an asset whose serial another asset in force at the site has (422 on serial). */
async function checkSerial(store: Store, asset: Asset, tx: WriteTx): Promise<void> {
  if (asset.serial === null) return;
  const holder = await store.sites.assetBySerial(asset.siteId, asset.serial, tx);
  if (holder && holder.id !== asset.id) {
    throw validationError([
      {
        field: "serial",
        code: "duplicate_serial",
        message: `asset ${holder.id} at this site has serial ${holder.serial}`,
      },
    ]);
  }
}

function checked(asset: Asset): Asset {
  const errors = checkAsset(asset);
  if (errors.length > 0) throw validationError(errors);
  return asset;
}

export const assetCreateOperation = defineOperation({
  id: "dispatchAssetCreate",
  name: "dispatch.asset_create",
  summary: "Record an asset at a site",
  description:
    "Records a piece of equipment at one of your sites: its trade and type (from the trade's list, or " +
    "other), make, model, serial (unique among the site's assets in force: 422 on serial), install date, " +
    `warranty end and up to ${ASSET_LIMITS.tags} tags. Orders then name it in asset_ids, and its history ` +
    "lists them. A site of another account is not found; an archived site takes no new asset (422 on " +
    "site_id). Sealed (asset.created).",
  access: "key",
  effect: "write",
  limit: "key",
  http: { method: "POST", path: "/api/dispatch/v1/assets", input: "body" },
  problems: [404],
  input: z.strictObject({ site_id: siteIdSchema, trade: tradeSchema, ...assetFieldsShape }),
  output: assetSchema,
  example: {
    site_id: "site_0VberZOdAb12Cd34Ef56",
    trade: "hvac",
    type: "rtu",
    make: "Carrier",
    model: "48FC-06",
    serial: "2419G20417",
    installed_on: "2022-04-18",
    warranty_ends_on: "2027-04-17",
    tags: ["roof", "north"],
  },
  async handler(ctx, input) {
    const owner = ownerOf(ctx);
    const { store } = ctx.services;
    const now = ctx.services.now();
    const at = now.toISOString();
    const asset = await store.write(async (tx) => {
      const site = await ownSite(ctx, owner, input.site_id, tx);
      if (site.archivedAt !== null) {
        throw validationError([
          { field: "site_id", code: "site_archived", message: "this site is archived" },
        ]);
      }
      const held = await store.sites.assetsOfSite(site.id, false, tx);
      if (held.length >= ASSET_LIMITS.assetsPerSite) {
        throw validationError([
          { field: "site_id", message: `a site holds at most ${ASSET_LIMITS.assetsPerSite} assets in force` },
        ]);
      }
      const draft = checked({
        id: newSortableId("ast"),
        siteId: site.id,
        accountId: owner.accountId,
        livemode: owner.livemode,
        trade: input.trade as TradeCode,
        type: input.type,
        make: input.make,
        model: input.model,
        serial: input.serial,
        installedOn: input.installed_on,
        warrantyEndsOn: input.warranty_ends_on,
        tags: input.tags ?? [],
        createdAt: at,
        updatedAt: at,
        archivedAt: null,
        seal: "",
      });
      await checkSerial(store, draft, tx);
      const record = sealRecord({
        kind: "asset.created",
        at,
        accountId: owner.accountId,
        livemode: owner.livemode,
        actor: owner.actor,
        data: { asset_id: draft.id, asset: assetRecord(draft) },
      });
      const created = { ...draft, seal: record.seal };
      await store.sites.insertAsset(created, owner.actor, tx);
      tx.appendAudit(record);
      return created;
    });
    return assetView(asset, now);
  },
});

export const assetUpdateOperation = defineOperation({
  id: "dispatchAssetUpdate",
  name: "dispatch.asset_update",
  summary: "Change an asset",
  description:
    "Changes the fields given of one of your assets (type, make, model, serial, dates, tags; its site and " +
    "trade stay). A serial another asset in force at the site has is refused (422 on serial). An archived " +
    "asset is not changed (422 on asset_id). Sealed (asset.updated) with the fields changed.",
  access: "key",
  effect: "write",
  limit: "key",
  http: { method: "POST", path: "/api/dispatch/v1/assets/update", input: "body" },
  problems: [404],
  input: z.strictObject({
    asset_id: assetIdSchema,
    type: assetFieldsShape.type.optional(),
    make: assetFieldsShape.make,
    model: assetFieldsShape.model,
    serial: assetFieldsShape.serial,
    installed_on: assetFieldsShape.installed_on,
    warranty_ends_on: assetFieldsShape.warranty_ends_on,
    tags: assetFieldsShape.tags,
  }),
  output: assetSchema,
  example: { asset_id: "ast_0VberZOdAb12Cd34Ef56", warranty_ends_on: "2028-04-17", tags: ["roof"] },
  async handler(ctx, input) {
    const owner = ownerOf(ctx);
    const { store } = ctx.services;
    const now = ctx.services.now();
    const at = now.toISOString();
    const raw = (ctx.rawInput ?? {}) as Record<string, unknown>;
    const sent = (k: string) => Object.hasOwn(raw, k);
    const asset = await store.write(async (tx) => {
      const before = await ownAsset(ctx, owner, input.asset_id, tx);
      if (before.archivedAt !== null) {
        throw validationError([
          { field: "asset_id", code: "asset_archived", message: "this asset is archived" },
        ]);
      }
      const after = checked({
        ...before,
        type: input.type ?? before.type,
        make: sent("make") ? input.make : before.make,
        model: sent("model") ? input.model : before.model,
        serial: sent("serial") ? input.serial : before.serial,
        installedOn: sent("installed_on") ? input.installed_on : before.installedOn,
        warrantyEndsOn: sent("warranty_ends_on") ? input.warranty_ends_on : before.warrantyEndsOn,
        tags: input.tags ?? before.tags,
        updatedAt: at,
      });
      await checkSerial(store, after, tx);
      const was = assetRecord(before);
      const now_ = assetRecord(after);
      const changed = (Object.keys(now_) as Array<keyof typeof now_>).filter(
        (k) => JSON.stringify(was[k]) !== JSON.stringify(now_[k]),
      );
      const record = sealRecord({
        kind: "asset.updated",
        at,
        accountId: owner.accountId,
        livemode: owner.livemode,
        actor: owner.actor,
        data: { asset_id: before.id, changed, asset: now_ },
      });
      const updated = { ...after, seal: record.seal };
      await store.sites.updateAsset(updated, owner.actor, tx);
      tx.appendAudit(record);
      return updated;
    });
    return assetView(asset, now);
  },
});

export const assetArchiveOperation = defineOperation({
  id: "dispatchAssetArchive",
  name: "dispatch.asset_archive",
  summary: "Archive an asset",
  description:
    "Archives one of your assets (replaced, removed): no new order may name it; its history stays. Its " +
    "serial is free again at its site. Archiving an archived asset answers it as it is. Sealed " +
    "(asset.archived).",
  access: "key",
  effect: "destructive",
  setsState: true,
  limit: "key",
  http: { method: "POST", path: "/api/dispatch/v1/assets/archive", input: "body" },
  problems: [404],
  input: z.strictObject({ asset_id: assetIdSchema }),
  output: assetSchema,
  example: { asset_id: "ast_0VberZOdAb12Cd34Ef56" },
  async handler(ctx, input) {
    const owner = ownerOf(ctx);
    const { store } = ctx.services;
    const now = ctx.services.now();
    const at = now.toISOString();
    const asset = await store.write(async (tx) => {
      const before = await ownAsset(ctx, owner, input.asset_id, tx);
      if (before.archivedAt !== null) return before;
      const record = sealRecord({
        kind: "asset.archived",
        at,
        accountId: owner.accountId,
        livemode: owner.livemode,
        actor: owner.actor,
        data: { asset_id: before.id, site_id: before.siteId },
      });
      const archived = { ...before, archivedAt: at, updatedAt: at, seal: record.seal };
      await store.sites.updateAsset(archived, owner.actor, tx);
      tx.appendAudit(record);
      return archived;
    });
    return assetView(asset, now);
  },
});

export const assetsOperation = defineOperation({
  id: "dispatchAssets",
  name: "dispatch.assets",
  summary: "List a site's assets",
  description:
    "Every asset of one of your sites, archived ones too (archived_at set), oldest first, each with " +
    "warranty_in_force (dispatch.site gives those in force). Another account's site is not found.",
  access: "key",
  effect: "read",
  limit: "key",
  http: { method: "GET", path: "/api/dispatch/v1/sites/:site_id/assets", input: "params" },
  problems: [404],
  input: z.strictObject({ site_id: siteIdSchema }),
  output: z.object({ assets: z.array(assetSchema) }).meta({ id: "AssetList" }),
  example: { site_id: "site_0VberZOdAb12Cd34Ef56" },
  async handler(ctx, input) {
    const owner = ownerOf(ctx);
    const site = await ownSite(ctx, owner, input.site_id);
    const assets = await ctx.services.store.sites.assetsOfSite(site.id, true);
    const now = ctx.services.now();
    return { assets: assets.map((a) => assetView(a, now)) };
  },
});
