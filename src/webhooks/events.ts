// Webhook events (Standard Webhooks, https://www.standardwebhooks.com): the closed list of event types,
// the envelope every delivery sends, the signature, and the retry schedule.
//
// - `webhook-id` is the event's id (msg_...), the same on every attempt: receivers deduplicate on it.
// - `webhook-timestamp` is the attempt's time in Unix seconds; receivers reject stale ones (replays).
// - `webhook-signature` is `v1,<base64 HMAC-SHA256 of "<id>.<timestamp>.<body>">`, keyed with the
//   base64-decoded part of the account's `whsec_` secret. During a rotation's overlap every current
//   secret signs, space-separated, so a receiver holding either secret verifies.

import { createHmac, randomBytes } from "node:crypto";
import { ORDER_EVENT_TYPES, type OrderEventType } from "../domain/orders/statuses.js";
import type { OrderStatus } from "../domain/orders/transitions.js";

/** The event types: the order's events (domain/orders): one type per status a change leads to, the NTE
 * ones, and the service-level clocks'. */
export const WEBHOOK_EVENT_TYPES = ORDER_EVENT_TYPES;

export type WebhookEventType = OrderEventType;

export const WEBHOOK_EVENT_DESCRIPTIONS: Record<WebhookEventType, string> = {
  "order.offered": "The order was created and its job offered to the best-ranked contractor.",
  "order.accepted":
    "A contractor holds the job: it accepted the offer, or a dispatcher assigned or reassigned it.",
  "order.en_route": "The contractor is on the way (data.order.eta_at says when it expects to arrive).",
  "order.on_site": "The contractor is on site.",
  "order.completed":
    "The work is done (data.order.final_cost_cents); data.order.report_url links the service report (PDF).",
  "order.invoiced":
    "The contractor invoiced the job (data.order.invoice_cents; its lines: GET /api/orders/{order_id}/invoice).",
  "order.invoice_revised":
    "The contractor revised its invoice before approval (data.order.invoice_cents is the new total; data.invoice: the version, total and previous total).",
  "order.revision_requested":
    "The account sent the invoice back for a revision (data.invoice: the version and total; the note is in GET /api/orders/{order_id}/invoice).",
  "order.invoice_rejected":
    "The account rejected the invoice (data.invoice.reason_code); the contractor may send a revision.",
  "order.approved":
    "The invoice was approved (data.invoice: the version and total), by an approver or by the account's auto-approval policy.",
  "order.paid":
    "The account recorded its payment of the approved invoice (data.invoice.payment_reference and paid_on).",
  "order.needs_dispatcher": "No contractor took the job: a dispatcher will assign one.",
  "order.cancelled": "The order was cancelled (data.order.status_reason).",
  "order.cannot_complete":
    "The contractor could not complete the job (data.order.status_reason); a dispatcher takes over.",
  "order.nte_requested":
    "The contractor asks for a higher NTE (data.nte_request): approve or reject it with dispatchNteDecision.",
  "order.nte_approved": "The NTE increase was approved: data.order.nte_approved_cents is in force.",
  "order.nte_rejected": "The NTE increase was rejected.",
  "order.sla_at_risk":
    "A service-level clock is at risk (data.sla: which clock, why, its deadline and the time used): 80 % of " +
    "its time has passed with no acceptance (respond) or nobody on site (arrive), or the contractor's ETA " +
    "is after the deadline. Once per clock and order; the status does not change.",
  "order.sla_breached":
    "A service-level clock passed its deadline with its step not done, or the step was done late " +
    "(data.sla). Once per clock and order; the status does not change.",
  "order.countered":
    "The contractor offered the job answered with a counter-offer (data.counter: its price_cents and/or " +
    "arrival_window, note and deadline_at): accept it with dispatch.counter_accept (the order becomes " +
    "accepted at that price/window) or decline it with dispatch.counter_decline before the deadline. The " +
    "status stays offered.",
  "order.counter_declined":
    "You declined the counter-offer (data.counter): the job was offered to the next contractor (a decline " +
    "that ends the cascade is sent as order.needs_dispatcher, with data.counter).",
  "order.counter_expired":
    "The counter-offer's deadline passed unanswered (data.counter): the job was offered to the next " +
    "contractor (or, the cascade run out, order.needs_dispatcher with data.counter).",
  "order.maintenance_overdue":
    "A planned order is overdue: the window of its maintenance plan's occurrence (data.maintenance: plan_id, " +
    "occurrence_key, window) ended with the order not done. Once per order; the status does not change.",
  "order.rescheduled":
    "The dispatch team moved the arrival window (data.order.arrival_window is the new one, " +
    "data.previous_window the old, data.reason why); the contractor holding the job keeps it. The status " +
    "does not change.",
};

