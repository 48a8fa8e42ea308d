// The account's side of an invoice (issue 33): approve it (an approver within its limit), reject it with a
// reason code, send it back for a revision, record its payment; and the account's invoice policy, which
// approves clean invoices below an amount at once (invoices.ts applyInvoicePolicy). Each decision is a
// transition of the order (domain/orders/invoice-decisions.ts), sealed, sent as an event and a webhook.

import { z } from "zod";
import { approvalLimit } from "../../domain/key-roles.js";
import {
  INVOICE_LIMITS,
  INVOICE_REJECTION_CODES,
  type InvoiceRejectionCode,
} from "../../domain/orders/invoice.js";
import type { Order } from "../../domain/orders/order.js";
import { ApiError, validationError } from "../../errors.js";
import type { InvoicePolicyRow } from "../../storage/store.js";
import { setAccountSetting } from "../kernel/account-settings.js";
import { defineOperation, type OperationContext, principalOf } from "../kernel/operation.js";
import { sealRef, sealRefSchema } from "../matching/decision-records.js";
import { decideInvoice, payInvoice } from "./command-runner.js";
import { invoiceSchema, invoiceView } from "./invoices.js";

const orderId = z.string().min(1).max(64);
const note = z.string().trim().min(1).max(2000);

/** The caller's own order, or 404. */
async function ownOrder(ctx: OperationContext, id: string): Promise<Order> {
  const principal = principalOf(ctx);
  const order = await ctx.services.store.orders.find(id, principal.accountId, principal.livemode);
  if (!order) throw new ApiError("not_found", `No order ${id} for this key.`);
  return order;
}

/** What each decision needs besides the order: a reason code to reject (a note with `other`), a note to
 * send it back; a reason code with nothing but a rejection. */
function decisionFaults(input: {
  decision: string;
  reason_code?: string | undefined;
  note?: string | undefined;
}) {
  const errors: Array<{ field: string; message: string }> = [];
  if (input.decision === "reject" && input.reason_code === undefined) {
    errors.push({
      field: "reason_code",
      message: `is required to reject: one of ${INVOICE_REJECTION_CODES.join(", ")}`,
    });
  }
  if (input.decision !== "reject" && input.reason_code !== undefined) {
    errors.push({ field: "reason_code", message: "goes only with decision reject" });
  }
  if (input.reason_code === "other" && input.note === undefined) {
    errors.push({ field: "note", message: "is required with reason_code other: say why" });
  }
  if (input.decision === "request_revision" && input.note === undefined) {
    errors.push({ field: "note", message: "is required to request a revision: say what to change" });
  }
  return errors;
}

export const invoiceDecisionOperation = defineOperation({
  id: "dispatchInvoiceDecision",
  name: "dispatch.invoice_decision",
  summary: "Approve, reject or send back an invoice",
  description:
    "Decides the contractor's invoice of one of your orders (status invoiced): approve it, reject it with " +
    "a reason_code (and a note; required with other), or request_revision with a note saying what to " +
    "change. Send the `version` you read (order.invoice) so a revision the contractor sent meanwhile is " +
    "not decided unseen (409 invoice_changed). Takes an approver's key (or an admin's: 403 " +
    "key_role_not_allowed for a requester); an approver approves up to its approval limit (403 " +
    "approval_limit_exceeded naming it). 409 invalid_transition when the invoice is not waiting for a " +
    "decision (approving twice, say). Sealed (order.invoice_decided); the event is order.approved, " +
    "order.invoice_rejected or order.revision_requested. Answers the invoice.",
  access: "key",
  role: "approver",
  effect: "write",
  limit: "key",
  http: { method: "POST", path: "/api/dispatch/v1/orders/invoice-decision", input: "body" },
  problems: [404, 409],
  input: z.strictObject({
    order_id: orderId,
    decision: z.enum(["approve", "reject", "request_revision"]),
    version: z.number().int().min(1).optional().describe("The invoice version you read (recommended)."),
    reason_code: z
      .enum(INVOICE_REJECTION_CODES)
      .optional()
      .describe("Why it is rejected (decision reject only)."),
    note: note.optional().describe("For the contractor: why, or what to change."),
  }),
  output: invoiceSchema,
  example: { order_id: "ord_0VberZOdAb12Cd34Ef56", decision: "approve", version: 1 },
  async handler(ctx, input) {
    const errors = decisionFaults(input);
    if (errors.length > 0) throw validationError(errors);
    const principal = principalOf(ctx);
    const order = await ownOrder(ctx, input.order_id);
    const decided = await decideInvoice(ctx.services, order.id, {
      verdict: input.decision,
      role: "caller",
      version: input.version ?? null,
      limitCents: approvalLimit(principal.role, principal.approvalLimitCents),
      reasonCode: (input.reason_code ?? null) as InvoiceRejectionCode | null,
      note: input.note ?? null,
      actor: `key:${principal.keyId}`,
    });
    return invoiceView(ctx, decided);
  },
});

