// Itemised invoices (issue 33): the lines a contractor sends with contractor.invoice (contractor-actions.ts)
// or a revision (contractor.invoice_revise), and the invoice as the account, the contractor on the job and
// the dispatch team read it (order.invoice): its lines and totals, every version with the seal of the
// record that holds it, and the checks an approver reads beside it, each with its figures.

import { z } from "zod";
import { completionRefusal } from "../../domain/orders/checklist.js";
import type { MissingProof } from "../../domain/orders/completion-gate.js";
import {
  INVOICE_CHECK_CODES,
  INVOICE_DECISIONS,
  INVOICE_LIMITS,
  INVOICE_LINE_KINDS,
  INVOICE_REJECTION_CODES,
  type InvoiceLineInput,
  type InvoiceVersion,
  type Itemised,
  invoiceChecks,
  isUnitemised,
  itemise,
  unitemised,
} from "../../domain/orders/invoice.js";
import type { Order } from "../../domain/orders/order.js";
import { nteInForce } from "../../domain/orders/policy.js";
import { CURRENCY, regionalHourlyRateCents, URGENCY_MULTIPLIERS } from "../../domain/pricing.js";
import type { StateCode } from "../../domain/us-regions.js";
import { ApiError } from "../../errors.js";
import { contractorOf, defineOperation, type OperationContext } from "../kernel/operation.js";
import { currencySchema } from "../kernel/schemas.js";
import { orderFor } from "./attachment-access.js";
import { orderIdParam } from "./attachments.js";
import { checklistOf } from "./checklist-state.js";
import { completionEvidence, decideInvoice, type OrderServices, reviseInvoice } from "./command-runner.js";

const L = INVOICE_LIMITS;
const cents = (max: number) => z.number().int().min(0).max(max);
const description = z.string().trim().min(1).max(L.description);
/** A positive decimal to the hundredth (hours, a quantity); more decimals are refused by itemise. */
const decimal = (max: number) => z.number().positive().max(max);

const lineInput = z.discriminatedUnion("kind", [
  z.strictObject({
    kind: z.literal("labour"),
    description: description.optional(),
    hours: decimal(L.hours).describe("Hours worked, to the hundredth (0.25 is a quarter hour)."),
    rate_cents: cents(L.rateCents).describe("The hourly rate, in cents."),
  }),
  z.strictObject({
    kind: z.literal("materials"),
    description: description.describe("What was fitted or used."),
    part_number: z.string().trim().min(1).max(L.partNumber).optional(),
    quantity: decimal(L.quantity).describe("How many (to the hundredth: 2.5 m of pipe)."),
    unit_price_cents: cents(L.unitPriceCents),
  }),
  z.strictObject({
    kind: z.literal("trip_charge"),
    description: description.optional(),
    amount_cents: cents(L.amountCents),
  }),
  z.strictObject({ kind: z.literal("other"), description, amount_cents: cents(L.amountCents) }),
  z.strictObject({
    kind: z.literal("tax"),
    description: description.optional(),
    amount_cents: cents(L.amountCents),
  }),
]);

/** The lines of an invoice as a contractor sends them. */
export const invoiceLinesInput = z
  .array(lineInput)
  .min(1)
  .max(L.lines)
  .describe(
    "The invoice's lines: labour (hours x rate_cents), materials (quantity x unit_price_cents, with a " +
      "description and optional part_number), trip_charge, other (with a description) and at most one tax " +
      "line (amount_cents). The service computes each line's amount and the totals in integer cents.",
  );

/** The lines itemised, or the 422 naming every fault (`lines.1.hours`, or the total sent that differs). */
export function itemisedOr422(
  lines: InvoiceLineInput[],
  claimed: { field: string; cents: number } | null,
): Itemised {
  const result = itemise(lines, claimed);
  if (Array.isArray(result)) {
    throw new ApiError("validation_failed", `Invalid request: ${result.map((e) => e.field).join(", ")}.`, {
      errors: result,
    });
  }
  return result;
}

/** The invoice's statuses, each one of the order's (transitions.ts). */
export const INVOICE_STATUSES = ["submitted", "revision_requested", "rejected", "approved", "paid"] as const;

