// An account's sites (issue 34): create, change and archive, each sealed in the audit log (site.created,
// site.updated, site.archived) with the site's contact as a disclosure for the account and the dispatch
// team. A site's ZIP must be in its state; its time zone is derived from them; its opening hours are
// written as contractors' working hours are. A change applies to the orders made after it.

import { z } from "zod";
import { sealRecord } from "../../audit/record.js";
import { checkSite, SITE_LIMITS, type Site } from "../../domain/sites/site.js";
import { validationError } from "../../errors.js";
import { newSortableId } from "../../ids.js";
import type { Store, WriteTx } from "../../storage/store.js";
import { defineOperation } from "../kernel/operation.js";
import {
  ownerOf,
  ownSite,
  siteFieldsShape,
  siteIdSchema,
  siteRecord,
  siteSchema,
  siteView,
} from "./site-views.js";

export const siteInput = z.strictObject(siteFieldsShape);
export type SiteInput = z.output<typeof siteInput>;

interface Owner {
  accountId: string;
  livemode: boolean;
  actor: `key:${string}` | `system:${string}`;
}

/** The site `input` describes, checked (422 naming each field at fault), not yet written. */
export function newSite(owner: Owner, input: SiteInput, at: string, seal: string): Site {
  const contact = input.contact ?? { name: null, phone: null, email: null };
  const checked = checkSite({ ...input, accessNotes: input.access_notes, contact });
  if (!checked.ok) throw validationError(checked.errors);
  return {
    id: newSortableId("site"),
    accountId: owner.accountId,
    livemode: owner.livemode,
    name: input.name,
    address: input.address,
    city: input.city,
    state: checked.state,
    zip: input.zip,
    timeZone: checked.timeZone,
    hours: checked.hours,
    accessNotes: input.access_notes,
    contact,
    createdAt: at,
    updatedAt: at,
    archivedAt: null,
    seal,
  };
}

/** Refuses a site beyond the account's limit of sites in force (422 on `name`). */
export async function checkRoom(store: Store, owner: Owner, adding: number, tx: WriteTx): Promise<void> {
  const count = await store.sites.activeSiteCount(owner.accountId, owner.livemode, tx);
  if (count + adding > SITE_LIMITS.sitesPerAccount) {
    throw validationError([
      {
        field: "name",
        code: "too_many_sites",
        message: `an account keeps at most ${SITE_LIMITS.sitesPerAccount} sites in force per mode: archive some first`,
      },
    ]);
  }
}

export const siteCreateOperation = defineOperation({
  id: "dispatchSiteCreate",
  name: "dispatch.site_create",
  summary: "Create a site",
  description:
    "Records one of your locations: name, address, city, state and ZIP (the ZIP must be in the state: 422 " +
    "on zip otherwise), opening hours (as contractors' working hours: \"mon-fri 07:00-21:00; sat " +
    '09:00-17:00"; blank: any time), access notes and a site contact (name, phone, email: shown to you ' +
    "and to the contractor on a job there, never to others). Its time zone is derived from the state and " +
    "ZIP. Orders then name it by site_id instead of a location. Sealed (site.created).",
  access: "key",
  effect: "write",
  limit: "key",
  http: { method: "POST", path: "/api/dispatch/v1/sites", input: "body" },
  input: siteInput,
  output: siteSchema,
  example: {
    name: "Store #42",
    address: "500 Congress Ave",
    city: "Austin",
    state: "TX",
    zip: "78701",
    hours: "mon-sat 07:00-21:00; sun 09:00-18:00",
    access_notes: "Loading dock at the back; ask for the manager",
    contact: { name: "Dana Ortiz", phone: "+1 512 555 0142", email: "store42@example.com" },
  },
  async handler(ctx, input) {
    const owner = ownerOf(ctx);
    const { store } = ctx.services;
    const at = ctx.services.now().toISOString();
    const site = await store.write(async (tx) => {
      await checkRoom(store, owner, 1, tx);
      const draft = newSite(owner, input, at, "");
      const record = sealRecord({
        kind: "site.created",
        at,
        accountId: owner.accountId,
        livemode: owner.livemode,
        actor: owner.actor,
        data: { site_id: draft.id, site: siteRecord(draft) },
      });
      const created = { ...draft, seal: record.seal };
      await store.sites.insertSite(created, owner.actor, tx);
      tx.appendAudit(record);
      return created;
    });
    return siteView(site);
  },
});

