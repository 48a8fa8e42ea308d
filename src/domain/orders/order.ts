// The work order aggregate's values: the order, its offers and its NTE requests, and what a command
// decides: an OrderChange to commit, or a Refusal to answer. Pure types, and the closed lists of the audit
// kinds an order's commands write and the events its changes report. The rows they are stored as, and the
// mapping to and from them, are storage's (storage/order-rows.ts).

import type { ErrorCode, FieldError } from "../../errors.js";
import type { EtaTier } from "../matching.js";
import type { Urgency } from "../pricing.js";
import type { WindowSource } from "../time/service-window.js";
import type { TradeCode } from "../trades.js";
import type { InvoiceDecision, InvoiceVersion } from "./invoice.js";
import type { SiteCheck } from "./site-check.js";
import type { OrderEventType } from "./statuses.js";
import type { OrderStatus } from "./transitions.js";

/**
 * A work order. Every field is stated, a new order's too (createOrder in commands.ts decides them).
 * Field names are the columns' and the API's (snake_case); times are ISO-8601 UTC text, as stored and as
 * the API shows them (they compare as text: every one is written by Date#toISOString).
 */
export interface Order {
  id: string;
  account_id: string;
  /** false for a sandbox order (made with a test key). */
  livemode: boolean;
  status: OrderStatus;
  trade: TradeCode;
  urgency: Urgency;
  state: string;
  zip: string | null;
  city: string | null;
  address: string | null;
  location_name: string | null;
  description: string;
  nte_cents: number | null;
  callback_url: string | null;
  reference_id: string | null;
  contractor_id: string | null;
  estimated_cost_cents: number;
  currency: string;
  eta_tier: EtaTier | null;
  match_score: number | null;
  received_at: string;
  matched_at: string | null;
  dispatch_latency_ms: number | null;
  created_at: string;
  updated_at: string;
  /** The contractor ids considered at creation, best first: the order offers go in. Null when not read
   * (the event log's copy of an order leaves it out). */
  ranking: readonly string[] | null;
  accepted_at: string | null;
  /** When the contractor on its way expects to arrive. */
  eta_at: string | null;
  /** When the contractor holding the job reported itself on site (cleared with eta_at by an assignment,
   * so both are the current contractor's). */
  on_site_at: string | null;
  /** Where the contractor's phone was when it reported "on site" and "completed", and how far from the
   * site (domain/orders/site-check.ts); null until reported (check_in cleared with on_site_at). */
  check_in: SiteCheck | null;
  check_out: SiteCheck | null;
  completed_at: string | null;
  final_cost_cents: number | null;
  /** Why the order was cancelled or could not be completed. */
  status_reason: string | null;
  /** The NTE raised by the caller's approval of a contractor's request, when one was approved. */
  nte_approved_cents: number | null;
  invoice_cents: number | null;
  invoiced_at: string | null;
  /** Every dispatcher assignment of this order, of any kind (manual_dispatch_count and redispatch_count
   * say how many were which, the rest replaced the contractor the order was with). */
  override_count: number;
  /** How long the in-memory match took (ranking the pool for the job, no I/O), in milliseconds. */
  matching_time_ms: number | null;
  /** The order's first acceptance (by its contractor, or a dispatcher's assignment); accepted_at is the
   * last one, moved by each reassignment. */
  first_accepted_at: string | null;
  /** Offers of the cascade: made, declined by their contractor, expired unanswered. */
  offers_made: number;
  offers_declined: number;
  offers_expired: number;
  /** The attempt (1 = the first contractor offered the job) whose offer was accepted, if one was. */
  accepted_offer_attempt: number | null;
  /** Assignments by a dispatcher of an order automation could not place (from needs_dispatcher). */
  manual_dispatch_count: number;
  /** Assignments by a dispatcher after the contractor could not complete the job (from cannot_complete). */
  redispatch_count: number;
  /** The job's local time zone, IANA (null for orders created before it was kept, migration 0017). */
  time_zone: string | null;
  /** The arrival window of windowed work (routine with a window, or scheduled), UTC, and whether the
   * caller asked for it ("requested") or the service gave the earliest ("earliest"). */
  window_start: string | null;
  window_end: string | null;
  window_source: WindowSource | null;
  /** For as-soon-as-possible work, the urgency's service level: a contractor committed by, on site by. */
  respond_by: string | null;
  arrive_by: string | null;
  /** When each service-level clock fired its at-risk and breached event (domain/orders/sla-clocks.ts):
   * set once by the change that fires it. */
  sla_respond_at_risk_at: string | null;
  sla_respond_breached_at: string | null;
  sla_arrive_at_risk_at: string | null;
  sla_arrive_breached_at: string | null;
  /** The earlier order of the caller's this one is a recall of: a callback to the same site for the same
   * trade within 30 days of that job's completion (domain/orders/recall.ts); null for any other order. */
  recall_of: string | null;
  /** Bumped by every change of the order, its offers or its NTE requests (0 for a new order): a write
   * that read an older version matches no row. */
  version: number;
  /** The price an accepted counter-offer agreed (counter-rules.ts), in cents: what the job is billed
   * against instead of the estimate; null when no counter was accepted. */
  agreed_price_cents: number | null;
}

/** The columns a change of an existing order may set: not its identity, its mode, its ranking or the order
 * it recalls (fixed when it is created), nor its version (the writer's). */
export type OrderPatch = Partial<
  Omit<Order, "id" | "account_id" | "livemode" | "ranking" | "version" | "recall_of">