const lineView = z.object({
  kind: z.enum(INVOICE_LINE_KINDS),
  description: z.string().optional(),
  hours: z.number().optional(),
  rate_cents: z.number().int().optional(),
  part_number: z.string().optional(),
  quantity: z.number().optional(),
  unit_price_cents: z.number().int().optional(),
  amount_cents: z.number().int().describe("The line's amount, computed by the service."),
});

const invoiceSchema = z
  .object({
    order_id: z.string(),
    status: z
      .enum(INVOICE_STATUSES)
      .describe(
        "submitted: the latest version waits for the account's decision; revision_requested: sent back " +
          "with a note, the contractor revises it; rejected: with a reason code (a revision may follow); " +
          "approved: by an approver or by the account's policy, payment comes next; paid: recorded by the account.",
      ),
    version: z.number().int().describe("The latest version: 1, then one more per revision."),
    itemised: z.boolean().describe("false: the contractor sent a total alone (one line of kind other)."),
    lines: z.array(lineView),
    subtotal_cents: z.number().int().describe("Every line but tax."),
    tax_cents: z.number().int(),
    total_cents: z.number().int(),
    currency: currencySchema,
    submitted_at: z.iso.datetime().describe("When the latest version was sent."),
    versions: z
      .array(
        z.object({
          version: z.number().int(),
          total_cents: z.number().int(),
          created_at: z.iso.datetime(),
          seal: z.string().nullable().describe("The audit record sealing this version's lines and totals."),
          verify_url: z.string().nullable(),
        }),
      )
      .describe("Every version, oldest first."),
    checks: z
      .array(
        z.object({
          code: z.enum(INVOICE_CHECK_CODES),
          result: z.enum(["pass", "flag", "not_applicable"]),
          message: z.string(),
          figures: z
            .record(z.string(), z.number().nullable())
            .describe("The figures compared: cents, hours, tolerances (0.25 is 25 %); null where unknown."),
          missing: z.array(z.string()).optional().describe("proof_required: what is missing, by name."),
        }),
      )
      .describe(
        "What an approver reads beside the invoice, each with the figures compared: within_nte, " +
          "against_estimate (25 % above the quote's estimate), labour_hours_vs_time_on_site (from check-in " +
          "to check-out, half an hour of slack), labour_rate_vs_index (25 % above the trade index's " +
          "regional rate for the trade and urgency), proof_required (what the account requires before " +
          "completion, and the checklist's required items).",
      ),
    flags: z.number().int().describe("How many checks flagged."),
    decisions: z
      .array(
        z.object({
          decision: z.enum(INVOICE_DECISIONS),
          version: z.number().int(),
          total_cents: z.number().int(),
          reason_code: z.enum(INVOICE_REJECTION_CODES).nullable(),
          note: z.string().nullable(),
          payment_reference: z.string().nullable(),
          paid_on: z.iso.date().nullable(),
          decided_at: z.iso.datetime(),
          by_policy: z.boolean().describe("Approved at once by the account's invoice policy."),
          decided_by: z
            .string()
            .nullable()
            .describe("The key that decided (key:<id>); null for the contractor, and for the policy."),
        }),
      )
      .describe("The account's decisions on the invoice, oldest first."),
  })
  .meta({ id: "Invoice" });

/** What the account requires of the job that it lacks, by name, as the completion gate names it; null
 * when it requires nothing. */
async function proofMissing(services: OrderServices, order: Order): Promise<string[] | null> {
  const { store } = services;
  const [evidence, { checklist }, answers] = await Promise.all([
    completionEvidence(services, undefined, order),
    checklistOf(store, order, services.now()),
    store.checklists.answers(order.id),
  ]);
  if (!evidence && !checklist.items.some((i) => i.required)) return null;
  const refusal = completionRefusal({
    checklist: { items: checklist.items, answered: new Set(answers.map((a) => a.itemId)) },
    proof: evidence,
  });
  const missing = (refusal?.extra?.missing ?? []) as MissingProof[];
  return missing.map((m) =>
    m.requirement === "checklist_item" ? `checklist item "${m.label}"` : m.requirement,
  );
}

