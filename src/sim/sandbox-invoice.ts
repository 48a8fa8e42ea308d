// What a sandbox contractor bills a completed job with (issue 33): an itemised invoice whose total is the
// job's final cost (within the NTE in force), as a real contractor would send it: labour for the time it
// spent on site (rounded up to the quarter hour) at its rate for the job's urgency, a trip charge, parts,
// and tax on the parts. Now and then (one job in four, by its id, or a description asking for it) the
// contractor bills the trade's typical hours however short its visit was: the invoice's
// labour_hours_vs_time_on_site check flags it, and the account's auto-approval leaves it for a person.
// Pure.

import type { InvoiceLineInput } from "../domain/orders/invoice.js";
import type { Order } from "../domain/orders/order.js";
import { nteInForce } from "../domain/orders/policy.js";
import { TRADES } from "../domain/trades.js";

/** A sandbox order's description containing this has its invoice padded (flagged). */
export const PADDED_INVOICE_MARKER = "[sandbox:padded_invoice]";

const TRIP_CHARGE_CENTS = 4_500;
const PARTS_TAX_RATE = 0.0825;
const HOUR_MS = 3_600_000;

/** Whether the sandbox's contractor pads this job's invoice: one job in four, by its id. */
export function padsInvoice(order: Pick<Order, "id" | "description">): boolean {
  if (order.description.includes(PADDED_INVOICE_MARKER)) return true;
  let sum = 0;
  for (const ch of order.id) sum += ch.charCodeAt(0);
  return sum % 4 === 0;
}

/** Hours on site, from check-in to check-out, rounded up to the quarter hour (at least a quarter). */
function quarterHoursOnSite(order: Order): number {
  const from = order.check_in?.at ?? order.on_site_at;
  const to = order.check_out?.at ?? order.completed_at;
  const ms = from && to ? Math.max(0, Date.parse(to) - Date.parse(from)) : 0;
  return Math.max(1, Math.ceil((ms / HOUR_MS) * 4)) / 4;
}

/** The lines of the sandbox contractor's invoice of a completed job. */
export function sandboxInvoiceLines(order: Order): InvoiceLineInput[] {
  const cost = Number(order.final_cost_cents ?? order.estimated_cost_cents);
  const limit = nteInForce(order);
  const total = limit === null ? cost : Math.min(cost, limit);
  const typical = TRADES[order.trade].typicalJobHours;
  // The job was priced at the contractor's rate for its urgency over the trade's typical hours.
  const rate = Math.max(1, Math.round(Number(order.estimated_cost_cents) / typical));
  const hours = padsInvoice(order) ? typical : Math.min(typical, quarterHoursOnSite(order));
  const labour = Math.floor((hours * 100 * rate + 50) / 100);
  if (labour > total) return [{ kind: "other", description: "Service call", amount_cents: total }];
  const lines: InvoiceLineInput[] = [{ kind: "labour", description: "Labour", hours, rate_cents: rate }];
  let rest = total - labour;
  if (rest >= TRIP_CHARGE_CENTS) {
    lines.push({ kind: "trip_charge", amount_cents: TRIP_CHARGE_CENTS });
    rest -= TRIP_CHARGE_CENTS;
  }
  const parts = Math.floor(rest / (1 + PARTS_TAX_RATE));
  if (parts > 0) {
    lines.push({
      kind: "materials",
      description: "Parts and supplies",
      quantity: 1,
      unit_price_cents: parts,
    });
    if (rest - parts > 0)
      lines.push({ kind: "tax", description: "Sales tax on parts", amount_cents: rest - parts });
  } else if (rest > 0) {
    lines.push({ kind: "other", description: "Consumables", amount_cents: rest });
  }
  return lines;
}
