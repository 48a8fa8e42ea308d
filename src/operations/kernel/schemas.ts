// Shared pieces of the operation schemas: the one source for validation, types, OpenAPI and tool schemas.

import { z } from "zod";
import { CONTRACTOR_ID_PATTERN } from "../../domain/contractor.js";
import { ETA_TIERS } from "../../domain/matching.js";
import { URGENCIES } from "../../domain/pricing.js";
import { TRADE_CODES } from "../../domain/trades.js";
import { isStateCode, STATE_CODES } from "../../domain/us-regions.js";

const lowerTrimmed = (v: unknown) => (typeof v === "string" ? v.trim().toLowerCase() : v);

export const tradeSchema = z
  .preprocess(
    lowerTrimmed,
    z.enum(TRADE_CODES, { error: () => `trade must be one of: ${TRADE_CODES.join(", ")}` }),
  )
  .describe(`Trade code, matched case-insensitively. One of: ${TRADE_CODES.join(", ")}.`);

export const stateSchema = z
  .string({ error: "state is required and must be a string" })
  .length(2, { error: "state must be exactly 2 characters" })
  .transform((v) => v.toUpperCase())
  .refine(isStateCode, { error: "state must be a US state, DC or territory code (e.g. CA, DC, PR)" })
  .describe(`Two-letter code of a US state, DC or territory, any case: ${STATE_CODES.join(", ")}.`);

export const zipSchema = z
  .string()
  .max(10, { error: "zip must be at most 10 characters" })
  .regex(/^\d{5}(-\d{4})?$/, { error: "zip must be a US ZIP code: 12345 or 12345-6789" })
  .describe("US ZIP code (12345 or 12345-6789): a ZIP code in use (422 zip_unknown otherwise), in `state`.");

const LISTED = "GET /api/dispatcher/v1/contractors lists them";

/** A contractor's id in the pool, as the dispatch team names it. An account's handle (`cref-...`, or the
 * older spelling `cref_...`) is refused with a message saying which form is expected. */
export const contractorIdSchema = z
  .string({ error: "contractor_id is required and must be a string" })
  .max(44, { error: "contractor_id must be at most 44 characters" })
  .regex(CONTRACTOR_ID_PATTERN, {
    error: (issue) => {
      const form = "ctr_ followed by 1-40 letters or digits (e.g. ctr_2f6a9c1d7e3b)";
      // A handle in either spelling (auth/contractor-refs.ts), or one half-way to an id.
      const handle = typeof issue.input === "string" && /^(cref[-_]|ctr-)/.test(issue.input);
      return handle
        ? `contractor_id must be a contractor id, ${form}, not a contractor_ref handle (cref-...) that callers see; ${LISTED}`
        : `contractor_id must be a contractor id: ${form}; ${LISTED}`;
    },
  })
  .describe(
    "The contractor's id in the pool: ctr_ followed by 1-40 letters or digits (contractor_id in " +
      "GET /api/dispatcher/v1/contractors). Not the handle cref-... that callers see.",
  );

const citySchema = z.string().max(255, { error: "city must be at most 255 characters" });

/** Location as quotes and estimates take it; `address` and `name` are accepted and ignored. */
export const quoteLocationSchema = z.strictObject({
  state: stateSchema,
  zip: zipSchema.optional(),
  city: citySchema.optional(),
  address: z.string().max(1000, { error: "address must be at most 1000 characters" }).optional(),
  name: z.string().max(500, { error: "name must be at most 500 characters" }).optional(),
});

export const orderLocationSchema = z.strictObject({
  state: stateSchema,
  zip: zipSchema.optional(),
  city: citySchema.optional(),
  address: z.string().max(1000, { error: "address must be at most 1000 characters" }).optional(),
  name: z
    .string()
    .max(500, { error: "name must be at most 500 characters" })
    .optional()
    .describe("Site or contact name at the location."),
});

export const urgencySchema = z
  .enum(URGENCIES, { error: `urgency must be one of: ${URGENCIES.join(", ")}` })
  .default("routine")
  .describe("emergency (x1.75), urgent (x1.35), routine (x1.0, default) or scheduled (x0.95).");

const MAX_CENTS = 2_147_483_647;

