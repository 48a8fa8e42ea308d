// The evals' service-level rules on plain rows: Field Nation's on-time window at its edges, and when an
// order's service level has an outcome.

import { describe, expect, it } from "vitest";
import {
  arrivedOnTime,
  attainedServiceLevel,
  type SlaFigureRow,
} from "../../../src/domain/orders/sla-figures.js";

const M = 60_000;
const START = Date.parse("2026-11-24T14:00:00.000Z");
const iso = (ms: number) => new Date(ms).toISOString();

const windowed = (onSite: number | null, overrides: Partial<SlaFigureRow> = {}): SlaFigureRow => ({
  urgency: "scheduled",
  status: onSite === null ? "accepted" : "completed",
  received_at: iso(START - 24 * 60 * M),
  respond_by: null,
  arrive_by: null,
  window_start: iso(START),
  window_end: iso(START + 240 * M),
  first_accepted_at: iso(START - 23 * 60 * M),
  eta_at: null,
  on_site_at: onSite === null ? null : iso(onSite),
  sla_respond_at_risk_at: null,
  sla_respond_breached_at: null,
  sla_arrive_at_risk_at: null,
  sla_arrive_breached_at: null,
  ...overrides,
});

describe("on-time arrival (Field Nation's rule)", () => {
  it("counts on site from 30 minutes before to 15 minutes after the window's start", () => {
    expect(arrivedOnTime(windowed(START - 30 * M - 1))).toBe(false);
    expect(arrivedOnTime(windowed(START - 30 * M))).toBe(true);
    expect(arrivedOnTime(windowed(START + 15 * M))).toBe(true);
    expect(arrivedOnTime(windowed(START + 15 * M + 1))).toBe(false);
    expect(arrivedOnTime(windowed(null))).toBeNull();
  });

  it("counts as-soon-as-possible work on site by arrive_by", () => {
    const asap = (onSite: number) =>
      windowed(onSite, {
        urgency: "emergency",
        window_start: null,
        window_end: null,
        respond_by: iso(START - 105 * M),
        arrive_by: iso(START),
      });
    expect(arrivedOnTime(asap(START))).toBe(true);
    expect(arrivedOnTime(asap(START + 1))).toBe(false);
  });
});

describe("service-level attainment", () => {
  it("is met when each clock's step came by its deadline, missed when one came late", () => {
    expect(attainedServiceLevel(windowed(START + 200 * M), new Date(START + 300 * M))).toBe(true);
    expect(attainedServiceLevel(windowed(START + 241 * M), new Date(START + 300 * M))).toBe(false);
  });

  it("has no outcome while a clock runs, or when the order closed before its deadline", () => {
    expect(attainedServiceLevel(windowed(null), new Date(START + 100 * M))).toBeNull();
    expect(
      attainedServiceLevel(windowed(null, { status: "cancelled" }), new Date(START + 300 * M)),
    ).toBeNull();
  });

  it("is missed when the deadline passed with the order open, or the breach was recorded", () => {
    expect(attainedServiceLevel(windowed(null), new Date(START + 241 * M))).toBe(false);
    const recorded = windowed(null, { status: "cancelled", sla_arrive_breached_at: iso(START + 241 * M) });
    expect(attainedServiceLevel(recorded, new Date(START + 300 * M))).toBe(false);
  });
});
