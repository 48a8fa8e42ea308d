// An order or a quote naming a site (site_id) and assets (asset_ids) instead of, or as well as, a free
// location (issue 34): the location comes from the site; a location given too must agree with it on state
// and ZIP. Each asset must be in force at that site, of the caller's account: any other id is refused the
// same way, so a caller never learns that another account's asset exists. The order's view then shows the
// site and its assets (with warranty_in_force), and the site's contact to the account and to the contractor
// holding the job. In kernel/ because orders/ and matching/ (the order, the quote, the views) take it and
// sites/ (the operations on sites) builds on both.

import { z } from "zod";
import { ASSET_LIMITS, type Asset, type Site, warrantyInForce } from "../../domain/sites/site.js";
import type { StateCode } from "../../domain/us-regions.js";
import { validationError } from "../../errors.js";
import type { Store } from "../../storage/store.js";

export const siteIdSchema = z
  .string({ error: "site_id must be a site id (site_...)" })
  .max(64, { error: "site_id must be at most 64 characters" })
  .regex(/^site_[0-9A-Za-z]{1,40}$/, { error: "site_id must be a site id (site_...)" })
  .describe("A site's id (site_...).");
export const assetIdSchema = z
  .string({ error: "asset_id must be an asset id (ast_...)" })
  .max(64, { error: "asset_id must be at most 64 characters" })
  .regex(/^ast_[0-9A-Za-z]{1,40}$/, { error: "asset_id must be an asset id (ast_...)" })
  .describe("An asset's id (ast_...).");

export const orderSiteShape = {
  site_id: siteIdSchema
    .optional()
    .describe(
      "One of your sites (dispatch.site_create): the order's location comes from it (location may then be " +
        "left out; given too, it must agree on state and ZIP). An archived site is refused (422 on site_id).",
    ),
  asset_ids: z
    .array(assetIdSchema)
    .min(1, { error: "asset_ids must name at least one asset (or be left out)" })
    .max(ASSET_LIMITS.assetsPerOrder, {
      error: `asset_ids names at most ${ASSET_LIMITS.assetsPerOrder} assets`,
    })
    .optional()
    .describe("Assets in force at site_id that the work is for: each asset's history lists the order."),
};

/** The location the request names: required unless a site_id is given (refinement for an input object). */
export function locationOrSite(value: unknown, ctx: z.RefinementCtx): void {
  if (typeof value !== "object" || value === null) return;
  const v = value as { location?: unknown; site_id?: unknown };
  if (v.location === undefined && v.site_id === undefined) {
    ctx.addIssue({ code: "custom", path: ["location"], message: "location is required (or name a site_id)" });
  }
}

export interface Location {
  state: StateCode;
  zip?: string | undefined;
  city?: string | undefined;
  address?: string | undefined;
  name?: string | undefined;
}

/** What a request names, resolved: its location, and its site and assets when it names a site. */
export interface NamedSite {
  location: Location;
  site: Site | null;
  assets: Asset[];
}

/**
 * Resolves the site and assets a request names for the caller (`owner`): 422 on site_id for a site that is
 * not the caller's (or archived), on location when the location given disagrees with the site, on
 * asset_ids for an asset that is not in force at the site.
 */
export async function resolveNamedSite(
  store: Store,
  owner: { accountId: string; livemode: boolean },
  input: { location?: Location | undefined; site_id?: string | undefined; asset_ids?: string[] | undefined },
): Promise<NamedSite> {
  if (input.site_id === undefined) {
    if (input.asset_ids !== undefined) {
      throw validationError([{ field: "asset_ids", message: "name the site_id the assets are at" }]);
    }
    return { location: input.location as Location, site: null, assets: [] };
  }
  const site = await store.sites.siteById(input.site_id);
  if (!site || site.accountId !== owner.accountId || site.livemode !== owner.livemode) {
    throw validationError([
      { field: "site_id", code: "unknown_site", message: `no site ${input.site_id} of yours in this mode` },
    ]);
  }
  if (site.archivedAt !== null) {
    throw validationError([
      { field: "site_id", code: "site_archived", message: `site ${site.id} is archived` },
    ]);
  }
  const given = input.location;
  if (given !== undefined) {
    const zipDiffers = given.zip !== undefined && given.zip.slice(0, 5) !== site.zip.slice(0, 5);
    if (given.state !== site.state || zipDiffers) {
      throw validationError([
        {
          field: "location",
          code: "site_mismatch",
          message: `the location given is not site ${site.id}'s (${site.state} ${site.zip}): leave location out, or give the site's`,
        },
      ]);
    }
  }
  const location: Location = {
    state: site.state,
    zip: site.zip,
    city: given?.city ?? site.city,
    address: given?.address ?? site.address,
    name: given?.name ?? site.name,
  };
  const ids = [...new Set(input.asset_ids ?? [])];
  const found = await store.sites.assetsByIds(ids);
  const byId = new Map(found.map((a) => [a.id, a]));
  const bad = ids.filter((id) => {
    const a = byId.get(id);
    return !a || a.siteId !== site.id || a.archivedAt !== null;
  });
  if (bad.length > 0) {
    throw validationError([
      {
        field: "asset_ids",
        code: "unknown_asset",
        message: `not an asset in force at site ${site.id}: ${bad.join(", ")}`,
      },
    ]);
  }
  return { location, site, assets: ids.map((id) => byId.get(id) as Asset) };
}