export const nteSchema = z
  .number({ error: "nte_cents must be an integer number of cents" })
  .int({ error: "nte_cents must be an integer number of cents" })
  .min(1, { error: "nte_cents must be at least 1" })
  .max(MAX_CENTS, { error: `nte_cents must be at most ${MAX_CENTS}` })
  .describe("Not-to-exceed amount in cents.");

export const etaTierSchema = z
  .enum(ETA_TIERS)
  .describe(
    "Expected arrival: within_2_hours, same_day (<= 8 h), next_day (<= 24 h), within_3_days, or scheduled (urgency scheduled).",
  );

export const currencySchema = z.literal("USD").describe("ISO 4217 currency of every amount.");

export const jobPriceSchema = z.object({
  hourly_rate_cents: z.number().int(),
  labor_hours: z.number(),
  labor_cents: z.number().int(),
  urgency_multiplier: z.number(),
  urgency_adjustment_cents: z.number().int(),
  total_cents: z.number().int(),
});

export const problemSchema = z
  .object({
    type: z.string(),
    title: z.string(),
    status: z.number().int(),
    detail: z.string(),
    code: z.string(),
    request_id: z.string(),
    instance: z.string().optional(),
    errors: z
      .array(
        z.object({
          field: z.string(),
          message: z.string(),
          code: z
            .string()
            .optional()
            .describe("A machine-readable reason, where the rule has one (e.g. window_in_past)."),
        }),
      )
      .optional(),
  })
  .loose()
  .meta({ id: "Problem", description: "RFC 9457 problem details" });

export const rfc3339 = (field: string) =>
  z.iso
    .datetime({
      offset: true,
      error: `${field} must be an RFC 3339 date-time with a UTC offset, e.g. 2026-11-03T09:00:00-05:00`,
    })
    .max(64, { error: `${field} must be at most 64 characters` })
    .describe("RFC 3339 date-time with a UTC offset (Z or +hh:mm).");

export const serviceWindowSchema = z
  .strictObject({
    start: rfc3339("service_window.start"),
    end: rfc3339("service_window.end"),
  })
  .describe(
    "When the contractor may arrive, for routine or scheduled work (refused for emergency and urgent: " +
      "they are as soon as possible). It must not start in the past, must lie within the next 90 days and " +
      "be at least the trade's typical job length (the trade index lists it). Scheduled work without a " +
      "window gets the earliest one: the next working day 08:00-12:00 in the job's time zone.",
  );

const utc = () => z.iso.datetime().describe("UTC (RFC 3339).");

/** What an answer promises about a job's time: its zone, and a window or the as-soon-as-possible clocks. */
export function serviceTimeShape<Zone extends z.ZodType>(zone: Zone) {
  return {
    time_zone: zone,
    arrival_window: z
      .object({
        start: utc(),
        end: utc(),
        source: z
          .enum(["requested", "earliest", "rescheduled", "countered"])
          .describe(
            "requested: the service_window you gave; earliest: the earliest the service books; " +
              "rescheduled: the dispatch team moved it (the order.rescheduled event says from when); " +
              "countered: the window of the contractor's counter-offer you (or your policy) accepted.",
          ),
      })
      .nullable()
      .describe(
        "For windowed work (routine with a service_window, or scheduled): when the contractor arrives.",
      ),
    respond_by: utc()
      .nullable()
      .describe(
        "For as-soon-as-possible work: a contractor committed by then (the urgency's service level).",
      ),
    arrive_by: utc()
      .nullable()
      .describe(
        "For as-soon-as-possible work: the contractor on site by then (the urgency's service level).",
      ),
  };
}

export const timeZoneSchema = z
  .string()
  .describe(
    "The job's local time zone (IANA name), from its ZIP where its state spans zones, else its state.",
  );

/**
 * An object with exactly these keys, each a `value`: what `z.record(z.enum(keys), value)` checks, but
 * published with one property per key (a record's JSON Schema lists the keys as required without
 * defining them, which OpenAPI tools read as properties missing).
 */
export function everyKeyObject<const K extends string, V extends z.ZodType>(keys: readonly K[], value: V) {
  return z.strictObject(Object.fromEntries(keys.map((key) => [key, value])) as Record<K, V>);
}

/** A true/false query parameter (a query string carries text; agents send a boolean). */
export const booleanQuery = z
  .union([z.boolean(), z.enum(["true", "false"], { error: "must be true or false" })])
  .transform((v) => v === true || v === "true");
