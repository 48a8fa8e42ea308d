// The itemised invoice's rules (issue 33): amounts in integer cents from hundredths of hours and
// quantities, every fault named by its field, a client's total never trusted, and the checks an approver
// reads, each flagged past its tolerance with the figures it compared.

import { describe, expect, it } from "vitest";
import {
  type InvoiceFacts,
  type InvoiceLine,
  invoiceChecks,
  isUnitemised,
  itemise,
  unitemised,
} from "../../../src/domain/orders/invoice.js";

describe("itemise", () => {
  it("computes each line once, rounding half up, and the totals as integer sums", () => {
    const result = itemise([
      { kind: "labour", hours: 0.25, rate_cents: 9_999 }, // 2,499.75 -> 2,500
      { kind: "labour", hours: 1.1, rate_cents: 3 }, // 3.3 -> 3
      { kind: "materials", description: "Pipe", quantity: 2.5, unit_price_cents: 333 }, // 832.5 -> 833
      { kind: "trip_charge", amount_cents: 4_000 },
      { kind: "tax", amount_cents: 250 },
    ]);
    if (Array.isArray(result)) throw new Error(JSON.stringify(result));
    expect(result.lines.map((l) => l.amount_cents)).toEqual([2_500, 3, 833, 4_000, 250]);
    expect(result).toMatchObject({ subtotal_cents: 7_336, tax_cents: 250, total_cents: 7_586 });
  });

  it("refuses more than two decimals, zero, the ceilings and a second tax line, naming each field", () => {
    const faults = itemise([
      { kind: "labour", hours: 0.125, rate_cents: 100 },
      { kind: "materials", description: "x", quantity: 0, unit_price_cents: 1 },
      { kind: "materials", description: "y", quantity: 10_000, unit_price_cents: 10_000_000 },
      { kind: "tax", amount_cents: 1 },
      { kind: "tax", amount_cents: 1 },
    ]);
    expect(Array.isArray(faults)).toBe(true);
    expect((faults as Array<{ field: string }>).map((f) => f.field)).toEqual([
      "lines",
      "lines.0.hours",
      "lines.1.quantity",
      "lines.2.amount_cents",
    ]);
    expect(itemise([])).toEqual([{ field: "lines", message: "must have at least one line" }]);
  });

  it("refuses a client's total that is not the lines' sum, saying both", () => {
    const lines = [{ kind: "trip_charge" as const, amount_cents: 100 }];
    expect(itemise(lines, { field: "amount_cents", cents: 100 })).toMatchObject({ total_cents: 100 });
    const [fault] = itemise(lines, { field: "amount_cents", cents: 101 }) as Array<{
      field: string;
      message: string;
    }>;
    expect(fault?.field).toBe("amount_cents");
    expect(fault?.message).toMatch(/101.*100/);
  });

  it("keeps a total sent alone as one recognisable line", () => {
    expect(isUnitemised(unitemised(500).lines)).toBe(true);
    expect(isUnitemised([{ kind: "other", description: "Call-out", amount_cents: 500 }])).toBe(false);
  });
});

describe("invoiceChecks", () => {
  const labour = (hours: number, rate: number): InvoiceLine => ({
    kind: "labour",
    hours,
    rate_cents: rate,
    amount_cents: Math.round(hours * rate),
  });
  const facts = (over: Partial<InvoiceFacts> = {}): InvoiceFacts => ({
    total_cents: 20_000,
    lines: [labour(2, 10_000)],
    nte_in_force_cents: 25_000,
    estimated_cost_cents: 20_000,
    on_site_at: "2026-11-28T10:00:00.000Z",
    completed_at: "2026-11-28T12:00:00.000Z",
    baseline_rate_cents: 10_000,
    proof_missing: [],
    ...over,
  });
  const result = (f: InvoiceFacts) => Object.fromEntries(invoiceChecks(f).map((c) => [c.code, c.result]));

  it("passes a clean invoice", () => {
    expect(result(facts())).toEqual({
      within_nte: "pass",
      against_estimate: "pass",
      labour_hours_vs_time_on_site: "pass",
      labour_rate_vs_index: "pass",
      proof_required: "pass",
    });
  });

  it("flags each check just past its tolerance, and not at it", () => {
    expect(result(facts({ total_cents: 25_001 })).within_nte).toBe("flag");
    expect(result(facts({ total_cents: 25_000 })).against_estimate).toBe("pass");
    expect(result(facts({ total_cents: 25_001, nte_in_force_cents: null })).against_estimate).toBe("flag");
    // Two hours on site, half an hour of slack: 2.5 h passes, 2.51 h is flagged.
    expect(result(facts({ lines: [labour(2.5, 10_000)] })).labour_hours_vs_time_on_site).toBe("pass");
    expect(result(facts({ lines: [labour(2.51, 10_000)] })).labour_hours_vs_time_on_site).toBe("flag");
    expect(result(facts({ lines: [labour(1, 12_500)] })).labour_rate_vs_index).toBe("pass");
    expect(result(facts({ lines: [labour(1, 12_501)] })).labour_rate_vs_index).toBe("flag");
    const missing = invoiceChecks(facts({ proof_missing: ["signature"] })).find(
      (c) => c.code === "proof_required",
    );
    expect(missing).toMatchObject({ result: "flag", figures: { missing: 1 }, missing: ["signature"] });
  });

  it("says what it could not compare", () => {
    expect(
      result(facts({ nte_in_force_cents: null, on_site_at: null, proof_missing: null, lines: [] })),
    ).toMatchObject({
      within_nte: "not_applicable",
      labour_hours_vs_time_on_site: "not_applicable",
      labour_rate_vs_index: "not_applicable",
      proof_required: "not_applicable",
    });
  });
});