export const orderSiteSchema = z
  .object({
    site_id: z.string(),
    name: z.string(),
    time_zone: z.string(),
    hours: z.string().describe("The site's opening hours (empty: any time)."),
    access_notes: z.string().nullable(),
    contact: z
      .object({ name: z.string().nullable(), phone: z.string().nullable(), email: z.string().nullable() })
      .nullable()
      .describe("The site's contact: shown to the account and the contractor holding the job; else null."),
    assets: z.array(
      z.object({
        asset_id: z.string(),
        trade: z.string(),
        type: z.string(),
        make: z.string().nullable(),
        model: z.string().nullable(),
        serial: z.string().nullable(),
        warranty_ends_on: z.iso.date().nullable(),
        warranty_in_force: z.boolean().describe("The contractor may decide it is a warranty call."),
      }),
    ),
  })
  .meta({ id: "OrderSite" });

export type OrderSiteView = z.infer<typeof orderSiteSchema>;

/** The site and assets an order names, as its view shows them; the contact only when `withContact`. */
export function orderSiteView(
  site: Site,
  assets: readonly Asset[],
  now: Date,
  withContact: boolean,
): OrderSiteView {
  const today = now.toISOString().slice(0, 10);
  return {
    site_id: site.id,
    name: site.name,
    time_zone: site.timeZone,
    hours: site.hours,
    access_notes: site.accessNotes,
    contact: withContact ? { ...site.contact } : null,
    assets: assets.map((a) => ({
      asset_id: a.id,
      trade: a.trade,
      type: a.type,
      make: a.make,
      model: a.model,
      serial: a.serial,
      warranty_ends_on: a.warrantyEndsOn,
      warranty_in_force: warrantyInForce(a, today),
    })),
  };
}

/** The site view of an order as stored (null: the order names no site). */
export async function storedOrderSite(
  store: Store,
  orderId: string,
  now: Date,
  withContact: boolean,
): Promise<OrderSiteView | null> {
  const named = await store.sites.ofOrder(orderId);
  if (!named) return null;
  const [site, assets] = await Promise.all([
    store.sites.siteById(named.siteId),
    store.sites.assetsByIds(named.assetIds),
  ]);
  return site ? orderSiteView(site, assets, now, withContact) : null;
}

/** The site views of these orders, by order id (orders naming no site are not in it): for the lists of a
 * contractor's jobs and the dispatch team's orders, read in three queries whatever their number. */
export async function storedOrderSites(
  store: Store,
  orderIds: readonly string[],
  now: Date,
  withContact: boolean,
): Promise<Map<string, OrderSiteView>> {
  const named = await store.sites.ofOrders(orderIds);
  if (named.length === 0) return new Map();
  const [sites, assets] = await Promise.all([
    store.sites.sitesByIds(named.map((n) => n.siteId)),
    store.sites.assetsByIds([...new Set(named.flatMap((n) => n.assetIds))]),
  ]);
  const siteOf = new Map(sites.map((s) => [s.id, s]));
  const assetOf = new Map(assets.map((a) => [a.id, a]));
  const views = new Map<string, OrderSiteView>();
  for (const n of named) {
    const site = siteOf.get(n.siteId);
    if (!site) continue;
    const its = n.assetIds.flatMap((id) => assetOf.get(id) ?? []);
    views.set(n.orderId, orderSiteView(site, its, now, withContact));
  }
  return views;
}