>;

export type NteRequestStatus = "pending" | "approved" | "rejected";

/** A contractor's request to raise an order's NTE, and the caller's decision. */
export interface NteRequest {
  id: string;
  order_id: string;
  contractor_id: string;
  requested_cents: number;
  reason: string;
  status: NteRequestStatus;
  created_at: string;
  decided_at: string | null;
  decision_reason: string | null;
}

/** "countered": the contractor answered with a counter-offer (its outcome is the counter's). */
export type OfferStatus = "pending" | "accepted" | "declined" | "expired" | "withdrawn" | "countered";

/** A job offered to one contractor, with its deadline: the cascade's steps. */
export interface Offer {
  id: string;
  order_id: string;
  contractor_id: string;
  livemode: boolean;
  /** 1 for the first contractor offered the job, 2 for the next, ... */
  attempt: number;
  status: OfferStatus;
  offered_at: string;
  deadline_at: string;
  responded_at: string | null;
  reason: string | null;
}

export type CounterStatus = "pending" | "accepted" | "declined" | "expired" | "withdrawn";

/** A contractor's counter to its offer: a price and/or an arrival window, waiting on the account until
 * its own deadline (one per offer: the offer's id is the counter's). */
export interface CounterOffer {
  offer_id: string;
  order_id: string;
  contractor_id: string;
  livemode: boolean;
  price_cents: number | null;
  window_start: string | null;
  window_end: string | null;
  note: string | null;
  status: CounterStatus;
  created_at: string;
  deadline_at: string;
  decided_at: string | null;
  /** Who answered it: the account's key, its policy (system:counter-policy), or the sweeper. */
  decided_by: string | null;
  reason: string | null;
}

/** A pending counter's outcome. */
export interface CounterSettlement {
  offer_id: string;
  status: Exclude<CounterStatus, "pending">;
  at: string;
  by: Actor;
  reason: string | null;
}

/** Who took a decision: an API key, a contractor, an operator (CLI or dispatcher), or the service. */
export type Actor = `key:${string}` | `operator:${string}` | `contractor:${string}` | `system:${string}`;

/** The order and what its commands read with it. */
export interface OrderState {
  order: Order;
  /** Every offer of the order, first attempt first. */
  offers: readonly Offer[];
}

/** The audit kinds an order's commands write (audit/kinds.ts describes each: one list). */
const ORDER_AUDIT_KINDS = [
  "order.created",
  "order.matched",
  "order.unmatched",
  "order.offered",
  "order.offer_declined",
  "order.offer_expired",
  "order.needs_dispatcher",
  "order.accepted",
  "order.status_changed",
  "order.cancelled",
  "order.nte_requested",
  "order.nte_decided",
  "order.invoiced",
  "order.invoice_revised",
  "order.invoice_decided",
  "order.invoice_paid",
  "order.assigned",
  "order.sla_at_risk",
  "order.sla_breached",
  "order.rescheduled",
  "order.countered",
  "order.counter_accepted",
  "order.counter_declined",
  "order.counter_expired",
  "order.maintenance_overdue",
] as const;
export type OrderAuditKind = (typeof ORDER_AUDIT_KINDS)[number];

/** One audit record a change writes (sealed by the writer's caller, in the change's transaction). */
export interface AuditFact {
  kind: OrderAuditKind;
  actor: Actor;
  at: string;
  data: Record<string, unknown>;
}

/** The webhook event a change reports, about the order as it is after the change. */
export interface OrderEvent {
  type: OrderEventType;
  at: string;
  details: { previous_status: string | null; [key: string]: unknown };
}

export interface OfferSettlement {
  id: string;
  status: Exclude<OfferStatus, "pending">;
  at: string;
  reason: string | null;
}

/**
 * What a command decided: the order after the change and everything that changes with it, committed
 * together by one writer (storage/order-writer.ts) in one transaction, or not at all.
 */
export interface OrderChange {
  kind: "change";
  /** The order as the command read it (its version is the one the write must still find); null when the
   * change creates the order. */
  before: Order | null;
  /** The order after the change (its version is the next one). */
  after: Order;
  /** The columns that change (all of them for a new order). */
  patch: OrderPatch;
  offers: { create: Offer[]; settle: OfferSettlement[] };
  nte: {
    create: NteRequest | null;
    decide: { id: string; status: "approved" | "rejected"; at: string; reason: string | null } | null;
  };
  /** Contractors whose capacity this change takes (an offer or a job) and gives back; `retime`: the
   * contractors whose block of time for this order is placed again (its window moved), strictly. */
  capacity: { take: string[]; release: string[]; retime?: string[] };
  /** A version of the job's itemised invoice this change writes (the invoice, or a revision). */
  invoice?: InvoiceVersion;
  /** The account's decision on the invoice this change writes (approved, rejected, sent back, paid). */
  invoiceDecision?: InvoiceDecision;
  /** A counter-offer this change makes, or settles (accepted, declined, expired, withdrawn). */
  counter?: { create?: CounterOffer; settle?: CounterSettlement };
  audit: AuditFact[];
  event: OrderEvent | null;
}

/** A command refused, as the closed error set says it (no exception: refusals are expected outcomes). */
export interface Refusal {
  kind: "refused";
  code: ErrorCode;
  message: string;
  /** The order's (or the offer's) status at the refusal, for 409s. */
  currentStatus?: string;
  errors?: FieldError[];
  extra?: Record<string, unknown>;
}

export type Decision = OrderChange | Refusal;
