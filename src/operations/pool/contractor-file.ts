// Parses a contractor pool file (CSV or JSON) into validated contractors of one pool: the live pool, or
// the sandbox pool (`contractors import --mode live|test`). Every row is checked and all problems are
// reported together; nothing is imported from a file with a bad row.
//
// Columns (CSV header names, or JSON object keys):
//   external_ref        required  your own unique id for the contractor (re-importing updates by it)
//   name                required  business name (never shown to callers)
//   email, phone        optional  contact (never shown to callers)
//   trades              required  trade codes, separated by ";" in CSV or a JSON array
//   states              required  2-letter state codes, ";"-separated or a JSON array
//   zip                 optional  base ZIP code; gives the coordinates used for distance
//   lat, lon            optional  base coordinates (override zip)
//   service_radius_miles optional blank = anywhere in its states
//   hourly_rate_cents   required  its routine hourly rate in cents
//   emergency_capable   optional  true/false (default false)
//   max_active_jobs     optional  default 5
//   rating              optional  0-5 quality record (default 4.0)
//   response_minutes    optional  typical minutes to set off after accepting (default 240)
//   active              optional  true/false (default true)
//   insurance_verified_until, license_verified_until  optional  YYYY-MM-DD: verified until then
//   hours               optional  working hours per weekday, local time of its base ZIP's zone, e.g.
//                                 "mon-fri 08:00-17:00; sat 09:00-13:00" (domain/time/calendar.ts);
//                                 blank = available any time

import { parse as parseCsv } from "csv-parse/sync";
import { z } from "zod";
import { lookupZip } from "../../domain/geo.js";
import { formatHours, parseHours } from "../../domain/time/calendar.js";
import { TRADE_CODES, type TradeCode } from "../../domain/trades.js";
import { isStateCode, type StateCode } from "../../domain/us-regions.js";
import { newId } from "../../ids.js";
import type { NewContractor } from "../../storage/store.js";

const list = z.union([
  z.array(z.string()),
  z.string().transform((s) =>
    s
      .split(/[;|]/)
      .map((x) => x.trim())
      .filter(Boolean),
  ),
]);
const blankToUndefined = (v: unknown) => (v === "" || v === null ? undefined : v);
const num = z.preprocess(blankToUndefined, z.coerce.number().optional());
const flag = z.preprocess(
  blankToUndefined,
  z
    .union([z.boolean(), z.enum(["true", "false", "yes", "no", "1", "0"])])
    .transform((v) => v === true || v === "true" || v === "yes" || v === "1")
    .optional(),
);

/** A verification's end date, YYYY-MM-DD; blank or absent: not verified. */
const verifiedUntil = z.preprocess(
  blankToUndefined,
  z.iso.date({ error: "must be a date, YYYY-MM-DD" }).optional(),
);

const rowSchema = z.object({
  external_ref: z.coerce.string().min(1).max(255),
  name: z.string().min(1).max(500),
  email: z.preprocess(blankToUndefined, z.email().optional()),
  phone: z.preprocess(blankToUndefined, z.string().max(64).optional()),
  trades: list.pipe(
    z
      .array(
        z
          .string()
          .transform((s) => s.toLowerCase())
          .pipe(z.enum(TRADE_CODES)),
      )
      .min(1, "at least one trade"),
  ),
  states: list.pipe(
    z
      .array(
        z
          .string()
          .transform((s) => s.toUpperCase())
          .refine(isStateCode, "not a US state, DC or territory code"),
      )
      .min(1, "at least one state"),
  ),
  zip: z.preprocess(
    blankToUndefined,
    z.coerce
      .string()
      .regex(/^\d{5}(-\d{4})?$/)
      .optional(),
  ),
  lat: num.pipe(z.number().min(-90).max(90).optional()),
  lon: num.pipe(z.number().min(-180).max(180).optional()),
  service_radius_miles: num.pipe(z.number().positive().max(5000).optional()),
  hourly_rate_cents: z.coerce.number().int().positive().max(10_000_000),
  emergency_capable: flag,
  max_active_jobs: num.pipe(z.number().int().min(1).max(10_000).optional()),
  rating: num.pipe(z.number().min(0).max(5).optional()),
  response_minutes: num.pipe(z.number().int().min(0).max(100_000).optional()),
  active: flag,
  insurance_verified_until: verifiedUntil,
  license_verified_until: verifiedUntil,
  hours: z.preprocess(
    blankToUndefined,
    z
      .string()
      .max(1000)
      .transform((text, ctx) => {
        const parsed = parseHours(text);
        if ("error" in parsed) {
          ctx.addIssue({ code: "custom", message: parsed.error });
          return z.NEVER;
        }
        return formatHours(parsed.hours);
      })
      .optional(),
  ),
});

export interface ImportParseResult {
  contractors: NewContractor[];
  errors: string[];
}

export function parseContractorFile(
  content: string,
  format: "csv" | "json",
  pool: "live" | "sandbox",
): ImportParseResult {
  let rows: unknown[];
  try {
    rows =
      format === "json"
        ? (JSON.parse(content) as unknown[])
        : (parseCsv(content, { columns: true, skip_empty_lines: true, trim: true, bom: true }) as unknown[]);
  } catch (error) {
    return { contractors: [], errors: [`cannot parse the file as ${format}: ${(error as Error).message}`] };
  }
  if (!Array.isArray(rows))
    return { contractors: [], errors: ["a JSON pool file must hold an array of contractors"] };
  const contractors: NewContractor[] = [];
  const errors: string[] = [];
  const seen = new Set<string>();
  rows.forEach((raw, i) => {
    const where = format === "csv" ? `line ${i + 2}` : `item ${i}`;
    const parsed = rowSchema.safeParse(raw);
    if (!parsed.success) {
      for (const issue of parsed.error.issues)
        errors.push(`${where}: ${issue.path.join(".")}: ${issue.message}`);
      return;
    }
    const r = parsed.data;
    if (seen.has(r.external_ref)) {
      errors.push(`${where}: external_ref ${r.external_ref} appears twice`);
      return;
    }
    seen.add(r.external_ref);
    const zip = r.zip ? lookupZip(r.zip) : undefined;
    if (r.zip && !zip && (r.lat === undefined || r.lon === undefined)) {
      errors.push(`${where}: zip ${r.zip} is unknown; give lat and lon instead`);
      return;
    }
    contractors.push({
      id: newId("ctr", 12),
      pool,
      externalRef: r.external_ref,
      name: r.name,
      email: r.email ?? null,
      phone: r.phone ?? null,
      homeZip: r.zip ?? null,
      trades: r.trades as TradeCode[],
      states: r.states as StateCode[],
      lat: r.lat ?? zip?.lat ?? null,
      lon: r.lon ?? zip?.lon ?? null,
      serviceRadiusMiles: r.service_radius_miles ?? null,
      hourlyRateCents: r.hourly_rate_cents,
      emergencyCapable: r.emergency_capable ?? false,
      maxActiveJobs: r.max_active_jobs ?? 5,
      rating: r.rating ?? 4,
      responseMinutes: r.response_minutes ?? 240,
      active: r.active ?? true,
      excluded: false,
      insuranceVerifiedUntil: r.insurance_verified_until ?? null,
      licenseVerifiedUntil: r.license_verified_until ?? null,
      hours: r.hours || null,
    });
  });
  return { contractors, errors };
}