const ITEMISED_KINDS = ["order.invoiced", "order.invoice_revised"];

/** The order's invoice versions; an order invoiced before versions were kept (migration 0035) has one,
 * its total alone, from the order's own columns. */
async function versionsOf(services: OrderServices, order: Order): Promise<InvoiceVersion[]> {
  const versions = await services.store.orders.invoiceVersions(order.id);
  if (versions.length > 0 || order.invoice_cents === null || order.invoiced_at === null) return versions;
  return [
    {
      order_id: order.id,
      version: 1,
      ...unitemised(order.invoice_cents),
      created_at: order.invoiced_at,
      created_by: `contractor:${order.contractor_id}`,
    },
  ];
}

/** The checks an approver reads beside the latest version of the order's invoice. */
async function checksOf(services: OrderServices, order: Order, latest: InvoiceVersion) {
  return invoiceChecks({
    total_cents: latest.total_cents,
    lines: latest.lines,
    nte_in_force_cents: nteInForce(order),
    estimated_cost_cents: order.estimated_cost_cents,
    agreed_price_cents: order.agreed_price_cents,
    on_site_at: order.check_in?.at ?? order.on_site_at,
    completed_at: order.check_out?.at ?? order.completed_at,
    baseline_rate_cents: Math.round(
      regionalHourlyRateCents(order.trade, order.state as StateCode) * URGENCY_MULTIPLIERS[order.urgency],
    ),
    proof_missing: await proofMissing(services, order),
  });
}

export async function invoiceView(ctx: OperationContext, order: Order) {
  const versions = await versionsOf(ctx.services, order);
  const latest = versions.at(-1);
  if (!latest) {
    throw new ApiError(
      "invalid_transition",
      `The order has no invoice yet: its contractor invoices it once completed; it is ${order.status}.`,
      { extra: { current_status: order.status } },
    );
  }
  const [records, checks, decisions] = await Promise.all([
    ctx.services.store.audit.orderSeals(order.id),
    checksOf(ctx.services, order, latest),
    ctx.services.store.orders.invoiceDecisions(order.id),
  ]);
  return {
    order_id: order.id,
    status: INVOICE_STATUS[order.status] ?? "submitted",
    version: latest.version,
    itemised: !isUnitemised(latest.lines),
    lines: latest.lines,
    subtotal_cents: latest.subtotal_cents,
    tax_cents: latest.tax_cents,
    total_cents: latest.total_cents,
    currency: CURRENCY,
    submitted_at: latest.created_at,
    versions: versions.map((v) => {
      const record = records.findLast(
        (r) => r.created_at === v.created_at && ITEMISED_KINDS.includes(r.kind),
      );
      return {
        version: v.version,
        total_cents: v.total_cents,
        created_at: v.created_at,
        seal: record?.seal ?? null,
        verify_url: record ? `${ctx.baseUrl}/api/attest/verify/${record.seal}` : null,
      };
    }),
    checks,
    flags: checks.filter((c) => c.result === "flag").length,
    decisions: decisions.map((d) => ({
      decision: d.decision,
      version: d.version,
      total_cents: d.total_cents,
      reason_code: d.reason_code,
      note: d.note,
      payment_reference: d.payment_reference,
      paid_on: d.paid_on,
      decided_at: d.decided_at,
      by_policy: d.decided_by === POLICY_ACTOR,
      decided_by: d.decided_by === POLICY_ACTOR || ctx.principal?.kind === "contractor" ? null : d.decided_by,
    })),
  };
}

/** The invoice's status, from the order's. */
export const INVOICE_STATUS: Partial<Record<Order["status"], (typeof INVOICE_STATUSES)[number]>> = {
  invoiced: "submitted",
  revision_requested: "revision_requested",
  invoice_rejected: "rejected",
  approved: "approved",
  paid: "paid",
};

/** The actor of an approval by the account's invoice policy. */
export const POLICY_ACTOR = "system:invoice_policy" as const;

/**
 * After the contractor invoiced or revised: approves the invoice at once when the account's policy says
 * so (no check flagged, total below its amount), as a decision of its own. Answers the order as it is then.
 */
