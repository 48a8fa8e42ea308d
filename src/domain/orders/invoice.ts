// An itemised invoice (issue 33): the lines a contractor bills a completed job with, the totals the
// service computes from them in integer cents, and the checks an approver reads beside them. Pure: no
// I/O, no clock; the order's commands (commands.ts) store each version with the order's change, sealed.
//
// Quantities and hours are decimals to the hundredth (a quarter hour is 0.25): they are read as whole
// hundredths, so every amount is an integer product rounded half up once per line, never a float sum. A
// client's total is never trusted: when it sends one that differs from the lines' sum, the invoice is
// refused naming both.

/** A fault naming its field: the shape of errors.ts's FieldError, declared here so that the web console,
 * which bundles this module for its invoice builder, type-checks it without the service's Node types. */
interface FieldError {
  field: string;
  message: string;
}

export const INVOICE_LINE_KINDS = ["labour", "trip_charge", "materials", "other", "tax"] as const;

/** The most lines an invoice has, and the sane ceilings of each figure (a line above them is a typo or
 * an attack, not a job). */
export const INVOICE_LIMITS = {
  lines: 100,
  hours: 200,
  quantity: 10_000,
  rateCents: 100_000,
  unitPriceCents: 10_000_000,
  amountCents: 10_000_000,
  totalCents: 100_000_000,
  description: 200,
  partNumber: 64,
} as const;

/** A line as the contractor sends it. */
export type InvoiceLineInput =
  | { kind: "labour"; description?: string; hours: number; rate_cents: number }
  | {
      kind: "materials";
      description: string;
      part_number?: string;
      quantity: number;
      unit_price_cents: number;
    }
  | { kind: "trip_charge"; description?: string; amount_cents: number }
  | { kind: "other"; description: string; amount_cents: number }
  | { kind: "tax"; description?: string; amount_cents: number };

/** A line as stored and shown: the input with its amount, in cents. */
export type InvoiceLine = InvoiceLineInput & { amount_cents: number };

export interface Itemised {
  lines: InvoiceLine[];
  /** Every line but tax. */
  subtotal_cents: number;
  tax_cents: number;
  total_cents: number;
}

/** `value` in whole hundredths, or null when it has more than two decimals. */
function hundredths(value: number): number | null {
  const scaled = Math.round(value * 100);
  return Math.abs(scaled - value * 100) < 1e-6 ? scaled : null;
}

/** `units` hundredths at `cents` each, rounded half up to a cent. */
function times(units: number, cents: number): number {
  return Math.floor((units * cents + 50) / 100);
}

/**
 * The lines with their amounts and the invoice's totals, or every fault found (each naming its field:
 * `lines.2.hours`). `claimedTotal`, when the client sent one, must equal the computed total.
 */