export const invoicePaidOperation = defineOperation({
  id: "dispatchInvoicePaid",
  name: "dispatch.invoice_paid",
  summary: "Record the payment of an approved invoice",
  description:
    "Records that you paid the approved invoice of one of your orders: your payment reference and the " +
    "date you paid (YYYY-MM-DD, not in the future, not before the approval). The service records " +
    "payments; it moves no money. 409 invalid_transition unless the invoice is approved (paying an " +
    "unapproved invoice, or paying twice). Takes an approver's or an admin's key. Sealed " +
    "(order.invoice_paid); the event is order.paid. Answers the invoice.",
  access: "key",
  role: "approver",
  effect: "write",
  limit: "key",
  http: { method: "POST", path: "/api/dispatch/v1/orders/invoice-paid", input: "body" },
  problems: [404, 409],
  input: z.strictObject({
    order_id: orderId,
    payment_reference: z.string().trim().min(1).max(100).describe("Your reference: a cheque or transfer id."),
    paid_on: z.string().max(10).describe("The date you paid, YYYY-MM-DD."),
    note: note.optional(),
  }),
  output: invoiceSchema,
  example: {
    order_id: "ord_0VberZOdAb12Cd34Ef56",
    payment_reference: "ACH-2026-11-0042",
    paid_on: "2026-11-27",
  },
  async handler(ctx, input) {
    const principal = principalOf(ctx);
    const order = await ownOrder(ctx, input.order_id);
    const paid = await payInvoice(ctx.services, order.id, {
      paymentReference: input.payment_reference,
      paidOn: input.paid_on,
      note: input.note ?? null,
      actor: `key:${principal.keyId}`,
    });
    return invoiceView(ctx, paid);
  },
});

const policySchema = z
  .object({
    auto_approve_below_cents: z
      .number()
      .int()
      .nullable()
      .describe(
        "An invoice with no flagged check and a total below this is approved at once by the service " +
          "(a sealed decision of its own, by_policy); null: every invoice waits for an approver.",
      ),
    updated_at: z.iso.datetime().nullable(),
    record: sealRefSchema.nullable().describe("The audit record that set it (account.invoice_policy_set)."),
  })
  .meta({ id: "InvoicePolicy" });

function policyView(row: InvoicePolicyRow | undefined, ctx: OperationContext) {
  return {
    auto_approve_below_cents: row?.auto_approve_below_cents ?? null,
    updated_at: row?.updated_at ?? null,
    record: row ? sealRef(ctx.baseUrl, row.seal, "account.invoice_policy_set", row.updated_at) : null,
  };
}

export const invoicePolicyOperation = defineOperation({
  id: "dispatchInvoicePolicy",
  name: "dispatch.invoice_policy",
  summary: "Your invoice policy",
  description:
    "Your account's invoice policy for this key's mode: the amount below which an invoice with no " +
    "flagged check is approved at once. None until you set it (every invoice waits for an approver).",
  access: "key",
  effect: "read",
  limit: "key",
  http: { method: "GET", path: "/api/dispatch/v1/invoice-policy", input: "query" },
  input: z.strictObject({}),
  output: policySchema,
  example: {},
  async handler(ctx) {
    const principal = principalOf(ctx);
    return policyView(
      await ctx.services.store.invoicePolicies.get(principal.accountId, principal.livemode),
      ctx,
    );
  },
});

export const invoicePolicySetOperation = defineOperation({
  id: "dispatchInvoicePolicySet",
  name: "dispatch.set_invoice_policy",
  summary: "Auto-approve clean invoices below an amount",
  description:
    "Sets the amount below which an invoice with no flagged check (within the NTE, near the estimate, " +
    "labour hours and rate plausible, proof complete) is approved at once when the contractor sends it; " +
    "null turns it off. Applies to invoices sent from now on. Takes an admin's key. Sealed " +
    "(account.invoice_policy_set).",
  access: "key",
  role: "admin",
  effect: "write",
  setsState: true,
  limit: "key",
  http: { method: "POST", path: "/api/dispatch/v1/invoice-policy", input: "body" },
  input: z.strictObject({
    auto_approve_below_cents: z.number().int().min(1).max(INVOICE_LIMITS.totalCents).nullable(),
  }),
  output: policySchema,
  example: { auto_approve_below_cents: 50_000 },
  async handler(ctx, input) {
    const { store } = ctx.services;
    const row = await setAccountSetting<{ auto_approve_below_cents: number | null }>(ctx, {
      kind: "account.invoice_policy_set",
      read: (account, livemode, tx) => store.invoicePolicies.get(account, livemode, tx),
      values: () => ({ auto_approve_below_cents: input.auto_approve_below_cents }),
      write: (next, tx) => store.invoicePolicies.set(next, tx),
    });
    return policyView(row, ctx);
  },
});
