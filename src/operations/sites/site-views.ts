// What the sites' and assets' operations share: their input fields, the views of a site and an asset,
// who may call them (an account's key, on its own sites of its key's mode), and a site or asset of the
// caller's found or 404 (another account's reads as one that does not exist).

import { z } from "zod";
import {
  ASSET_LIMITS,
  ASSET_TYPE_LIST,
  type Asset,
  SITE_LIMITS,
  type Site,
  sitePoint,
  warrantyInForce,
} from "../../domain/sites/site.js";
import { ApiError } from "../../errors.js";
import type { WriteTx } from "../../storage/store.js";
import { type OperationContext, principalOf } from "../kernel/operation.js";
import { sealSchema } from "../matching/decision-records.js";

const S = SITE_LIMITS;
const A = ASSET_LIMITS;

const text = (field: string, max: number) =>
  z
    .string({ error: `${field} must be a string` })
    .trim()
    .min(1, { error: `${field} must not be empty` })
    .max(max, { error: `${field} must be at most ${max} characters` });
const optionalText = (field: string, max: number) =>
  z
    .string({ error: `${field} must be a string` })
    .trim()
    .max(max, { error: `${field} must be at most ${max} characters` })
    .nullable()
    .optional()
    .transform((v) => (v === "" || v === undefined ? null : v));

export { assetIdSchema, siteIdSchema } from "../kernel/order-site.js";

const contactSchema = z
  .strictObject({
    name: optionalText("contact.name", S.contactNameLength),
    phone: optionalText("contact.phone", S.contactPhoneLength),
    email: z
      .email({ error: "contact.email must be an email address" })
      .max(S.contactEmailLength)
      .nullable()
      .optional()
      .transform((v) => v ?? null),
  })
  .describe("Who to ask for at the site: shown to your account and to the contractor on a job there.");

/** A site's fields as a caller gives them (create, import; update takes each as optional). */
export const siteFieldsShape = {
  name: text("name", S.nameLength).describe("What you call the site (Store #42)."),
  address: text("address", S.addressLength),
  city: text("city", S.cityLength),
  state: z
    .string({ error: "state must be a 2-letter code" })
    .trim()
    .length(2, { error: "state must be a 2-letter code" })
    .transform((v) => v.toUpperCase())
    .describe("Two-letter code of a US state, DC or territory."),
  zip: z
    .string({ error: "zip must be a US ZIP code: 12345 or 12345-6789" })
    .trim()
    .max(10, { error: "zip must be a US ZIP code: 12345 or 12345-6789" })
    .regex(/^\d{5}(-\d{4})?$/, { error: "zip must be a US ZIP code: 12345 or 12345-6789" })
    .describe("The site's ZIP code, in `state`: its time zone is derived from them."),
  hours: z
    .string({ error: "hours must be a string" })
    .max(S.hoursLength, { error: `hours must be at most ${S.hoursLength} characters` })
    .default("")
    .describe(
      "Opening hours, local time, as contractors' working hours are written: \"mon-fri 07:00-21:00; sat " +
        '09:00-17:00"; blank (the default): any time.',
    ),
  access_notes: optionalText("access_notes", S.accessNotesLength).describe(
    "How to get in (gate code, loading dock, keys at the desk).",
  ),
  contact: contactSchema.optional(),
};

const contactView = z.object({
  name: z.string().nullable(),
  phone: z.string().nullable(),
  email: z.string().nullable(),
});

export const siteSchema = z
  .object({
    site_id: z.string(),
    livemode: z.boolean(),
    name: z.string(),
    address: z.string(),
    city: z.string(),
    state: z.string(),
    zip: z.string(),
    time_zone: z.string().describe("IANA zone derived from the state and ZIP."),
    point: z
      .object({ lat: z.number(), lon: z.number() })
      .nullable()
      .describe("The ZIP's centroid (approximate)."),
    hours: z.string().describe("Opening hours in their canonical text; empty: any time."),
    access_notes: z.string().nullable(),
    contact: contactView
      .nullable()
      .describe(
        "The site's contact; null in the dispatch team's views (it is the account's and its contractor's).",
      ),
    created_at: z.iso.datetime(),
    updated_at: z.iso.datetime(),
    archived_at: z.iso.datetime().nullable(),
    seal: sealSchema.describe("The audit record of the site's latest change."),
  })
  .meta({ id: "Site" });

export function siteView(s: Site, withContact = true): z.input<typeof siteSchema> {
  return {
    site_id: s.id,
    livemode: s.livemode,
    name: s.name,
    address: s.address,
    city: s.city,
    state: s.state,
    zip: s.zip,
    time_zone: s.timeZone,
    point: sitePoint(s),
    hours: s.hours,
    access_notes: s.accessNotes,
    contact: withContact ? { ...s.contact } : null,
    created_at: s.createdAt,
    updated_at: s.updatedAt,
    archived_at: s.archivedAt,
    seal: s.seal,
  };
}