export function itemise(
  input: readonly InvoiceLineInput[],
  claimedTotal: { field: string; cents: number } | null = null,
): Itemised | FieldError[] {
  const errors: FieldError[] = [];
  const fault = (i: number, field: string, message: string) =>
    errors.push({ field: `lines.${i}.${field}`, message });
  if (input.length === 0) errors.push({ field: "lines", message: "must have at least one line" });
  if (input.length > INVOICE_LIMITS.lines) {
    errors.push({ field: "lines", message: `must have at most ${INVOICE_LIMITS.lines} lines` });
  }
  if (input.filter((l) => l.kind === "tax").length > 1) {
    errors.push({ field: "lines", message: "must have at most one tax line" });
  }
  const lines: InvoiceLine[] = [];
  input.forEach((line, i) => {
    let amount: number | null = null;
    if (line.kind === "labour") {
      const h = hundredths(line.hours);
      if (h === null) fault(i, "hours", "must have at most two decimals (0.25 is a quarter hour)");
      else if (h <= 0 || h > INVOICE_LIMITS.hours * 100) {
        fault(i, "hours", `must be more than 0 and at most ${INVOICE_LIMITS.hours}`);
      } else amount = times(h, line.rate_cents);
    } else if (line.kind === "materials") {
      const q = hundredths(line.quantity);
      if (q === null) fault(i, "quantity", "must have at most two decimals");
      else if (q <= 0 || q > INVOICE_LIMITS.quantity * 100) {
        fault(i, "quantity", `must be more than 0 and at most ${INVOICE_LIMITS.quantity}`);
      } else amount = times(q, line.unit_price_cents);
    } else {
      amount = line.amount_cents;
    }
    if (amount !== null && amount > INVOICE_LIMITS.amountCents) {
      fault(
        i,
        "amount_cents",
        `the line comes to ${amount} cents, over the ceiling of ${INVOICE_LIMITS.amountCents}`,
      );
    }
    if (amount !== null) lines.push({ ...line, amount_cents: amount });
  });
  if (errors.length > 0) return errors;
  const tax = lines.find((l) => l.kind === "tax")?.amount_cents ?? 0;
  const total = lines.reduce((sum, l) => sum + l.amount_cents, 0);
  if (total > INVOICE_LIMITS.totalCents) {
    return [
      { field: "lines", message: `come to ${total} cents, over the ceiling of ${INVOICE_LIMITS.totalCents}` },
    ];
  }
  if (claimedTotal !== null && claimedTotal.cents !== total) {
    return [
      {
        field: claimedTotal.field,
        message: `is ${claimedTotal.cents} but the lines come to ${total}: the service computes the total; send it equal or leave it out`,
      },
    ];
  }
  return { lines, subtotal_cents: total - tax, tax_cents: tax, total_cents: total };
}

/** One version of a job's invoice, as stored with the order's change that made it. */
export interface InvoiceVersion extends Itemised {
  order_id: string;
  /** 1 for the invoice, then one more for each revision. */
  version: number;
  created_at: string;
  /** The contractor's actor (contractor:<id>). */
  created_by: string;
}

/** The one line's description of an invoice sent as a total alone. */
const UNITEMISED = "Invoice total (not itemised)";

/** An invoice without lines (a total alone, as the first API took it): one line of kind other. */
export function unitemised(cents: number): Itemised {
  return {
    lines: [{ kind: "other", description: UNITEMISED, amount_cents: cents }],
    subtotal_cents: cents,
    tax_cents: 0,
    total_cents: cents,
  };
}

/** Whether the invoice was sent as a total alone. */
export function isUnitemised(lines: readonly InvoiceLine[]): boolean {
  return lines.length === 1 && lines[0]?.kind === "other" && lines[0].description === UNITEMISED;
}

/** The hours a labour line bills, summed, in hundredths. */
function labourHundredths(lines: readonly InvoiceLine[]): number {
  return lines.reduce((sum, l) => sum + (l.kind === "labour" ? (hundredths(l.hours) ?? 0) : 0), 0);
}

// --- Checks -----------------------------------------------------------------------------------------

export const INVOICE_CHECK_CODES = [
  "within_nte",
  "against_estimate",
  "labour_hours_vs_time_on_site",
  "labour_rate_vs_index",
  "proof_required",
] as const;
type InvoiceCheckCode = (typeof INVOICE_CHECK_CODES)[number];

/** One check: passed, flagged (the approver should look), or not applicable (nothing to compare with). */
export interface InvoiceCheck {
  code: InvoiceCheckCode;
  result: "pass" | "flag" | "not_applicable";
  message: string;
  /** The figures compared (cents, hours, ratios); null where one is not known. */
  figures: Record<string, number | null>;
  /** proof_required: what is missing, by name. */
  missing?: string[];
}

/** How far above the quote's estimate a total may go before it is flagged. */
const ESTIMATE_TOLERANCE = 0.25;
/** How far above the regional baseline (for the trade and urgency) a labour rate may go. */
const RATE_TOLERANCE = 0.25;
/** Labour billed beyond the time on site is flagged past this much (travel and paperwork). */
const HOURS_SLACK_HUNDREDTHS = 50;

