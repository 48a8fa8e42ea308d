// Sites and assets (issue 34): an account's locations and the equipment at them. Pure: a site's checks
// (its ZIP in its state, its opening hours in the working hours' format, its time zone derived, never
// given), the controlled list of asset types per trade, and whether an asset's warranty is in force on a
// day. Maintenance plans name a site or an asset by id and read the site's zone, point and hours.

import type { FieldError } from "../../errors.js";
import { lookupZip, type Point } from "../geo.js";
import { formatHours, parseHours, type WeeklyHours } from "../time/calendar.js";
import { timeZoneOf } from "../time/zones.js";
import type { TradeCode } from "../trades.js";
import { isStateCode, type StateCode } from "../us-regions.js";

export const SITE_LIMITS = {
  nameLength: 200,
  addressLength: 500,
  cityLength: 100,
  hoursLength: 500,
  accessNotesLength: 2000,
  contactNameLength: 200,
  contactPhoneLength: 40,
  contactEmailLength: 254,
  /** Sites an account keeps in force per mode. */
  sitesPerAccount: 5000,
  /** Lines of one import (beside its header). */
  importLines: 1000,
  /** The bytes of one import's CSV text. */
  importBytes: 512 * 1024,
} as const;

export const ASSET_LIMITS = {
  makeLength: 100,
  modelLength: 100,
  serialLength: 100,
  tagLength: 40,
  tags: 20,
  /** Assets in force at one site. */
  assetsPerSite: 1000,
  /** Assets one order names. */
  assetsPerOrder: 20,
} as const;

/** The equipment an order of each trade is for, a short controlled list (then `other`). */
export const ASSET_TYPES = {
  hvac: ["rtu", "split_system", "furnace", "boiler", "chiller", "heat_pump", "thermostat", "exhaust_fan"],
  plumbing: [
    "water_heater",
    "backflow_preventer",
    "sewer_line",
    "grease_trap",
    "sump_pump",
    "fixture",
    "water_softener",
  ],
  electrical: ["panel", "generator", "lighting", "transfer_switch", "ev_charger", "ups"],
  appliance_repair: ["refrigerator", "freezer", "ice_machine", "dishwasher", "oven", "washer", "dryer"],
  locksmith: ["door_lock", "access_control", "safe", "key_system"],
  roofing: ["roof", "gutter", "skylight", "roof_drain"],
  pest_control: ["bait_station", "trap", "fly_light"],
  handyman: ["door", "window", "fixture", "signage"],
} as const satisfies Record<TradeCode, readonly string[]>;

/** Every asset type, each trade's and `other`, as one sorted list. */
export const ASSET_TYPE_LIST: readonly string[] = [
  ...new Set([...Object.values(ASSET_TYPES).flat(), "other"]),
].sort();

interface SiteContact {
  readonly name: string | null;
  readonly phone: string | null;
  readonly email: string | null;
}

/** An account's site in one mode. `hours` in the working hours' text (blank: any time). */
export interface Site {
  readonly id: string;
  readonly accountId: string;
  readonly livemode: boolean;
  readonly name: string;
  readonly address: string;
  readonly city: string;
  readonly state: StateCode;
  readonly zip: string;
  /** Derived from the state and ZIP (time/zones.ts), never given. */
  readonly timeZone: string;
  readonly hours: string;
  readonly accessNotes: string | null;
  readonly contact: SiteContact;
  readonly createdAt: string;
  readonly updatedAt: string;
  readonly archivedAt: string | null;
  /** The audit record of its latest change. */
  readonly seal: string;
}

export interface Asset {
  readonly id: string;
  readonly siteId: string;
  readonly accountId: string;
  readonly livemode: boolean;
  readonly trade: TradeCode;
  readonly type: string;
  readonly make: string | null;
  readonly model: string | null;
  readonly serial: string | null;
  /** YYYY-MM-DD. */
  readonly installedOn: string | null;
  /** YYYY-MM-DD: the last day the warranty covers. */
  readonly warrantyEndsOn: string | null;
  readonly tags: readonly string[];
  readonly createdAt: string;
  readonly updatedAt: string;
  readonly archivedAt: string | null;
  readonly seal: string;
}