export const siteUpdateOperation = defineOperation({
  id: "dispatchSiteUpdate",
  name: "dispatch.site_update",
  summary: "Change a site",
  description:
    "Changes the fields given of one of your sites (the others stay; a contact given replaces the whole " +
    "contact, access_notes null clears them); its time zone follows its state and " +
    "ZIP. Orders made after the change read it; orders made before keep their location. An archived site " +
    "is not changed (422 on site_id). Sealed (site.updated) with the fields changed.",
  access: "key",
  effect: "write",
  limit: "key",
  http: { method: "POST", path: "/api/dispatch/v1/sites/update", input: "body" },
  problems: [404],
  input: z.strictObject({
    site_id: siteIdSchema,
    name: siteFieldsShape.name.optional(),
    address: siteFieldsShape.address.optional(),
    city: siteFieldsShape.city.optional(),
    state: siteFieldsShape.state.optional(),
    zip: siteFieldsShape.zip.optional(),
    hours: z
      .string()
      .max(SITE_LIMITS.hoursLength)
      .optional()
      .describe(siteFieldsShape.hours.description ?? ""),
    access_notes: siteFieldsShape.access_notes,
    contact: siteFieldsShape.contact,
  }),
  output: siteSchema,
  example: { site_id: "site_0VberZOdAb12Cd34Ef56", hours: "mon-sun 06:00-22:00" },
  async handler(ctx, input) {
    const owner = ownerOf(ctx);
    const { store } = ctx.services;
    const at = ctx.services.now().toISOString();
    const { site_id, ...given } = input;
    // Only the members the caller sent change (a null access_notes or contact member clears it).
    const raw = (ctx.rawInput ?? {}) as Record<string, unknown>;
    const sent = (k: string) => Object.hasOwn(raw, k);
    const site = await store.write(async (tx) => {
      const before = await ownSite(ctx, owner, site_id, tx);
      if (before.archivedAt !== null) {
        throw validationError([
          { field: "site_id", code: "site_archived", message: "this site is archived" },
        ]);
      }
      const merged = {
        name: given.name ?? before.name,
        address: given.address ?? before.address,
        city: given.city ?? before.city,
        state: given.state ?? before.state,
        zip: given.zip ?? before.zip,
        hours: given.hours ?? before.hours,
        access_notes: sent("access_notes") ? given.access_notes : before.accessNotes,
        contact: given.contact ?? before.contact,
      };
      const checked = newSite(owner, merged, at, "");
      const after: Site = {
        ...checked,
        id: before.id,
        createdAt: before.createdAt,
      };
      const changed = (Object.keys(merged) as Array<keyof typeof merged>).filter(
        (k) => sent(k) && JSON.stringify(siteRecord(after)[k]) !== JSON.stringify(siteRecord(before)[k]),
      );
      const record = sealRecord({
        kind: "site.updated",
        at,
        accountId: owner.accountId,
        livemode: owner.livemode,
        actor: owner.actor,
        data: { site_id: before.id, changed, site: siteRecord(after) },
      });
      const updated = { ...after, seal: record.seal };
      await store.sites.updateSite(updated, owner.actor, tx);
      tx.appendAudit(record);
      return updated;
    });
    return siteView(site);
  },
});

export const siteArchiveOperation = defineOperation({
  id: "dispatchSiteArchive",
  name: "dispatch.site_archive",
  summary: "Archive a site",
  description:
    "Archives one of your sites: no new order may name it (422 on site_id), and it leaves the sites' list " +
    "(include_archived shows it). Its orders and its assets' history stay readable. Archiving an archived " +
    "site answers it as it is. Sealed (site.archived).",
  access: "key",
  effect: "destructive",
  setsState: true,
  limit: "key",
  http: { method: "POST", path: "/api/dispatch/v1/sites/archive", input: "body" },
  problems: [404],
  input: z.strictObject({ site_id: siteIdSchema }),
  output: siteSchema,
  example: { site_id: "site_0VberZOdAb12Cd34Ef56" },
  async handler(ctx, input) {
    const owner = ownerOf(ctx);
    const { store } = ctx.services;
    const at = ctx.services.now().toISOString();
    const site = await store.write(async (tx) => {
      const before = await ownSite(ctx, owner, input.site_id, tx);
      if (before.archivedAt !== null) return before;
      const record = sealRecord({
        kind: "site.archived",
        at,
        accountId: owner.accountId,
        livemode: owner.livemode,
        actor: owner.actor,
        data: { site_id: before.id },
      });
      const archived = { ...before, archivedAt: at, updatedAt: at, seal: record.seal };
      await store.sites.updateSite(archived, owner.actor, tx);
      tx.appendAudit(record);
      return archived;
    });
    return siteView(site);
  },
});