export interface InvoiceFacts {
  total_cents: number;
  lines: readonly InvoiceLine[];
  nte_in_force_cents: number | null;
  estimated_cost_cents: number;
  /** The price of an accepted counter-offer (counter-rules.ts): checked against instead of the estimate. */
  agreed_price_cents?: number | null;
  /** When the contractor checked in and out (on site, completed); null when not known. */
  on_site_at: string | null;
  completed_at: string | null;
  /** The regional model rate for the order's trade, state and urgency, cents per hour. */
  baseline_rate_cents: number;
  /** What the account requires before completion that the job's proof lacks, by name; null when it
   * requires nothing. */
  proof_missing: readonly string[] | null;
}

const pct = (x: number) => `${Math.round(x * 100)} %`;

function withinNte(f: InvoiceFacts): InvoiceCheck {
  const nte = f.nte_in_force_cents;
  const figures = { total_cents: f.total_cents, nte_in_force_cents: nte };
  if (nte === null) {
    return { code: "within_nte", result: "not_applicable", message: "The order has no NTE.", figures };
  }
  const within = f.total_cents <= nte;
  return {
    code: "within_nte",
    result: within ? "pass" : "flag",
    message: within
      ? `The total is within the NTE in force (${dollars(nte)}).`
      : `The total is ${dollars(f.total_cents - nte)} over the NTE in force (${dollars(nte)}).`,
    figures,
  };
}

/** Cents as dollars for a message ("$1,234.50"); the figures keep the cents. */
function dollars(cents: number): string {
  const whole = Math.trunc(Math.abs(cents) / 100).toLocaleString("en-US");
  return `${cents < 0 ? "-" : ""}$${whole}.${String(Math.abs(cents) % 100).padStart(2, "0")}`;
}

function againstEstimate(f: InvoiceFacts): InvoiceCheck {
  // A price agreed by an accepted counter-offer replaces the quote's estimate as the reference.
  const agreed = f.agreed_price_cents ?? null;
  const base = agreed ?? f.estimated_cost_cents;
  const what = agreed === null ? "the quote's estimate" : "the price agreed by the accepted counter-offer";
  const within = f.total_cents <= Math.round(base * (1 + ESTIMATE_TOLERANCE));
  return {
    code: "against_estimate",
    result: within ? "pass" : "flag",
    message: within
      ? `The total is within ${pct(ESTIMATE_TOLERANCE)} above ${what}.`
      : `The total is ${pct(f.total_cents / base - 1)} above ${what} (tolerance ${pct(ESTIMATE_TOLERANCE)}).`,
    figures: {
      total_cents: f.total_cents,
      estimated_cost_cents: f.estimated_cost_cents,
      ...(agreed === null ? {} : { agreed_price_cents: agreed }),
      tolerance: ESTIMATE_TOLERANCE,
    },
  };
}

function hoursOnSite(f: InvoiceFacts): InvoiceCheck {
  const billed = labourHundredths(f.lines);
  const onSiteMs =
    f.on_site_at !== null && f.completed_at !== null
      ? Date.parse(f.completed_at) - Date.parse(f.on_site_at)
      : null;
  if (billed === 0 || onSiteMs === null) {
    return {
      code: "labour_hours_vs_time_on_site",
      result: "not_applicable",
      message:
        billed === 0 ? "No labour is billed." : "The job has no check-in and check-out to compare with.",
      figures: { labour_hours: billed / 100, hours_on_site: null },
    };
  }
  const onSite = Math.round(onSiteMs / 36_000); // hundredths of an hour
  const over = billed > onSite + HOURS_SLACK_HUNDREDTHS;
  return {
    code: "labour_hours_vs_time_on_site",
    result: over ? "flag" : "pass",
    message: over
      ? `${billed / 100} h of labour billed for ${onSite / 100} h on site (from check-in to check-out).`
      : `The labour billed fits the ${onSite / 100} h on site.`,
    figures: {
      labour_hours: billed / 100,
      hours_on_site: onSite / 100,
      slack_hours: HOURS_SLACK_HUNDREDTHS / 100,
    },
  };
}

