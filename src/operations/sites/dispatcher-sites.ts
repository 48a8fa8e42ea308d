// The dispatch team's reads of sites (issue 34): every account's sites of its key's mode, newest first,
// and one site with its assets, as the dispatch team plans and dispatches work at them. The sites'
// contacts are not shown here: they are the account's and the contractor's on a job there.

import { z } from "zod";
import { ApiError } from "../../errors.js";
import { defineOperation, principalOf } from "../kernel/operation.js";
import { siteIdSchema } from "../kernel/order-site.js";
import { cursorSchema, decodeCursor, pageLimitSchema, pageOf } from "../kernel/pagination.js";
import { assetSchema, assetView, siteSchema, siteView } from "./site-views.js";

const CURSOR_KIND = "dsites";
const SITE_POSITION = /^(site_[0-9A-Za-z]{1,40})$/;

const dispatcherSiteSchema = z
  .object({ ...siteSchema.shape, account_id: z.string().describe("The account the site is of.") })
  .meta({ id: "DispatcherSite" });

export const dispatcherSitesOperation = defineOperation({
  id: "dispatcherSites",
  name: "dispatcher.sites",
  summary: "Every account's sites",
  description:
    "The sites of every account in the key's mode, newest first, a page at a time (next_cursor); " +
    "account_id, state and q (name, address or city, without case) narrow them; archived ones only with " +
    "include_archived=true. Without the sites' contacts.",
  access: "dispatcher",
  effect: "read",
  limit: "key",
  http: { method: "GET", path: "/api/dispatcher/v1/sites", input: "query" },
  input: z.strictObject({
    account_id: z.string().min(1).max(64).optional().describe("Only this account's sites."),
    state: z
      .string()
      .length(2, { error: "state must be a 2-letter code" })
      .transform((v) => v.toUpperCase())
      .optional(),
    q: z.string().trim().max(100, { error: "q must be at most 100 characters" }).optional(),
    include_archived: z
      .union([z.boolean(), z.enum(["true", "false"], { error: "include_archived must be true or false" })])
      .transform((v) => v === true || v === "true")
      .default(false),
    limit: pageLimitSchema,
    cursor: cursorSchema,
  }),
  output: z
    .object({ sites: z.array(dispatcherSiteSchema), next_cursor: z.string().nullable() })
    .meta({ id: "DispatcherSiteList" }),
  example: { state: "TX", limit: 50 },
  async handler(ctx, input) {
    const principal = principalOf(ctx);
    const before =
      input.cursor === undefined ? undefined : decodeCursor(input.cursor, CURSOR_KIND, SITE_POSITION)[1];
    const rows = await ctx.services.store.sites.sites({
      accountId: input.account_id,
      livemode: principal.livemode,
      state: input.state,
      text: input.q,
      includeArchived: input.include_archived,
      before,
      newestFirst: true,
      limit: input.limit + 1,
    });
    const { page, next_cursor } = pageOf(rows, input.limit, CURSOR_KIND, (s) => s.id);
    return { sites: page.map((s) => ({ ...siteView(s, false), account_id: s.accountId })), next_cursor };
  },
});

export const dispatcherSiteOperation = defineOperation({
  id: "dispatcherSite",
  name: "dispatcher.site",
  summary: "A site of any account, with its assets",
  description:
    "One site of any account in the key's mode (archived too), with its assets in force, each with " +
    "warranty_in_force. Without the site's contact.",
  access: "dispatcher",
  effect: "read",
  limit: "key",
  http: { method: "GET", path: "/api/dispatcher/v1/sites/:site_id", input: "params" },
  problems: [404],
  input: z.strictObject({ site_id: siteIdSchema }),
  output: z
    .object({ ...dispatcherSiteSchema.shape, assets: z.array(assetSchema) })
    .meta({ id: "DispatcherSiteWithAssets" }),
  example: { site_id: "site_0VberZOdAb12Cd34Ef56" },
  async handler(ctx, input) {
    const principal = principalOf(ctx);
    const { store } = ctx.services;
    const site = await store.sites.siteById(input.site_id);
    if (!site || site.livemode !== principal.livemode) {
      throw new ApiError("not_found", `No site ${input.site_id} in this key's mode.`);
    }
    const assets = await store.sites.assetsOfSite(site.id, false);
    const now = ctx.services.now();
    return {
      ...siteView(site, false),
      account_id: site.accountId,
      assets: assets.map((a) => assetView(a, now)),
    };
  },
});
