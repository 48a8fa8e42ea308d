import fc from "fast-check";
import { describe, expect, it } from "vitest";
import {
  baselineHourlyRateCents,
  estimateRange,
  LOADED_COST_MULTIPLIER,
  modelJobPrice,
  priceJob,
  regionalHourlyRateCents,
  URGENCIES,
  URGENCY_MULTIPLIERS,
} from "../../src/domain/pricing.js";
import { TRADE_CODES, TRADES } from "../../src/domain/trades.js";
import { REGIONS, STATE_CODES } from "../../src/domain/us-regions.js";

describe("rate model", () => {
  it("baseline rate is the OEWS median wage times the loaded-cost multiplier, in cents", () => {
    expect(baselineHourlyRateCents("plumbing")).toBe(Math.round(30.27 * LOADED_COST_MULTIPLIER * 100));
    expect(baselineHourlyRateCents("pest_control")).toBe(Math.round(21.51 * LOADED_COST_MULTIPLIER * 100));
  });

  it("applies the state's regional factor", () => {
    const ca = regionalHourlyRateCents("electrical", "CA");
    const ms = regionalHourlyRateCents("electrical", "MS");
    expect(ca).toBe(Math.round(29.98 * 3 * REGIONS.CA.regionalFactor * 100));
    expect(ca).toBeGreaterThan(ms);
  });

  it("has a regional factor for every accepted state code, including territories", () => {
    expect(STATE_CODES).toHaveLength(56);
    for (const code of STATE_CODES) expect(REGIONS[code].regionalFactor).toBeGreaterThan(0.3);
    expect(REGIONS.PR.factorSource).toBe("oews_all_occupations_may2023");
    expect(REGIONS.AS.factorSource).toBe("proxy_guam_oews_all_occupations_may2023");
  });

  it("routine urgency is the baseline and emergency costs more than scheduled", () => {
    expect(URGENCY_MULTIPLIERS.routine).toBe(1);
    const routine = modelJobPrice("hvac", "TX", "routine");
    expect(routine.urgency_adjustment_cents).toBe(0);
    expect(modelJobPrice("hvac", "TX", "emergency").total_cents).toBeGreaterThan(routine.total_cents);
    expect(modelJobPrice("hvac", "TX", "scheduled").total_cents).toBeLessThan(routine.total_cents);
  });

  it("prices labor then the urgency adjustment, and the parts add up", () => {
    const p = priceJob(10_000, 2.5, "urgent");
    expect(p.labor_cents).toBe(25_000);
    expect(p.urgency_adjustment_cents).toBe(Math.round(25_000 * 0.35));
    expect(p.total_cents).toBe(p.labor_cents + p.urgency_adjustment_cents);
  });

  it("estimate range is ordered low <= typical <= high", () => {
    for (const trade of TRADE_CODES) {
      const r = estimateRange(trade, "NY", "routine");
      expect(r.low_cents).toBeLessThanOrEqual(r.typical_cents);
      expect(r.typical_cents).toBeLessThanOrEqual(r.high_cents);
      expect(r.typical.labor_hours).toBe(TRADES[trade].typicalJobHours);
    }
  });

  it("a price is never negative and always whole cents (property)", () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 0, max: 10_000_000 }),
        fc.double({ min: 0, max: 100, noNaN: true }),
        fc.constantFrom(...URGENCIES),
        (rate, hours, urgency) => {
          const p = priceJob(rate, hours, urgency);
          return (
            p.total_cents >= 0 &&
            Number.isInteger(p.total_cents) &&
            Number.isInteger(p.labor_cents) &&
            Number.isInteger(p.urgency_adjustment_cents)
          );
        },
      ),
    );
  });

  it("model prices are positive integers for every trade, state and urgency (property)", () => {
    fc.assert(
      fc.property(
        fc.constantFrom(...TRADE_CODES),
        fc.constantFrom(...STATE_CODES),
        fc.constantFrom(...URGENCIES),
        (trade, state, urgency) => {
          const r = estimateRange(trade, state, urgency);
          return r.low_cents > 0 && Number.isInteger(r.high_cents) && r.low_cents <= r.high_cents;
        },
      ),
    );
  });
});