function rateAgainstIndex(f: InvoiceFacts): InvoiceCheck {
  const rates = f.lines.flatMap((l) => (l.kind === "labour" ? [l.rate_cents] : []));
  if (rates.length === 0) {
    return {
      code: "labour_rate_vs_index",
      result: "not_applicable",
      message: "No labour is billed.",
      figures: { highest_rate_cents: null, baseline_rate_cents: f.baseline_rate_cents },
    };
  }
  const highest = Math.max(...rates);
  const within = highest <= Math.round(f.baseline_rate_cents * (1 + RATE_TOLERANCE));
  return {
    code: "labour_rate_vs_index",
    result: within ? "pass" : "flag",
    message: within
      ? "The labour rate is within the trade index's regional rate for the trade and urgency."
      : `The labour rate is ${pct(highest / f.baseline_rate_cents - 1)} above the trade index's regional rate for the trade and urgency (tolerance ${pct(RATE_TOLERANCE)}).`,
    figures: {
      highest_rate_cents: highest,
      baseline_rate_cents: f.baseline_rate_cents,
      tolerance: RATE_TOLERANCE,
    },
  };
}

function proofRequired(f: InvoiceFacts): InvoiceCheck {
  if (f.proof_missing === null) {
    return {
      code: "proof_required",
      result: "not_applicable",
      message: "The account requires no proof before completion.",
      figures: { missing: null },
    };
  }
  const missing = [...f.proof_missing];
  return {
    code: "proof_required",
    result: missing.length === 0 ? "pass" : "flag",
    message:
      missing.length === 0
        ? "The proof the account requires is there."
        : `Missing what the account requires: ${missing.join(", ")}.`,
    figures: { missing: missing.length },
    missing,
  };
}

/** The checks an approver reads beside an invoice, each with the figures it compared. */
export function invoiceChecks(f: InvoiceFacts): InvoiceCheck[] {
  return [withinNte(f), againstEstimate(f), hoursOnSite(f), rateAgainstIndex(f), proofRequired(f)];
}

// --- Decisions: what the account does with an invoice -------------------------------------------------

/** The account's decisions on an invoice, each a transition of the order (transitions.ts). */
export const INVOICE_DECISIONS = ["approved", "rejected", "revision_requested", "paid"] as const;
export type InvoiceDecisionKind = (typeof INVOICE_DECISIONS)[number];

/** Why an invoice is rejected (a closed list, for the accounts-payable reports; `other` needs a note). */
export const INVOICE_REJECTION_CODES = [
  "work_not_done",
  "work_incomplete",
  "pricing_disagreement",
  "duplicate_invoice",
  "not_authorised",
  "missing_proof",
  "other",
] as const;
export type InvoiceRejectionCode = (typeof INVOICE_REJECTION_CODES)[number];

/** One decision on an invoice, as stored with the order's change that makes it (migration 0039). */
export interface InvoiceDecision {
  id: string;
  order_id: string;
  /** The version decided (for paid: the version approved). */
  version: number;
  decision: InvoiceDecisionKind;
  total_cents: number;
  reason_code: InvoiceRejectionCode | null;
  note: string | null;
  payment_reference: string | null;
  /** The date the account paid (YYYY-MM-DD), as it records it. */
  paid_on: string | null;
  decided_at: string;
  /** key:<id>, or system:invoice_policy for an approval by the account's auto-approval policy. */
  decided_by: string;
}

/** Whether a paid_on date is acceptable at `now`: a real date, not after tomorrow (UTC: the account's day
 * may be ahead), not before `earliest` (the day the invoice was approved). */
export function paidOnFault(paidOn: string, now: Date, earliest: string): string | null {
  const d = new Date(`${paidOn}T00:00:00Z`);
  if (
    !/^\d{4}-\d{2}-\d{2}$/.test(paidOn) ||
    Number.isNaN(d.getTime()) ||
    d.toISOString().slice(0, 10) !== paidOn
  ) {
    return "must be a date, YYYY-MM-DD";
  }
  const tomorrow = new Date(now.getTime() + 86_400_000).toISOString().slice(0, 10);
  if (paidOn > tomorrow) return `must not be in the future (after ${tomorrow})`;
  if (paidOn < earliest.slice(0, 10))
    return `must not be before the invoice was approved (${earliest.slice(0, 10)})`;
  return null;
}