/** What a caller states of a site; the zone is derived. */
export interface SiteFields {
  name: string;
  address: string;
  city: string;
  state: string;
  zip: string;
  hours: string;
  accessNotes: string | null;
  contact: SiteContact;
}

/** A site's fields checked: its state a code, its ZIP known and in that state, its hours readable (then
 * written canonically), and its zone derived; else every field at fault. */
export function checkSite(
  fields: SiteFields,
): { ok: true; state: StateCode; hours: string; timeZone: string } | { ok: false; errors: FieldError[] } {
  const errors: FieldError[] = [];
  const state = fields.state.toUpperCase();
  if (!isStateCode(state)) {
    errors.push({ field: "state", message: "must be a US state, DC or territory code (e.g. CA, DC, PR)" });
  }
  const zip = /^\d{5}(-\d{4})?$/.test(fields.zip) ? lookupZip(fields.zip) : undefined;
  if (!zip) {
    errors.push({ field: "zip", code: "zip_unknown", message: `${fields.zip} is not a known US ZIP code` });
  } else if (isStateCode(state) && zip.state !== state) {
    errors.push({
      field: "zip",
      code: "zip_not_in_state",
      message: `ZIP ${fields.zip} is in ${zip.state}, not ${state}`,
    });
  }
  const parsed = parseHours(fields.hours);
  if ("error" in parsed) errors.push({ field: "hours", message: parsed.error });
  if (errors.length > 0 || !isStateCode(state) || "error" in parsed) return { ok: false, errors };
  return {
    ok: true,
    state,
    hours: formatHours(parsed.hours),
    timeZone: timeZoneOf(state, fields.zip),
  };
}

/** A site's weekly opening hours (null: any time), for a plan's window to be fitted in. */
export function openingHoursOf(site: Pick<Site, "hours">): WeeklyHours | null {
  const parsed = parseHours(site.hours);
  return "error" in parsed ? null : parsed.hours;
}

/** A site's point: its ZIP's centroid. */
export function sitePoint(site: Pick<Site, "zip">): Point | null {
  const zip = lookupZip(site.zip);
  return zip ? { lat: zip.lat, lon: zip.lon } : null;
}

/** Whether `type` is one of `trade`'s asset types, or `other`. */
export function isAssetType(trade: TradeCode, type: string): boolean {
  return type === "other" || (ASSET_TYPES[trade] as readonly string[]).includes(type);
}

/** Whether the asset's warranty covers `today` (YYYY-MM-DD): it has an end, not before today. */
export function warrantyInForce(asset: Pick<Asset, "warrantyEndsOn">, today: string): boolean {
  return asset.warrantyEndsOn !== null && asset.warrantyEndsOn >= today;
}

/** A serial as it is compared for duplicates at one site: trimmed, upper case, without spaces or dashes. */
export function serialKey(serial: string): string {
  return serial.toUpperCase().replace(/[\s-]+/g, "");
}

/** An asset's dates and type checked: the type of its trade's list, installed no later than its warranty
 * ends; else every field at fault. */
export function checkAsset(a: {
  trade: TradeCode;
  type: string;
  installedOn: string | null;
  warrantyEndsOn: string | null;
}): FieldError[] {
  const errors: FieldError[] = [];
  if (!isAssetType(a.trade, a.type)) {
    errors.push({
      field: "type",
      message: `for ${a.trade}, one of: ${[...ASSET_TYPES[a.trade], "other"].join(", ")}`,
    });
  }
  if (a.installedOn !== null && a.warrantyEndsOn !== null && a.warrantyEndsOn < a.installedOn) {
    errors.push({ field: "warranty_ends_on", message: "must not be before installed_on" });
  }
  return errors;
}
