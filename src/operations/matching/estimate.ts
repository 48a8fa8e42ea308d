// dispatchEstimate: a public price range for a trade, location and urgency from the rate model, without
// matching a contractor.

import { z } from "zod";
import { CURRENCY, estimateRange } from "../../domain/pricing.js";
import { servicePromise } from "../../domain/time/service-window.js";
import { REGIONS } from "../../domain/us-regions.js";
import { defineOperation } from "../kernel/operation.js";
import {
  currencySchema,
  jobPriceSchema,
  quoteLocationSchema,
  serviceTimeShape,
  serviceWindowSchema,
  timeZoneSchema,
  tradeSchema,
  urgencySchema,
} from "../kernel/schemas.js";
import { resolveJob, resolveJobTime, serviceTimeView } from "./job.js";

const estimateInput = z
  .strictObject({
    trade: tradeSchema,
    location: quoteLocationSchema,
    urgency: urgencySchema,
    service_window: serviceWindowSchema.optional(),
  })
  .meta({ id: "EstimateRequest" });

export const estimateOutput = z
  .object({
    trade: z.string(),
    state: z.string(),
    urgency: z.string(),
    currency: currencySchema,
    low_cents: z.number().int().describe("Shorter job at the 25th-percentile wage."),
    typical_cents: z.number().int().describe("Typical job length at the median wage."),
    high_cents: z.number().int().describe("Longer job at the 75th-percentile wage."),
    regional_factor: z.number(),
    regional_factor_source: z.string(),
    typical: jobPriceSchema.describe("How the typical figure is built."),
    ...serviceTimeShape(timeZoneSchema),
    estimated: z.literal(true).describe("Always true: a model estimate, not a quote."),
    methodology_url: z.string().describe("Where the rate model is documented (the trade index)."),
  })
  .meta({ id: "Estimate" });

export const estimateOperation = defineOperation({
  id: "dispatchEstimate",
  name: "dispatch.estimate",
  summary: "Estimate a price range",
  description:
    "Returns a low / typical / high price range in cents for a trade, US location and urgency from the " +
    "service's rate model. No key needed and no contractor is matched; use dispatch.quote for a firm quote.",
  access: "public",
  effect: "read",
  limit: "client_ip",
  http: { method: "POST", path: "/api/dispatch/v1/estimate", input: "body" },
  input: estimateInput,
  output: estimateOutput,
  example: { trade: "hvac", location: { state: "CA", zip: "94103" }, urgency: "routine" },
  async handler(ctx, input) {
    const now = ctx.services.now();
    const job = resolveJob(input, now);
    const time = resolveJobTime(input, now);
    const range = estimateRange(job.trade, job.state, job.urgency);
    const region = REGIONS[job.state];
    return {
      trade: job.trade,
      state: job.state,
      urgency: job.urgency,
      currency: CURRENCY,
      low_cents: range.low_cents,
      typical_cents: range.typical_cents,
      high_cents: range.high_cents,
      regional_factor: region.regionalFactor,
      regional_factor_source: region.factorSource,
      typical: range.typical,
      ...serviceTimeView(servicePromise({ urgency: job.urgency, trade: job.trade, ...time }, now)),
      estimated: true as const,
      methodology_url: "/api/dispatch/index",
    };
  },
});
