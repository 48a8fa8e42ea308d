// dispatchIndex: the public catalog of the 8 trade verticals with their baseline model rates and the
// methodology behind them.

import { z } from "zod";
import {
  baselineHourlyRateCents,
  ESTIMATE_HOURS_RANGE,
  LOADED_COST_MULTIPLIER,
  priceJob,
  URGENCY_MULTIPLIERS,
} from "../../domain/pricing.js";
import { TRADE_CODES, TRADES } from "../../domain/trades.js";
import { defineOperation } from "../kernel/operation.js";
import { currencySchema } from "../kernel/schemas.js";

const tradeEntry = z.object({
  code: z.string().describe("The value accepted as `trade`."),
  name: z.string(),
  occupation: z.string().describe("The BLS occupation whose wage informs the rate."),
  soc_code: z.string(),
  baseline_hourly_rate_cents: z.number().int().describe("National model rate, routine urgency, cents/hour."),
  typical_job_hours: z.number(),
  baseline_job_cost_cents: z.number().int().describe("Model cost of a typical routine job, nationally."),
  urgency_multiplier: z.literal(1),
  wage_reference: z.object({
    median_hourly_usd: z.number(),
    p25_hourly_usd: z.number(),
    p75_hourly_usd: z.number(),
    series: z.string(),
  }),
});

export const tradeIndexOutput = z
  .object({
    currency: currencySchema,
    rate_unit: z.literal("cents_per_hour"),
    urgency: z.literal("routine"),
    trades: z.array(tradeEntry).length(8),
    urgency_multipliers: z.record(z.string(), z.number()),
    methodology: z.object({
      summary: z.string(),
      loaded_cost_multiplier: z.number(),
      regional_factor: z.string(),
      estimate_range: z.string(),
      quote: z.string(),
      disclaimer: z.string(),
      sources: z.array(
        z.object({ name: z.string(), period: z.string(), url: z.string(), used_for: z.string() }),
      ),
    }),
  })
  .meta({ id: "TradeIndex" });

const OEWS_SERIES = "BLS OEWS May 2024, national cross-industry estimates";

function buildIndex(): z.infer<typeof tradeIndexOutput> {
  return {
    currency: "USD",
    rate_unit: "cents_per_hour",
    urgency: "routine",
    trades: TRADE_CODES.map((code) => {
      const t = TRADES[code];
      const rate = baselineHourlyRateCents(code);
      return {
        code,
        name: t.name,
        occupation: t.occupation,
        soc_code: t.socCode,
        baseline_hourly_rate_cents: rate,
        typical_job_hours: t.typicalJobHours,
        baseline_job_cost_cents: priceJob(rate, t.typicalJobHours, "routine").total_cents,
        urgency_multiplier: 1 as const,
        wage_reference: {
          median_hourly_usd: t.wage.median,
          p25_hourly_usd: t.wage.p25,
          p75_hourly_usd: t.wage.p75,
          series: OEWS_SERIES,
        },
      };
    }),
    urgency_multipliers: { ...URGENCY_MULTIPLIERS },
    methodology: {
      summary:
        "Model hourly rate = OEWS median hourly wage of the trade's occupation x loaded-cost multiplier x " +
        "regional factor of the job's state; job cost = rate x typical job hours x urgency multiplier. " +
        "The baseline here is national (regional factor 1.0) at routine urgency (multiplier 1.0).",
      loaded_cost_multiplier: LOADED_COST_MULTIPLIER,
      regional_factor:
        "BEA Regional Price Parities (all items, 2023; factor = RPP/100) for the 50 states and DC. Where BEA " +
        "publishes none (PR, GU, VI) the BLS OEWS May 2023 all-occupations state/national mean wage ratio; " +
        "AS and MP, covered by neither, use Guam's ratio.",
      estimate_range: `Low: 25th-percentile wage for ${ESTIMATE_HOURS_RANGE.low}x the typical hours; high: 75th-percentile wage for ${ESTIMATE_HOURS_RANGE.high}x.`,
      quote:
        "A quote prices the job at the matched contractor's own hourly rate for the typical job length, with " +
        "the same urgency multiplier; the model figure is returned alongside for comparison.",
      disclaimer:
        "These are the service's own model rates, informed by a public wage survey (BLS OEWS). They are not " +
        "the survey's figures verbatim, and not a binding price.",
      sources: [
        {
          name: "BLS Occupational Employment and Wage Statistics (OEWS)",
          period: "May 2024",
          url: "https://www.bls.gov/oes/",
          used_for: "hourly wage percentiles per occupation",
        },
        {
          name: "BEA Regional Price Parities by state, all items",
          period: "2023",
          url: "https://www.bea.gov/data/prices-inflation/regional-price-parities-state-and-metro-area",
          used_for: "regional factor (50 states, DC)",
        },
        {
          name: "BLS OEWS state cross-industry estimates",
          period: "May 2023",
          url: "https://www.bls.gov/oes/",
          used_for: "regional factor fallback (PR, GU, VI; proxy for AS, MP)",
        },
        {
          name: "BLS Employer Costs for Employee Compensation (ECEC) and trade sources",
          period: "December 2024",
          url: "https://www.bls.gov/news.release/ecec.nr0.htm",
          used_for: "evidence for the loaded-cost multiplier",
        },
      ],
    },
  };
}

function deepFreeze<T>(value: T): T {
  if (typeof value === "object" && value !== null) {
    for (const v of Object.values(value)) deepFreeze(v);
    Object.freeze(value);
  }
  return value;
}

/** Built once; frozen so the transport can serialise it once too. */
const INDEX = deepFreeze(buildIndex());

export const tradeIndexOperation = defineOperation({
  id: "dispatchIndex",
  name: "dispatch.index",
  summary: "Trade index",
  description:
    "Lists the 8 trade verticals with their codes (the values accepted as `trade`) and baseline model rates " +
    "for routine urgency, with the methodology and sources. Takes no arguments.",
  access: "public",
  effect: "read",
  limit: "none",
  http: { method: "GET", path: "/api/dispatch/index", input: "query" },
  input: z.object({}),
  output: tradeIndexOutput,
  example: {},
  async handler() {
    return INDEX;
  },
});
