// The sandbox contractor's invoice of a completed job (src/sim/sandbox-invoice.ts): lines that add up, in
// the service's own arithmetic, to the job's final cost within the NTE; labour for the time on site, or the
// trade's typical hours when it pads (flagged by the approver's check).

import { describe, expect, it } from "vitest";
import { type Itemised, invoiceChecks, itemise } from "../../src/domain/orders/invoice.js";
import { PADDED_INVOICE_MARKER, padsInvoice, sandboxInvoiceLines } from "../../src/sim/sandbox-invoice.js";
import { orderFixture } from "../helpers/order-fixture.js";

const T0 = "2026-11-20T15:00:00.000Z";
const minutesAfter = (m: number) => new Date(Date.parse(T0) + m * 60_000).toISOString();

function done(overrides: Parameters<typeof orderFixture>[0] = {}) {
  return orderFixture({
    id: "ord_AAAAAAAAAAAAAAAAAAAB",
    trade: "plumbing",
    description: "Leak",
    status: "completed",
    estimated_cost_cents: 30_000,
    final_cost_cents: 30_000,
    nte_cents: null,
    on_site_at: T0,
    completed_at: minutesAfter(50),
    ...overrides,
  });
}

const itemised = (lines: ReturnType<typeof sandboxInvoiceLines>) => {
  const result = itemise(lines);
  if (Array.isArray(result)) throw new Error(JSON.stringify(result));
  return result as Itemised;
};

describe("the sandbox contractor's invoice", () => {
  it("bills the time on site, rounded up to the quarter hour, a trip charge, parts and their tax, to the final cost", () => {
    const order = done();
    expect(padsInvoice(order)).toBe(false);
    const lines = sandboxInvoiceLines(order);
    expect(lines.map((l) => l.kind)).toEqual(["labour", "trip_charge", "materials", "tax"]);
    // 50 minutes -> 1 h; the job was priced at 30,000 over plumbing's 2 typical hours: 15,000 an hour.
    expect(lines[0]).toMatchObject({ hours: 1, rate_cents: 15_000 });
    const invoice = itemised(lines);
    expect(invoice.total_cents).toBe(30_000);
    const hours = invoiceChecks({
      total_cents: invoice.total_cents,
      lines: invoice.lines,
      nte_in_force_cents: null,
      estimated_cost_cents: 30_000,
      on_site_at: order.on_site_at,
      completed_at: order.completed_at,
      baseline_rate_cents: 15_000,
      proof_missing: null,
    }).find((c) => c.code === "labour_hours_vs_time_on_site");
    expect(hours?.result).toBe("pass");
  });

  it("stays within the NTE in force, and bills one line when the labour alone would pass it", () => {
    expect(itemised(sandboxInvoiceLines(done({ nte_cents: 25_000 }))).total_cents).toBe(25_000);
    const tight = sandboxInvoiceLines(done({ nte_cents: 10_000 }));
    expect(tight).toEqual([{ kind: "other", description: "Service call", amount_cents: 10_000 }]);
  });

  it("pads now and then: the trade's typical hours however short the visit, which the approver's check flags", () => {
    const order = done({ description: `Leak ${PADDED_INVOICE_MARKER}`, completed_at: minutesAfter(5) });
    expect(padsInvoice(order)).toBe(true);
    const invoice = itemised(sandboxInvoiceLines(order));
    expect(invoice.lines[0]).toMatchObject({ kind: "labour", hours: 2 });
    const hours = invoiceChecks({
      total_cents: invoice.total_cents,
      lines: invoice.lines,
      nte_in_force_cents: null,
      estimated_cost_cents: 30_000,
      on_site_at: order.on_site_at,
      completed_at: order.completed_at,
      baseline_rate_cents: 15_000,
      proof_missing: null,
    }).find((c) => c.code === "labour_hours_vs_time_on_site");
    expect(hours?.result).toBe("flag");
    // One job in four by its id, without a marker.
    const ids = Array.from({ length: 400 }, (_, i) => `ord_${String(i).padStart(20, "x")}`);
    const padded = ids.filter((id) => padsInvoice({ id, description: "Leak" })).length;
    expect(padded).toBeGreaterThan(60);
    expect(padded).toBeLessThan(140);
  });
});