export function statusEventType(status: OrderStatus): WebhookEventType {
  return `order.${status}` as WebhookEventType;
}

/** The body of every delivery of one event. */
export interface WebhookEnvelope {
  id: string;
  type: WebhookEventType;
  created_at: string;
  livemode: boolean;
  data: {
    order: Record<string, unknown>;
    previous_status: string | null;
    [key: string]: unknown;
  };
}

const SECRET_PREFIX = "whsec_";

/** A new signing secret: whsec_ + base64 of 32 random bytes (the Standard Webhooks form). */
export function newWebhookSecret(): string {
  return SECRET_PREFIX + randomBytes(32).toString("base64");
}

function secretKey(secret: string): Buffer {
  return Buffer.from(
    secret.startsWith(SECRET_PREFIX) ? secret.slice(SECRET_PREFIX.length) : secret,
    "base64",
  );
}

/** The webhook-signature header: one `v1,<signature>` per secret, space-separated. */
export function signatureHeader(
  secrets: readonly string[],
  id: string,
  timestampSeconds: number,
  body: string,
): string {
  const content = `${id}.${timestampSeconds}.${body}`;
  return secrets
    .map((secret) => `v1,${createHmac("sha256", secretKey(secret)).update(content).digest("base64")}`)
    .join(" ");
}

/**
 * Delay before each retry, in ms, after the first attempt (which is immediate): about three days in all
 * (5 s, 5 min, 30 min, 2 h, 5 h, 10 h, 14 h, 20 h, 24 h: 75.6 h), each with +-20% jitter so that
 * deliveries failed together do not retry together. After the last, the delivery has failed.
 */
export const RETRY_DELAYS_MS = [
  5_000,
  5 * 60_000,
  30 * 60_000,
  2 * 3_600_000,
  5 * 3_600_000,
  10 * 3_600_000,
  14 * 3_600_000,
  20 * 3_600_000,
  24 * 3_600_000,
] as const;

/** Attempts a delivery gets: the first plus one per retry delay. */
export const MAX_ATTEMPTS = RETRY_DELAYS_MS.length + 1;

/** The longest wait a Retry-After may ask for: beyond it the schedule's own delay stands. */
const MAX_RETRY_AFTER_MS = 24 * 3_600_000;

/**
 * When to try again after failed attempt number `attempt` (1-based), or null when the schedule is done.
 * A Retry-After (seconds or an HTTP date) longer than the schedule's delay is honoured, up to a day.
 */
export function nextAttemptAt(
  attempt: number,
  now: Date,
  retryAfter: string | undefined,
  random: () => number = Math.random,
): Date | null {
  const base = RETRY_DELAYS_MS[attempt - 1];
  if (base === undefined) return null;
  let delay = Math.round(base * (0.8 + 0.4 * random()));
  const asked = retryAfterMs(retryAfter, now);
  if (asked !== null && asked > delay) delay = Math.min(asked, MAX_RETRY_AFTER_MS);
  return new Date(now.getTime() + delay);
}

/** A Retry-After header's wait in ms (delta-seconds or an HTTP date, RFC 9110 10.2.3); null if absent or bad. */
function retryAfterMs(value: string | undefined, now: Date): number | null {
  if (value === undefined) return null;
  const trimmed = value.trim();
  if (/^\d+$/.test(trimmed)) return Number(trimmed) * 1000;
  const date = Date.parse(trimmed);
  if (Number.isNaN(date)) return null;
  return Math.max(0, date - now.getTime());
}
