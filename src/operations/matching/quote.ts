// dispatchQuote: prices a job and matches a contractor from the caller's pool without committing one.

import { z } from "zod";
import { sealRecord } from "../../audit/record.js";
import { CURRENCY } from "../../domain/pricing.js";
import { newSortableId } from "../../ids.js";
import { defineOperation, principalOf } from "../kernel/operation.js";
import { locationOrSite, orderSiteShape, resolveNamedSite } from "../kernel/order-site.js";
import {
  currencySchema,
  etaTierSchema,
  jobPriceSchema,
  nteSchema,
  quoteLocationSchema,
  serviceTimeShape,
  serviceWindowSchema,
  timeZoneSchema,
  tradeSchema,
  urgencySchema,
} from "../kernel/schemas.js";
import { timedMatch } from "./availability.js";
import { matchDecision, sealSchema } from "./decision-records.js";
import { accountJob, resolveJob, resolveJobTime, serviceTimeView } from "./job.js";

/** How long a quote stays valid, by urgency (minutes): urgent work is re-priced sooner. */
const QUOTE_VALIDITY_MINUTES = { emergency: 15, urgent: 60, routine: 240, scheduled: 1440 } as const;

const quoteInput = z
  .strictObject({
    trade: tradeSchema,
    location: quoteLocationSchema
      .optional()
      .describe("Where the work is; may be left out when site_id names one of your sites."),
    ...orderSiteShape,
    urgency: urgencySchema,
    nte_cents: nteSchema.optional(),
    description: z.string().max(2000, { error: "description must be at most 2000 characters" }).optional(),
    service_window: serviceWindowSchema.optional(),
  })
  .superRefine(locationOrSite, { when: () => true })
  .meta({ id: "QuoteRequest" });

export const quoteOutput = z
  .object({
    quote_id: z.string().describe("Quote identifier, qte_..."),
    seal: sealSchema,
    livemode: z.boolean(),
    trade: z.string(),
    urgency: z.string(),
    state: z.string(),
    contractor_ref: z
      .string()
      .nullable()
      .describe(
        "Your account's handle of the matched contractor (cref-...; stable for your account, different for every other); null when none is available.",
      ),
    availability: z
      .enum(["available", "no_contractor_available"])
      .describe("Whether an eligible contractor was found; without one the price is the model's."),
    estimated_cost_cents: z.number().int().describe("Estimated cost of the job in cents."),
    currency: currencySchema,
    eta_tier: etaTierSchema.nullable(),
    eta_minutes: z.number().int().nullable().describe("Estimated minutes until the contractor arrives."),
    within_nte: z
      .boolean()
      .nullable()
      .describe("Whether the estimate is within nte_cents (null without one)."),
    valid_for_minutes: z.number().int(),
    ...serviceTimeShape(timeZoneSchema),
    expires_at: z.iso.datetime(),
    created_at: z.iso.datetime(),
    price_breakdown: jobPriceSchema.extend({
      pricing_basis: z
        .enum(["contractor_rate", "model_rate"])
        .describe("contractor_rate: the matched contractor's own rate; model_rate: our regional model."),
      model_hourly_rate_cents: z.number().int().describe("Our regional model rate for comparison."),
      model_total_cents: z.number().int(),
    }),
  })
  .meta({ id: "QuoteResult" });

export const quoteOperation = defineOperation({
  id: "dispatchQuote",
  name: "dispatch.quote",
  summary: "Quote a job",
  description:
    "Prices a field-service job and matches the best available contractor from the active pool without " +
    "committing one. Returns the masked contractor handle, the estimated cost in cents, an ETA tier and " +
    "how long the quote stays valid, with the job's time zone and the time promised: the arrival window " +
    "for windowed work, respond_by and arrive_by for as-soon-as-possible work. site_id names one of your " +
    "sites instead of a location (as dispatch.order takes it).",
  access: "key",
  onServerKey: true,
  effect: "write",
  limit: "key",
  http: { method: "POST", path: "/api/dispatch/v1/quote", input: "body" },
  input: quoteInput,
  output: quoteOutput,
  example: {
    trade: "plumbing",
    location: { state: "TX", city: "Austin", zip: "78701" },
    urgency: "urgent",
    nte_cents: 45000,
  },
  async handler(ctx, given) {
    const principal = principalOf(ctx);
    const named = await resolveNamedSite(ctx.services.store, principal, given);
    const input = { ...given, location: named.location };
    const now = ctx.services.now();
    const requested = resolveJobTime(input, now);
    // Scheduled work without a window is quoted in the earliest window the pool can serve.
    const { job, promise, result } = timedMatch(
      ctx.services,
      await accountJob(ctx.services, resolveJob(input, now), principal.accountId, principal.livemode),
      requested,
      principal.livemode,
      now,
    );
    const chosen = result.chosen;
    const price = chosen ? chosen.price : job.modelPrice;
    const validFor = QUOTE_VALIDITY_MINUTES[job.urgency];
    const expires = new Date(now.getTime() + validFor * 60_000);
    const breakdown = {
      ...price,
      pricing_basis: chosen ? ("contractor_rate" as const) : ("model_rate" as const),
      model_hourly_rate_cents: job.modelPrice.hourly_rate_cents,
      model_total_cents: job.modelPrice.total_cents,
    };
    const serviceTime = serviceTimeView(promise);
    const id = newSortableId("qte");
    const nowIso = now.toISOString();
    const record = sealRecord({
      kind: "quote.issued",
      at: nowIso,
      accountId: principal.accountId,
      livemode: principal.livemode,
      actor: `key:${principal.keyId}`,
      refOf: ctx.services.refs.forAccount(principal.accountId),
      data: {
        quote_id: id,
        input,
        model_price: job.modelPrice,
        price_breakdown: breakdown,
        chosen: chosen?.contractor.id ?? null,
        service_time: serviceTime,
        ...matchDecision(result),
      },
    });
    await ctx.services.store.write(async (tx) => {
      tx.appendAudit(record);
      await tx.insertQuote({
        id,
        account_id: principal.accountId,
        livemode: principal.livemode ? 1 : 0,
        trade: job.trade,
        state: job.state,
        zip: input.location.zip ?? null,
        city: input.location.city ?? null,
        urgency: job.urgency,
        nte_cents: job.nteCents,
        contractor_id: chosen?.contractor.id ?? null,
        estimated_cost_cents: price.total_cents,
        eta_tier: chosen?.etaTier ?? null,
        breakdown: JSON.stringify(breakdown),
        created_at: nowIso,
        expires_at: expires.toISOString(),
      });
    });
    return {
      quote_id: id,
      seal: record.seal,
      livemode: principal.livemode,
      trade: job.trade,
      urgency: job.urgency,
      state: job.state,
      contractor_ref: chosen ? ctx.services.refs.of(principal.accountId, chosen.contractor.id) : null,
      availability: chosen ? ("available" as const) : ("no_contractor_available" as const),
      estimated_cost_cents: price.total_cents,
      currency: CURRENCY,
      eta_tier: chosen?.etaTier ?? null,
      eta_minutes: chosen?.etaMinutes ?? null,
      within_nte: job.nteCents === null ? null : price.total_cents <= job.nteCents,
      valid_for_minutes: validFor,
      ...serviceTime,
      expires_at: expires.toISOString(),
      created_at: now.toISOString(),
      price_breakdown: breakdown,
    };
  },
});
