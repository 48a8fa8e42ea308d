// The account's decisions on its contractor's invoice (issue 33): approve (by an approver within its
// limit, or by the account's auto-approval policy), reject with a reason code, send back for a revision,
// and record the payment of an approved invoice. Each is a transition of the order's one table
// (transitions.ts), stored as a decision row with the order's change and sealed in its audit record. Pure.

import { type CommandContext, changeOf, refuse } from "./commands.js";
import type {
  InvoiceDecision,
  InvoiceDecisionKind,
  InvoiceRejectionCode,
  InvoiceVersion,
} from "./invoice.js";
import { paidOnFault } from "./invoice.js";
import type { Actor, Decision, OrderState, Refusal } from "./order.js";
import type { OrderStatus } from "./statuses.js";
import { type Action, allowedActions, type Role, TRANSITIONS } from "./transitions.js";

export type InvoiceVerdict = "approve" | "reject" | "request_revision";

const DECIDED: Readonly<Record<InvoiceVerdict, InvoiceDecisionKind>> = {
  approve: "approved",
  reject: "rejected",
  request_revision: "revision_requested",
};

/** The status `action` by `role` leads to, or the refusal naming what is possible now. */
function step(current: OrderStatus, action: Action, role: Role): OrderStatus | Refusal {
  const t = TRANSITIONS.find((x) => x.action === action && x.from.includes(current) && x.by.includes(role));
  if (t) return t.to;
  const allowed = allowedActions(current, role);
  const what = current === "completed" ? " (the contractor has not invoiced it yet)" : "";
  return refuse(
    "invalid_transition",
    `The order is ${current}${what}: ${action} is not possible now${allowed.length ? ` (possible: ${allowed.join(", ")})` : ""}.`,
    { currentStatus: current },
  );
}

const isRefusal = (x: unknown): x is Refusal => typeof x === "object" && x !== null && "kind" in x;

/** The account approves, rejects or sends back the latest version of the invoice. */
export function decideInvoice(
  state: OrderState,
  cmd: {
    verdict: InvoiceVerdict;
    role: "caller" | "system";
    /** The latest version stored (null: none, an invoice from before versions were kept, as version 1). */
    latest: InvoiceVersion | null;
    /** The version the decider read, when it names one: a newer one refuses (invoice_changed). */
    version: number | null;
    /** The most the decider may approve; null: no limit. */
    limitCents: number | null;
    reasonCode: InvoiceRejectionCode | null;
    note: string | null;
    actor: Actor;
    /** For an approval by the account's policy: the threshold it applied. */
    policy?: { auto_approve_below_cents: number; flags: number };
  },
  ctx: CommandContext,
): Decision {
  const { order } = state;
  const status = step(order.status, cmd.verdict, cmd.role);
  if (isRefusal(status)) return status;
  const version = cmd.latest?.version ?? 1;
  const total = cmd.latest?.total_cents ?? order.invoice_cents ?? 0;
  if (cmd.version !== null && cmd.version !== version) {
    return refuse(
      "invoice_changed",
      `You decided version ${cmd.version} of the invoice; the contractor has sent version ${version} (${total} cents) since: read it again.`,
      { extra: { version, total_cents: total } },
    );
  }
  if (cmd.verdict === "approve" && cmd.limitCents !== null && total > cmd.limitCents) {
    return refuse(
      "approval_limit_exceeded",
      `The invoice's total (${total} cents) is above this key's approval limit (${cmd.limitCents} cents): an approver with a higher limit, or an admin, approves it.`,
      { extra: { approval_limit_cents: cmd.limitCents, total_cents: total } },
    );
  }
  const at = ctx.now.toISOString();
  const decision: InvoiceDecision = {
    id: ctx.newId("ivd"),
    order_id: order.id,
    version,
    decision: DECIDED[cmd.verdict],
    total_cents: total,
    reason_code: cmd.reasonCode,
    note: cmd.note,
    payment_reference: null,
    paid_on: null,
    decided_at: at,
    decided_by: cmd.actor,
  };
  const sealed = {
    decision: decision.decision,
    version,
    total_cents: total,
    reason_code: cmd.reasonCode,
    note: cmd.note,
    ...(cmd.limitCents !== null ? { approval_limit_cents: cmd.limitCents } : {}),
    ...(cmd.policy ? { policy: cmd.policy } : {}),
  };
  return changeOf(
    order,
    { status, updated_at: at },
    {
      invoiceDecision: decision,
      audit: [{ kind: "order.invoice_decided", actor: cmd.actor, at, data: sealed }],
      event: {
        type: `order.${status}` as "order.approved",
        at,
        details: { previous_status: order.status, invoice: invoiceDetails(decision) },
      },
    },
  );
}

/** The account records that it paid the approved invoice: a reference and the date it paid. */
export function payInvoice(
  state: OrderState,
  cmd: {
    approval: InvoiceDecision | null;
    paymentReference: string;
    paidOn: string;
    note: string | null;
    actor: Actor;
  },
  ctx: CommandContext,
): Decision {
  const { order } = state;
  const status = step(order.status, "pay", "caller");
  if (isRefusal(status)) return status;
  const approval = cmd.approval;
  if (!approval) throw new Error(`order ${order.id} is approved without an approval stored`);
  const fault = paidOnFault(cmd.paidOn, ctx.now, approval.decided_at);
  if (fault) {
    return refuse("validation_failed", `Invalid request: paid_on ${fault}.`, {
      errors: [{ field: "paid_on", message: fault }],
    });
  }
  const at = ctx.now.toISOString();
  const decision: InvoiceDecision = {
    ...approval,
    id: ctx.newId("ivd"),
    decision: "paid",
    reason_code: null,
    note: cmd.note,
    payment_reference: cmd.paymentReference,
    paid_on: cmd.paidOn,
    decided_at: at,
    decided_by: cmd.actor,
  };
  const sealed = {
    version: decision.version,
    total_cents: decision.total_cents,
    payment_reference: cmd.paymentReference,
    paid_on: cmd.paidOn,
    note: cmd.note,
  };
  return changeOf(
    order,
    { status, updated_at: at },
    {
      invoiceDecision: decision,
      audit: [{ kind: "order.invoice_paid", actor: cmd.actor, at, data: sealed }],
      event: {
        type: "order.paid",
        at,
        details: { previous_status: order.status, invoice: invoiceDetails(decision) },
      },
    },
  );
}

/** What an invoice event tells a webhook (no note: free text stays in the record and the API). */
function invoiceDetails(d: InvoiceDecision) {
  return {
    version: d.version,
    total_cents: d.total_cents,
    decision: d.decision,
    reason_code: d.reason_code,
    ...(d.payment_reference ? { payment_reference: d.payment_reference, paid_on: d.paid_on } : {}),
  };
}