/** A site as its records seal it: its contact under `contact`, a disclosure (audit/redaction.ts). */
export function siteRecord(s: Site) {
  return {
    name: s.name,
    address: s.address,
    city: s.city,
    state: s.state,
    zip: s.zip,
    time_zone: s.timeZone,
    hours: s.hours,
    access_notes: s.accessNotes,
    contact: { ...s.contact },
  };
}

const day = (field: string) =>
  z.iso
    .date({ error: `${field} must be a date, YYYY-MM-DD` })
    .max(10, { error: `${field} must be a date, YYYY-MM-DD` })
    .nullable()
    .optional()
    .transform((v) => v ?? null);

const tagsSchema = z
  .array(
    z
      .string({ error: "each tag must be a string" })
      .trim()
      .min(1, { error: "a tag must not be empty" })
      .max(A.tagLength, { error: `a tag is at most ${A.tagLength} characters` }),
  )
  .max(A.tags, { error: `at most ${A.tags} tags` })
  .transform((tags) => [...new Set(tags)]);

/** An asset's fields as a caller gives them (update takes each as optional, and no site). */
export const assetFieldsShape = {
  type: z
    .string({ error: "type must be a string" })
    .trim()
    .toLowerCase()
    .max(40)
    .describe(`The kind of equipment, from its trade's list (or other): ${ASSET_TYPE_LIST.join(", ")}.`),
  make: optionalText("make", A.makeLength),
  model: optionalText("model", A.modelLength),
  serial: optionalText("serial", A.serialLength).describe(
    "The serial number: unique among the assets in force at the site (without case, spaces or dashes).",
  ),
  installed_on: day("installed_on"),
  warranty_ends_on: day("warranty_ends_on").describe("The last day the warranty covers."),
  tags: tagsSchema.optional().describe(`Your own labels, at most ${A.tags}.`),
};

export const assetSchema = z
  .object({
    asset_id: z.string(),
    site_id: z.string(),
    trade: z.string(),
    type: z.string(),
    make: z.string().nullable(),
    model: z.string().nullable(),
    serial: z.string().nullable(),
    installed_on: z.iso.date().nullable(),
    warranty_ends_on: z.iso.date().nullable(),
    warranty_in_force: z.boolean().describe("Whether the warranty covers today (UTC)."),
    tags: z.array(z.string()),
    created_at: z.iso.datetime(),
    updated_at: z.iso.datetime(),
    archived_at: z.iso.datetime().nullable(),
    seal: sealSchema.describe("The audit record of the asset's latest change."),
  })
  .meta({ id: "Asset" });

export function assetView(a: Asset, now: Date): z.input<typeof assetSchema> {
  return {
    asset_id: a.id,
    site_id: a.siteId,
    trade: a.trade,
    type: a.type,
    make: a.make,
    model: a.model,
    serial: a.serial,
    installed_on: a.installedOn,
    warranty_ends_on: a.warrantyEndsOn,
    warranty_in_force: warrantyInForce(a, now.toISOString().slice(0, 10)),
    tags: [...a.tags],
    created_at: a.createdAt,
    updated_at: a.updatedAt,
    archived_at: a.archivedAt,
    seal: a.seal,
  };
}

export function assetRecord(a: Asset) {
  return {
    site_id: a.siteId,
    trade: a.trade,
    type: a.type,
    make: a.make,
    model: a.model,
    serial: a.serial,
    installed_on: a.installedOn,
    warranty_ends_on: a.warrantyEndsOn,
    tags: [...a.tags],
  };
}

/** The account and mode an account's key manages sites in, and who it is in their records. */
/** The caller's account and mode, and the actor its records name: its key, or the service itself when it
 * acts for the account (the sandbox's first start seeding its sites: kernel/service-context.ts). */
export function ownerOf(ctx: OperationContext): {
  accountId: string;
  livemode: boolean;
  actor: `key:${string}` | `system:${string}`;
} {
  const principal = principalOf(ctx);
  return {
    accountId: principal.accountId,
    livemode: principal.livemode,
    actor: ctx.actingAs ?? `key:${principal.keyId}`,
  };
}

type Owner = { accountId: string; livemode: boolean };
const mine = (x: { accountId: string; livemode: boolean }, owner: Owner) =>
  x.accountId === owner.accountId && x.livemode === owner.livemode;

/** The caller's site, or 404 (another account's or mode's is not found). */
export async function ownSite(ctx: OperationContext, owner: Owner, id: string, tx?: WriteTx): Promise<Site> {
  const site = await ctx.services.store.sites.siteById(id, tx);
  if (!site || !mine(site, owner)) throw new ApiError("not_found", `No site ${id} for this API key.`);
  return site;
}

/** The caller's asset, or 404. */
export async function ownAsset(
  ctx: OperationContext,
  owner: Owner,
  id: string,
  tx?: WriteTx,
): Promise<Asset> {
  const asset = await ctx.services.store.sites.assetById(id, tx);
  if (!asset || !mine(asset, owner)) throw new ApiError("not_found", `No asset ${id} for this API key.`);
  return asset;
}
