// Reading an account's sites: the list (filtered by state or text, archived ones left out unless asked,
// paged by id) and one site with its assets.

import { z } from "zod";
import { defineOperation } from "../kernel/operation.js";
import { cursorSchema, decodeCursor, pageLimitSchema, pageOf } from "../kernel/pagination.js";
import { booleanQuery } from "../kernel/schemas.js";
import {
  assetSchema,
  assetView,
  ownerOf,
  ownSite,
  siteIdSchema,
  siteSchema,
  siteView,
} from "./site-views.js";

const CURSOR_KIND = "sites";
const SITE_POSITION = /^(site_[0-9A-Za-z]{1,40})$/;

export const sitesOperation = defineOperation({
  id: "dispatchSites",
  name: "dispatch.sites",
  summary: "List your sites",
  description:
    "Your sites of this key's mode, oldest first, a page at a time (next_cursor). state narrows them to a " +
    "state; q to those whose name, address or city holds the text (without case). Archived sites are left " +
    "out unless include_archived is true.",
  access: "key",
  effect: "read",
  limit: "key",
  http: { method: "GET", path: "/api/dispatch/v1/sites", input: "query" },
  input: z.strictObject({
    state: z
      .string()
      .length(2, { error: "state must be a 2-letter code" })
      .transform((v) => v.toUpperCase())
      .optional(),
    q: z.string().trim().max(100, { error: "q must be at most 100 characters" }).optional(),
    include_archived: booleanQuery.default(false),
    limit: pageLimitSchema,
    cursor: cursorSchema,
  }),
  output: z
    .object({
      sites: z.array(siteSchema),
      next_cursor: z
        .string()
        .nullable()
        .describe("Pass as `cursor` for the next page; null on the last page."),
    })
    .meta({ id: "SiteList" }),
  example: { state: "TX" },
  async handler(ctx, input) {
    const owner = ownerOf(ctx);
    const after =
      input.cursor === undefined ? undefined : decodeCursor(input.cursor, CURSOR_KIND, SITE_POSITION)[1];
    const rows = await ctx.services.store.sites.sites({
      accountId: owner.accountId,
      livemode: owner.livemode,
      state: input.state,
      text: input.q,
      includeArchived: input.include_archived,
      after,
      limit: input.limit + 1,
    });
    const { page, next_cursor } = pageOf(rows, input.limit, CURSOR_KIND, (s) => s.id);
    return { sites: page.map((s) => siteView(s)), next_cursor };
  },
});

export const siteOperation = defineOperation({
  id: "dispatchSite",
  name: "dispatch.site",
  summary: "Read a site and its assets",
  description:
    "One of your sites (archived too), with its assets in force, each " +
    "with warranty_in_force. Another account's site is not found.",
  access: "key",
  effect: "read",
  limit: "key",
  http: { method: "GET", path: "/api/dispatch/v1/sites/:site_id", input: "params" },
  problems: [404],
  input: z.strictObject({ site_id: siteIdSchema }),
  output: z.object({ ...siteSchema.shape, assets: z.array(assetSchema) }).meta({ id: "SiteWithAssets" }),
  example: { site_id: "site_0VberZOdAb12Cd34Ef56" },
  async handler(ctx, input) {
    const owner = ownerOf(ctx);
    const site = await ownSite(ctx, owner, input.site_id);
    const assets = await ctx.services.store.sites.assetsOfSite(site.id, false);
    const now = ctx.services.now();
    return { ...siteView(site), assets: assets.map((a) => assetView(a, now)) };
  },
});