export async function applyInvoicePolicy(services: OrderServices, order: Order): Promise<Order> {
  const policy = await services.store.invoicePolicies.get(order.account_id, order.livemode);
  const below = policy?.auto_approve_below_cents ?? null;
  if (below === null || order.status !== "invoiced" || (order.invoice_cents ?? 0) >= below) return order;
  const latest = (await versionsOf(services, order)).at(-1);
  if (!latest || latest.total_cents >= below) return order;
  const flags = (await checksOf(services, order, latest)).filter((c) => c.result === "flag").length;
  if (flags > 0) return order;
  try {
    return await decideInvoice(services, order.id, {
      verdict: "approve",
      role: "system",
      version: latest.version,
      limitCents: below - 1,
      reasonCode: null,
      note: null,
      actor: POLICY_ACTOR,
      policy: { auto_approve_below_cents: below, flags: 0 },
    });
  } catch (error) {
    // Decided or revised meanwhile: the order as it is now, for a person to decide.
    if (error instanceof ApiError && error.status === 409) {
      return (await services.store.orders.byId(order.id)) ?? order;
    }
    throw error;
  }
}

export { invoiceSchema };

export const orderInvoiceOperation = defineOperation({
  id: "orderInvoice",
  name: "order.invoice",
  summary: "Read an order's invoice, its versions and its checks",
  description:
    "The contractor's invoice of a completed job: its lines with the amounts the service computed, the " +
    "totals in cents, every version (each revision) with the seal of the audit record holding it, and " +
    "the checks an approver reads beside it, each flagged or passed with the figures it compared. For " +
    "the account that owns the order, the contractor holding the job and the dispatch team; 409 " +
    "invalid_transition before the job is invoiced.",
  access: "any_key",
  effect: "read",
  limit: "key",
  http: { method: "GET", path: "/api/orders/:order_id/invoice", input: "params" },
  problems: [409],
  input: z.strictObject({ order_id: orderIdParam }),
  output: invoiceSchema,
  example: { order_id: "ord_0VberZOdAb12Cd34Ef56" },
  async handler(ctx, input) {
    const { order } = await orderFor(ctx, input.order_id);
    return invoiceView(ctx, order);
  },
});

export const contractorInvoiceReviseOperation = defineOperation({
  id: "contractorInvoiceRevise",
  name: "contractor.invoice_revise",
  summary: "Revise your invoice before it is approved",
  description:
    "Sends a new version of your invoice of an invoiced job: its lines (as for contractor.invoice; " +
    "amount_cents, if sent, must equal the lines' total, else 422 naming both). Within the NTE in force " +
    "(409 nte_exceeded); 409 invalid_transition unless the job is invoiced. Each version is sealed in the " +
    "audit log (order.invoice_revised) and sent as the order.invoice_revised event. Answers the invoice.",
  access: "contractor",
  effect: "write",
  limit: "key",
  http: { method: "POST", path: "/api/contractor/v1/jobs/invoice/revise", input: "body" },
  problems: [404, 409],
  input: z.strictObject({
    order_id: z.string().min(1).max(64),
    lines: invoiceLinesInput,
    amount_cents: cents(L.totalCents)
      .optional()
      .describe("The total you expect; refused (422) when it is not the lines' total."),
  }),
  output: invoiceSchema,
  example: {
    order_id: "ord_0VberZOdAb12Cd34Ef56",
    lines: [
      { kind: "labour", hours: 1.5, rate_cents: 9_500 },
      {
        kind: "materials",
        description: "Compression valve",
        part_number: "CV-12",
        quantity: 2,
        unit_price_cents: 1_250,
      },
      { kind: "tax", amount_cents: 210 },
    ],
  },
  async handler(ctx, input) {
    const contractor = contractorOf(ctx);
    const claimed =
      input.amount_cents === undefined ? null : { field: "amount_cents", cents: input.amount_cents };
    const itemised = itemisedOr422(input.lines as InvoiceLineInput[], claimed);
    const order = await reviseInvoice(
      ctx.services,
      contractor,
      input.order_id,
      itemised,
      `contractor:${contractor.contractorId}`,
    );
    return invoiceView(ctx, await applyInvoicePolicy(ctx.services, order));
  },
});
