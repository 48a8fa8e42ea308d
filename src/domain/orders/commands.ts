// The work order's commands. Each is a pure function of the order's current state, the command and the
// clock: it returns a Refusal (the closed error codes, as a value) or the OrderChange to commit (the new
// status and fields, the offers made and settled, the NTE request, the capacity taken and given back, the
// audit facts and the webhook event). No I/O: storage/order-writer.ts commits a change, and
// operations/orders/command-runner.ts reads the state, calls these and commits.
//
// Capacity is the store's: a change says which contractors it takes a unit of; when the writer finds one
// has none left (another order took it meanwhile), the command is decided again with that contractor in
// `unavailable`, so the cascade moves down the ranking as if it had never been free.

import { AVAILABILITY_MAX_DAYS } from "../availability.js";
import { complianceIssues, dayOf, describeIssues } from "../compliance.js";
import type { EtaTier } from "../matching.js";
import {
  type ServicePromise,
  servicePromise,
  type TimeWindow,
  windowIssues,
} from "../time/service-window.js";
import { type CompletionRequirements, completionRefusal } from "./checklist.js";
import { withdrawnCounter } from "./counter-rules.js";
import { type StartConflict, startIssues, startIssuesRefusal, startRefusal } from "./exact-start.js";
import { type InvoiceVersion, type Itemised, unitemised } from "./invoice.js";
import type {
  Actor,
  AuditFact,
  CounterSettlement,
  Decision,
  NteRequest,
  Offer,
  OfferSettlement,
  Order,
  OrderChange,
  OrderEvent,
  OrderPatch,
  OrderState,
  Refusal,
} from "./order.js";
import { MAX_OFFERS, nteInForce, offerDeadline } from "./policy.js";
import { type ReportedPosition, type SiteCheck, type SitePoint, siteCheck } from "./site-check.js";
import type { OrderEventType } from "./statuses.js";
import {
  type Action,
  holdsContractor,
  type OrderStatus,
  type Role,
  TRANSITIONS,
  transition,
} from "./transitions.js";

/** What every command is decided against besides the state: the clock, ids, and the writer's findings. */
export interface CommandContext {
  now: Date;
  /** Contractors the writer found without capacity (or not eligible) in this transaction. */
  unavailable: ReadonlySet<string>;
  /** Why the writer found a contractor in `unavailable` without room for a job at an exact start (the
   * schedule board's): the conflict its refusal names. No entry: no room by count, or no exact start. */
  unavailableWhy?: ReadonlyMap<string, StartConflict>;
  /** Whether the sandbox's simulated contractors play sandbox offers (their deadlines are short then). */
  sandboxPlayed: boolean;
  newId(prefix: "ofr" | "nte" | "ivd"): string;
}

export function refuse(
  code: Refusal["code"],
  message: string,
  more: Omit<Refusal, "kind" | "code" | "message"> = {},
): Refusal {
  return { kind: "refused", code, message, ...more };
}

/** The status `action` by `role` leads to, or the refusal naming the current status. */
function nextStatus(current: OrderStatus, action: Action, role: Role): OrderStatus | Refusal {
  const t = TRANSITIONS.find((x) => x.action === action && x.from.includes(current) && x.by.includes(role));
  if (t) return t.to;
  const allowed = [
    ...new Set(
      TRANSITIONS.filter((x) => x.from.includes(current) && x.by.includes(role)).map((x) => x.action),
    ),
  ];
  return refuse(
    "invalid_transition",
    `The order is ${current}: ${action} is not possible now${allowed.length ? ` (possible: ${allowed.join(", ")})` : ""}.`,
    { currentStatus: current },
  );
}

/** The statuses in which an NTE increase is asked and decided: the job is active (or done, not invoiced). */
const NTE_STATUSES: readonly OrderStatus[] = ["accepted", "en_route", "on_site", "completed"];

const isRefusal = (x: unknown): x is Refusal =>
  typeof x === "object" && x !== null && (x as Refusal).kind === "refused";

/** A contractor as its key presents it: which contractor, in which mode (a test key works on sandbox
 * orders, a live key on live ones). */
export interface ContractorKey {
  contractorId: string;
  livemode: boolean;
}

/** Whether an offer or a job is this contractor's, in its key's mode. */
function owns(key: ContractorKey, held: { contractor_id: string | null; livemode: boolean }): boolean {
  return held.contractor_id === key.contractorId && held.livemode === key.livemode;
}

function statusEvent(status: OrderStatus): OrderEventType {
  return `order.${status}` as OrderEventType;
}

/** A change of an existing order: `patch` applied, the version bumped; the rest filled in by `parts`. */
export function changeOf(
  order: Order,
  patch: OrderPatch,
  parts: Partial<Omit<OrderChange, "kind" | "before" | "after" | "patch">> = {},
): OrderChange {
  return {
    kind: "change",
    before: order,
    after: { ...order, ...patch, version: order.version + 1 },
    patch,
    offers: parts.offers ?? { create: [], settle: [] },
    nte: parts.nte ?? { create: null, decide: null },
    capacity: parts.capacity ?? { take: [], release: [] },
    ...(parts.invoice ? { invoice: parts.invoice } : {}),
    ...(parts.invoiceDecision ? { invoiceDecision: parts.invoiceDecision } : {}),
    ...(parts.counter ? { counter: parts.counter } : {}),
    audit: parts.audit ?? [],
    event: parts.event ?? null,
  };
}

/** The next offer of the cascade: the best-ranked contractor not yet tried and not unavailable. */
function nextOffer(
  order: Pick<Order, "id" | "livemode" | "urgency">,
  ranking: readonly string[],
  tried: ReadonlySet<string>,
  attempt: number,
  ctx: CommandContext,
): Offer | null {
  if (attempt > MAX_OFFERS) return null;
  for (const contractorId of ranking) {
    if (tried.has(contractorId) || ctx.unavailable.has(contractorId)) continue;
    return {
      id: ctx.newId("ofr"),
      order_id: order.id,
      contractor_id: contractorId,
      livemode: order.livemode,
      attempt,
      status: "pending",
      offered_at: ctx.now.toISOString(),
      deadline_at: offerDeadline(order.urgency, order.livemode, ctx.now, ctx.sandboxPlayed),
      responded_at: null,
      reason: null,
    };
  }
  return null;
}

function withdrawPending(offers: readonly Offer[], at: string, reason: string): OfferSettlement[] {
  return offers
    .filter((o) => o.status === "pending")
    .map((o) => ({ id: o.id, status: "withdrawn" as const, at, reason }));
}

// --- Creation ---------------------------------------------------------------------------------------

/** A ranked candidate as the order takes it: its id and what the order records of it. */
interface RankedChoice {
  contractorId: string;
  priceCents: number;
  etaTier: EtaTier;
  score: number;
}

/** What a new order takes from its request: the caller's job, and the order's id, account, mode, and
 * when the request arrived and the order was made. */
export type OrderRequest = Pick<
  Order,
  | "id"
  | "account_id"
  | "livemode"
  | "trade"
  | "urgency"
  | "state"
  | "zip"
  | "city"
  | "address"
  | "location_name"
  | "description"
  | "nte_cents"
  | "callback_url"
  | "reference_id"
  | "recall_of"
  | "received_at"
  | "created_at"
>;

export interface CreateOrder {
  /** The caller's request; the command decides every other column of the order. */
  request: OrderRequest;
  /** The matched candidates, best first: the ranking the cascade offers the job in. */
  candidates: readonly RankedChoice[];
  modelPriceCents: number;
  /** How long the in-memory match took, in milliseconds. (The dispatch latency, to the first offer
   * committed, is known only after the commit: it is stored then.) */
  matchingTimeMs: number;
  actor: Actor;
  /** The order.created record's data (the input as received, its idempotency key and reference). */
  createdData: Record<string, unknown>;
  /** The match's evidence for the order.matched / order.unmatched record (candidates and scores). */
  decisionData: Record<string, unknown>;
  /** The job's time zone and the caller's service window (already checked against the window rules);
   * for scheduled work without one, the earliest window the pool can serve, if any (null: none). */
  time: { timeZone: string; window: TimeWindow | null; earliest?: TimeWindow | null | undefined };
}

/** A new order: offered to the best-ranked candidate with capacity, or handed to a dispatcher. */
export function createOrder(cmd: CreateOrder, ctx: CommandContext): OrderChange {
  const nowIso = ctx.now.toISOString();
  const ranking = cmd.candidates.map((c) => c.contractorId);
  const offer = nextOffer(cmd.request, ranking, new Set(), 1, ctx);
  const chosen = offer ? (cmd.candidates.find((c) => c.contractorId === offer.contractor_id) ?? null) : null;
  const status = transition("received", chosen ? "offer" : "no_candidate", "system");
  // The time promised, from the order's creation (created_at, the same however often the command is
  // decided again): its window, or its urgency's service level.
  const { request, time } = cmd;
  const promise = servicePromise(
    {
      urgency: request.urgency,
      trade: request.trade,
      timeZone: time.timeZone,
      window: time.window,
      earliest: time.earliest,
    },
    new Date(request.created_at),
  );
  const order = newOrder(cmd, { status, chosen, offered: offer !== null, ranking, promise, at: nowIso });
  return {
    kind: "change",
    before: null,
    after: order,
    patch: order,
    offers: { create: offer ? [offer] : [], settle: [] },
    nte: { create: null, decide: null },
    capacity: { take: offer ? [offer.contractor_id] : [], release: [] },
    audit: creationAudit(cmd, order, chosen, offer, nowIso),
    event: { type: statusEvent(status), at: nowIso, details: { previous_status: "received" } },
  };
}

/** Why scheduled work that no contractor can take in any window of the search waits. */
const NO_WINDOW_REASON =
  `no contractor can take a window in the next ${AVAILABILITY_MAX_DAYS} days: the service's ` +
  "booking rule's window is stated and a dispatcher books the job";

/** The new order, every column decided: the request's, the match's, and a new order's counters. */
function newOrder(
  cmd: CreateOrder,
  made: {
    status: OrderStatus;
    chosen: RankedChoice | null;
    offered: boolean;
    ranking: readonly string[];
    promise: ServicePromise;
    at: string;
  },
): Order {
  const { request: r } = cmd;
  const { chosen, promise } = made;
  // Every field written out in the type's order, none spread: each order then has the one shape (a spread
  // followed by fifty more members built a new, slow shape per order, measured at 8 % of an order's CPU).
  return {
    id: r.id,
    account_id: r.account_id,
    livemode: r.livemode,
    status: made.status,
    trade: r.trade,
    urgency: r.urgency,
    state: r.state,
    zip: r.zip,
    city: r.city,
    address: r.address,
    location_name: r.location_name,
    description: r.description,
    nte_cents: r.nte_cents,
    callback_url: r.callback_url,
    reference_id: r.reference_id,
    contractor_id: chosen?.contractorId ?? null,
    estimated_cost_cents: chosen?.priceCents ?? cmd.modelPriceCents,
    currency: "USD",
    eta_tier: chosen?.etaTier ?? null,
    match_score: chosen?.score ?? null,
    received_at: r.received_at,
    matched_at: chosen ? made.at : null,
    dispatch_latency_ms: null,
    created_at: r.created_at,
    updated_at: r.created_at,
    // The cascade's order: the ranked candidates, best first.
    ranking: made.ranking,
    accepted_at: null,
    eta_at: null,
    on_site_at: null,
    check_in: null,
    check_out: null,
    completed_at: null,
    final_cost_cents: null,
    status_reason: cmd.time.earliest === null ? NO_WINDOW_REASON : null,
    nte_approved_cents: null,
    invoice_cents: null,
    invoiced_at: null,
    override_count: 0,
    matching_time_ms: cmd.matchingTimeMs,
    first_accepted_at: null,
    offers_made: made.offered ? 1 : 0,
    offers_declined: 0,
    offers_expired: 0,
    accepted_offer_attempt: null,
    manual_dispatch_count: 0,
    redispatch_count: 0,
    time_zone: promise.timeZone,
    window_start: promise.arrivalWindow?.start.toISOString() ?? null,
    window_end: promise.arrivalWindow?.end.toISOString() ?? null,
    window_source: promise.arrivalWindow?.source ?? null,
    respond_by: promise.respondBy?.toISOString() ?? null,
    arrive_by: promise.arriveBy?.toISOString() ?? null,
    sla_respond_at_risk_at: null,
    sla_respond_breached_at: null,
    sla_arrive_at_risk_at: null,
    sla_arrive_breached_at: null,
    recall_of: r.recall_of,
    version: 0,
    agreed_price_cents: null,
  };
}

/** A new order's records: order.created, then order.matched (or order.unmatched) with the time promised. */
function creationAudit(
  cmd: CreateOrder,
  order: Order,
  chosen: RankedChoice | null,
  offer: Offer | null,
  at: string,
): AuditFact[] {
  return [
    { kind: "order.created", actor: cmd.actor, at: order.received_at, data: cmd.createdData },
    {
      kind: chosen ? "order.matched" : "order.unmatched",
      actor: cmd.actor,
      at,
      data: {
        status: order.status,
        chosen: chosen?.contractorId ?? null,
        offer_deadline_at: offer?.deadline_at ?? null,
        estimated_cost_cents: order.estimated_cost_cents,
        model_price_cents: cmd.modelPriceCents,
        matching_time_ms: order.matching_time_ms,
        // The time promised, sealed with the decision.
        service_time: {
          time_zone: order.time_zone,
          arrival_window:
            order.window_start === null
              ? null
              : { start: order.window_start, end: order.window_end, source: order.window_source },
          respond_by: order.respond_by,
          arrive_by: order.arrive_by,
        },
        ...cmd.decisionData,
      },
    },
  ];
}

// --- Offers: the cascade, and the contractor's answer ------------------------------------------------

export interface SettleOffer {
  offerId: string;
  outcome: "declined" | "expired";
  actor: Actor;
  reason: string | null;
  /** Set when a contractor declines: the offer must be its own, in its key's mode. */
  decliner?: ContractorKey;
}

function notDeclinable(offerStatus: string): Refusal {
  return refuse("invalid_transition", `The offer is ${offerStatus}: it can no longer be declined.`, {
    currentStatus: offerStatus,
  });
}

/**
 * Settles a pending offer as declined or expired, gives its contractor's capacity back and offers the
 * job to the next contractor (or hands it to a dispatcher) when the order still waits on that offer.
 */
export function settleOffer(state: OrderState | null, cmd: SettleOffer, ctx: CommandContext): Decision {
  const offer = state?.offers.find((o) => o.id === cmd.offerId);
  if (!state || !offer || (cmd.decliner !== undefined && !owns(cmd.decliner, offer))) {
    return refuse("not_found", `You have no offer ${cmd.offerId}.`);
  }
  if (offer.status !== "pending") return notDeclinable(offer.status);
  const at = ctx.now.toISOString();
  if (cmd.outcome === "expired" && offer.deadline_at > at) {
    return refuse("invalid_transition", `The offer is pending until ${offer.deadline_at}.`, {
      currentStatus: offer.status,
    });
  }
  const { order } = state;
  const settled: AuditFact = {
    kind: cmd.outcome === "declined" ? "order.offer_declined" : "order.offer_expired",
    actor: cmd.actor,
    at,
    data: {
      offer_id: offer.id,
      contractor_id: offer.contractor_id,
      attempt: offer.attempt,
      reason: cmd.reason,
    },
  };
  const settle = [{ id: offer.id, status: cmd.outcome, at, reason: cmd.reason }];
  // The offer funnel (evals) counts each answer on the order.
  const counted: OrderPatch =
    cmd.outcome === "declined"
      ? { offers_declined: order.offers_declined + 1 }
      : { offers_expired: order.offers_expired + 1 };
  // The order moved on meanwhile (cancelled, assigned by hand): nothing more to offer.
  if (order.status !== "offered" || order.contractor_id !== offer.contractor_id) {
    return changeOf(order, counted, {
      offers: { create: [], settle },
      capacity: { take: [], release: [offer.contractor_id] },
      audit: [settled],
    });
  }
  return passOn(state, offer.contractor_id, { patch: counted, settle, audit: [settled] }, ctx);
}

/** What ends the offer to a contractor without a job: the order's columns it changes, the offers it
 * settles, its records, the counter it settles, and the event of a re-offer (none for an offer's own
 * answer: the order stays offered). */
export interface PassedOffer {
  patch: OrderPatch;
  settle: OfferSettlement[];
  audit: AuditFact[];
  counter?: { settle: CounterSettlement };
  reofferEvent?: OrderEvent;
  /** Added to the needs_dispatcher event's details when the cascade runs out. */
  details?: Record<string, unknown>;
}

/**
 * The job moves on from the contractor `from` it was offered to (an offer declined or expired, a
 * counter declined or expired): its capacity given back, and the job offered to the next-ranked
 * contractor not yet tried, or handed to a dispatcher when the cascade runs out.
 */
export function passOn(state: OrderState, from: string, done: PassedOffer, ctx: CommandContext): OrderChange {
  const { order } = state;
  const at = ctx.now.toISOString();
  const { settle, audit } = done;
  const counter = done.counter ? { counter: done.counter } : {};
  const next = nextOffer(
    order,
    order.ranking ?? [],
    new Set(state.offers.map((o) => o.contractor_id)),
    state.offers.length + 1,
    ctx,
  );
  const status = transition("offered", next ? "reoffer" : "exhaust", "system");
  const patch: OrderPatch = {
    status,
    contractor_id: next?.contractor_id ?? null,
    updated_at: at,
    ...done.patch,
    ...(next ? { offers_made: order.offers_made + 1 } : {}),
  };
  if (next) {
    return changeOf(order, patch, {
      offers: { create: [next], settle },
      capacity: { take: [next.contractor_id], release: [from] },
      ...counter,
      audit: [
        ...audit,
        {
          kind: "order.offered",
          actor: "system:dispatch",
          at,
          data: {
            offer_id: next.id,
            contractor_id: next.contractor_id,
            attempt: next.attempt,
            deadline_at: next.deadline_at,
          },
        },
      ],
      // A re-offer keeps the order offered: no event of its own (a counter's end has one).
      event: done.reofferEvent ?? null,
    });
  }
  return changeOf(order, patch, {
    offers: { create: [], settle },
    capacity: { take: [], release: [from] },
    ...counter,
    audit: [
      ...audit,
      {
        kind: "order.needs_dispatcher",
        actor: "system:dispatch",
        at,
        data: { offers_made: state.offers.length, max_offers: MAX_OFFERS },
      },
    ],
    event: {
      type: "order.needs_dispatcher",
      at,
      details: { previous_status: "offered", offers_made: state.offers.length, ...done.details },
    },
  });
}

/** A contractor accepts its pending offer: the order becomes accepted (the offer's hold becomes the job's). */
export function acceptOffer(
  state: OrderState | null,
  cmd: { offerId: string; contractor: ContractorKey; actor: Actor },
  ctx: CommandContext,
): Decision {
  const offer = state?.offers.find((o) => o.id === cmd.offerId);
  if (!state || !offer || !owns(cmd.contractor, offer)) {
    return refuse("not_found", `You have no offer ${cmd.offerId}.`);
  }
  const { order } = state;
  const at = ctx.now.toISOString();
  if (offer.status !== "pending" || offer.deadline_at <= at) {
    return refuse(
      "invalid_transition",
      `The offer is ${offer.status === "pending" ? "expired" : offer.status}: it can no longer be accepted.`,
      { currentStatus: order.status },
    );
  }
  const status = nextStatus(order.status, "accept", "contractor");
  if (isRefusal(status)) return status;
  return changeOf(
    order,
    {
      status,
      accepted_at: at,
      first_accepted_at: order.first_accepted_at ?? at,
      accepted_offer_attempt: offer.attempt,
      updated_at: at,
    },
    {
      offers: { create: [], settle: [{ id: offer.id, status: "accepted", at, reason: null }] },
      audit: [
        {
          kind: "order.accepted",
          actor: cmd.actor,
          at,
          data: { offer_id: offer.id, contractor_id: offer.contractor_id },
        },
      ],
      event: {
        type: "order.accepted",
        at,
        details: { previous_status: order.status, action: "accept" },
      },
    },
  );
}

// --- The contractor's job ----------------------------------------------------------------------------

export type ProgressReport =
  | { status: "en_route"; eta_minutes: number }
  | { status: "on_site"; position?: ReportedPosition | null }
  | { status: "completed"; final_cost_cents: number; position?: ReportedPosition | null }
  | { status: "cannot_complete"; reason: string };

const REPORT_ACTION: Record<ProgressReport["status"], Action> = {
  en_route: "depart",
  on_site: "arrive",
  completed: "complete",
  cannot_complete: "cannot_complete",
};

function jobOf(order: Order | null | undefined, contractor: ContractorKey, orderId: string): Order | Refusal {
  if (!order || !owns(contractor, order)) {
    return refuse("not_found", `You have no job ${orderId}.`);
  }
  return order;
}

/** Where the site is and how far from it a check may be before it is flagged (site-check.ts). */
export interface SiteReference {
  point: SitePoint | null;
  toleranceMiles: number;
}

/** The contractor on the job reports its progress; "on site" and "completed" are its check-in and
 * check-out, with the phone's position when it gave one. */
export function reportProgress(
  state: OrderState | null,
  cmd: {
    orderId: string;
    contractor: ContractorKey;
    report: ProgressReport;
    actor: Actor;
    site?: SiteReference;
    /** What the order needs for completion (read with it), for a report of `completed`; absent: nothing
     * (the command runner always reads it: operations/orders/checklist-state.ts). */
    completion?: CompletionRequirements;
  },
  ctx: CommandContext,
): Decision {
  const order = jobOf(state?.order, cmd.contractor, cmd.orderId);
  if (isRefusal(order)) return order;
  const { report } = cmd;
  const status = nextStatus(order.status, REPORT_ACTION[report.status], "contractor");
  if (isRefusal(status)) return status;
  if (report.status === "completed" && cmd.completion) {
    const missing = completionRefusal(cmd.completion);
    if (missing) return { ...missing, currentStatus: order.status };
  }
  const iso = ctx.now.toISOString();
  const patch: OrderPatch = { status, updated_at: iso };
  if (report.status === "en_route")
    patch.eta_at = new Date(ctx.now.getTime() + report.eta_minutes * 60_000).toISOString();
  let check: SiteCheck | null = null;
  if (report.status === "on_site" || report.status === "completed") {
    const site = cmd.site ?? { point: null, toleranceMiles: 0 };
    check = siteCheck(iso, report.position, site.point, site.toleranceMiles);
  }
  if (report.status === "on_site") {
    patch.on_site_at = iso;
    patch.check_in = check;
  }
  if (report.status === "completed") {
    patch.final_cost_cents = report.final_cost_cents;
    patch.completed_at = iso;
    patch.check_out = check;
  }
  if (report.status === "cannot_complete") patch.status_reason = report.reason;
  const { position: _position, ...reported } = report as ProgressReport & { position?: unknown };
  const frees = holdsContractor(order.status) && !holdsContractor(status);
  return changeOf(order, patch, {
    capacity: { take: [], release: frees ? [order.contractor_id as string] : [] },
    audit: [
      {
        kind: "order.status_changed",
        actor: cmd.actor,
        at: iso,
        // The check is sealed with the step it belongs to: the position as the phone gave it, the point
        // measured to, the distance and the flag.
        data: { from: order.status, ...reported, to: status, ...(check ? { site_check: check } : {}) },
      },
    ],
    event: { type: statusEvent(status), at: iso, details: { previous_status: order.status } },
  });
}

/** The contractor on an active job asks for a higher NTE. */
export function requestNte(
  state: OrderState | null,
  cmd: {
    orderId: string;
    contractor: ContractorKey;
    cents: number;
    reason: string;
    actor: Actor;
    /** The order's NTE requests so far. */
    requests: readonly NteRequest[];
  },
  ctx: CommandContext,
): Decision {
  const order = jobOf(state?.order, cmd.contractor, cmd.orderId);
  if (isRefusal(order)) return order;
  if (!NTE_STATUSES.includes(order.status)) {
    return refuse(
      "invalid_transition",
      `The order is ${order.status}: an NTE increase is asked on an active job.`,
      { currentStatus: order.status },
    );
  }
  const current = nteInForce(order);
  if (current === null) {
    return refuse("invalid_transition", "This job has no NTE: there is nothing to raise.", {
      currentStatus: order.status,
    });
  }
  if (cmd.cents <= current) {
    return refuse("validation_failed", "Invalid request: requested_nte_cents.", {
      errors: [{ field: "requested_nte_cents", message: `must exceed the NTE in force (${current})` }],
    });
  }
  if (cmd.requests.some((r) => r.status === "pending")) {
    return refuse("invalid_transition", "An NTE increase is already waiting for the caller's decision.", {
      currentStatus: order.status,
    });
  }
  const at = ctx.now.toISOString();
  const row: NteRequest = {
    id: ctx.newId("nte"),
    order_id: order.id,
    contractor_id: order.contractor_id as string,
    requested_cents: cmd.cents,
    reason: cmd.reason,
    status: "pending",
    created_at: at,
    decided_at: null,
    decision_reason: null,
  };
  const asked = { request_id: row.id, from_cents: current, requested_cents: cmd.cents, reason: cmd.reason };
  return changeOf(
    order,
    {},
    {
      nte: { create: row, decide: null },
      audit: [{ kind: "order.nte_requested", actor: cmd.actor, at, data: asked }],
      event: { type: "order.nte_requested", at, details: { previous_status: null, nte_request: asked } },
    },
  );
}

/** The contractor invoices a completed job, within the NTE in force: version 1 of its invoice, itemised
 * (or, given `cents` alone as the first API took it, one line of that total). */
export function invoiceJob(
  state: OrderState | null,
  cmd: { orderId: string; contractor: ContractorKey; actor: Actor } & (
    | { cents: number }
    | { invoice: Itemised }
  ),
  ctx: CommandContext,
): Decision {
  const order = jobOf(state?.order, cmd.contractor, cmd.orderId);
  if (isRefusal(order)) return order;
  const status = nextStatus(order.status, "invoice", "contractor");
  if (isRefusal(status)) return status;
  const itemised = "invoice" in cmd;
  const invoice = "invoice" in cmd ? cmd.invoice : unitemised(cmd.cents);
  const cents = invoice.total_cents;
  const limit = nteInForce(order);
  if (limit !== null && cents > limit) return overNte(cents, limit);
  const at = ctx.now.toISOString();
  const version: InvoiceVersion = {
    order_id: order.id,
    version: 1,
    ...invoice,
    created_at: at,
    created_by: cmd.actor,
  };
  return changeOf(
    order,
    { status, invoice_cents: cents, invoiced_at: at, updated_at: at },
    {
      invoice: version,
      audit: [
        {
          kind: "order.invoiced",
          actor: cmd.actor,
          at,
          data: {
            invoice_cents: cents,
            nte_in_force_cents: limit,
            ...(itemised ? itemisedData(version) : {}),
          },
        },
      ],
      event: { type: "order.invoiced", at, details: { previous_status: order.status } },
    },
  );
}

/**
 * The contractor revises its invoice before it is approved (the job is invoiced): the next version, within
 * the NTE in force. `previous`: the latest version stored (none for an invoice made before versions were
 * kept, which counts as version 1).
 */
export function reviseInvoice(
  state: OrderState | null,
  cmd: {
    orderId: string;
    contractor: ContractorKey;
    invoice: Itemised;
    previous: InvoiceVersion | null;
    actor: Actor;
  },
  ctx: CommandContext,
): Decision {
  const order = jobOf(state?.order, cmd.contractor, cmd.orderId);
  if (isRefusal(order)) return order;
  const status = TRANSITIONS.some((t) => t.action === "revise" && t.from.includes(order.status))
    ? "invoiced"
    : null;
  if (status === null) {
    return refuse(
      "invalid_transition",
      `An invoice is revised once the job is invoiced, until it is approved; this one is ${order.status}.`,
      { currentStatus: order.status },
    );
  }
  const cents = cmd.invoice.total_cents;
  const limit = nteInForce(order);
  if (limit !== null && cents > limit) return overNte(cents, limit);
  const at = ctx.now.toISOString();
  const version: InvoiceVersion = {
    order_id: order.id,
    version: (cmd.previous?.version ?? 1) + 1,
    ...cmd.invoice,
    created_at: at,
    created_by: cmd.actor,
  };
  const revised = {
    version: version.version,
    total_cents: cents,
    previous_total_cents: order.invoice_cents,
  };
  return changeOf(
    order,
    { status, invoice_cents: cents, updated_at: at },
    {
      invoice: version,
      audit: [
        {
          kind: "order.invoice_revised",
          actor: cmd.actor,
          at,
          data: {
            ...itemisedData(version),
            previous_total_cents: order.invoice_cents,
            nte_in_force_cents: limit,
          },
        },
      ],
      event: {
        type: "order.invoice_revised",
        at,
        details: { previous_status: status === order.status ? null : order.status, invoice: revised },
      },
    },
  );
}

function overNte(cents: number, limit: number): Refusal {
  return refuse(
    "nte_exceeded",
    `The invoice (${cents}) is over the NTE in force (${limit}): ask for an NTE increase first.`,
    { extra: { nte_in_force_cents: limit } },
  );
}

/** What an itemised invoice's audit record seals: the version, its lines and totals. */
function itemisedData(v: InvoiceVersion): Record<string, unknown> {
  return {
    version: v.version,
    lines: v.lines,
    subtotal_cents: v.subtotal_cents,
    tax_cents: v.tax_cents,
    total_cents: v.total_cents,
  };
}

// --- The caller's and the dispatch team's -------------------------------------------------------------

/** The caller (or a dispatcher) cancels an order: a pending offer is withdrawn, capacity given back. */
export function cancelOrder(
  state: OrderState,
  cmd: { role: Role; reason: string | null; actor: Actor },
  ctx: CommandContext,
): Decision {
  const { order } = state;
  const status = nextStatus(order.status, "cancel", cmd.role);
  if (isRefusal(status)) return status;
  const at = ctx.now.toISOString();
  const frees = holdsContractor(order.status) && order.contractor_id;
  return changeOf(
    order,
    { status, status_reason: cmd.reason, updated_at: at },
    {
      offers: { create: [], settle: withdrawPending(state.offers, at, "order cancelled") },
      counter: withdrawnCounter(state, at, cmd.actor, "order cancelled"),
      capacity: { take: [], release: frees && order.contractor_id ? [order.contractor_id] : [] },
      audit: [
        {
          kind: "order.cancelled",
          actor: cmd.actor,
          at,
          data: { from: order.status, reason: cmd.reason },
        },
      ],
      event: { type: "order.cancelled", at, details: { previous_status: order.status } },
    },
  );
}

/** A contractor as an assignment needs it: which pool it is in and whether it may be given work. */
export interface ContractorStanding {
  pool: string;
  active: boolean;
  excluded: boolean;
  /** Its verifications (YYYY-MM-DD, valid through that day; null: not verified): compliance.ts. */
  insuranceVerifiedUntil: string | null;
  licenseVerifiedUntil: string | null;
}

/**
 * A dispatcher gives the job to a contractor by hand (an override): from offered, needs_dispatcher or
 * cannot_complete (assign), or from accepted or en_route (reassign). The new contractor's capacity is
 * taken, the previous holder's given back, and a pending offer withdrawn. A contractor whose insurance or
 * license is expired or unverified on the day (ctx.now) is refused (contractor_not_compliant, naming each
 * document and since when) unless the dispatcher states a compliance override reason: the assignment
 * then proceeds and its audit record carries the override, its reason and the documents at fault.
 */
export function assignContractor(
  state: OrderState | null,
  cmd: {
    orderId: string;
    livemode: boolean;
    contractorId: string;
    contractor: ContractorStanding | undefined;
    reason: string;
    /** Why the dispatcher assigns a contractor that is not compliant; null: no override. */
    complianceOverride: string | null;
    /** When the contractor's job begins (the schedule board's drop): placed there or refused. */
    start?: Date;
    actor: Actor;
  },
  ctx: CommandContext,
): Decision {
  const { contractor, contractorId } = cmd;
  const pool = cmd.livemode ? "live" : "sandbox";
  if (!contractor || contractor.pool !== pool) {
    return refuse("not_found", `No contractor ${contractorId} in the ${pool} pool.`);
  }
  if (!contractor.active || contractor.excluded) {
    return refuse(
      "contractor_unavailable",
      `Contractor ${contractorId} is ${contractor.excluded ? "excluded" : "inactive"}.`,
    );
  }
  const order = state?.order;
  if (!state || !order || order.livemode !== cmd.livemode) {
    return refuse("not_found", `No order ${cmd.orderId}.`);
  }
  const issues = complianceIssues(contractor, dayOf(ctx.now));
  if (issues.length > 0 && cmd.complianceOverride === null) {
    return refuse(
      "contractor_not_compliant",
      `Contractor ${contractorId} may not be given work: ${describeIssues(issues)}. State a compliance_override_reason to assign it anyway.`,
      { extra: { compliance: issues } },
    );
  }
  const action = order.status === "accepted" || order.status === "en_route" ? "reassign" : "assign";
  const status = nextStatus(order.status, action, "dispatcher");
  if (isRefusal(status)) return status;
  // The contractor holding the job's capacity (none once it could not complete the job, though the order
  // still names it: it may be given the job again).
  const holder = holdsContractor(order.status) ? order.contractor_id : null;
  if (holder === contractorId && order.status !== "offered") {
    return refuse("invalid_transition", `The order is ${order.status} with ${contractorId} already.`, {
      currentStatus: order.status,
    });
  }
  if (cmd.start) {
    const wrong = startIssues(cmd.start, order, ctx.now);
    if (wrong.length > 0) return startIssuesRefusal(wrong);
  }
  if (ctx.unavailable.has(contractorId)) {
    const why = ctx.unavailableWhy?.get(contractorId);
    if (why) return startRefusal(contractorId, why);
    return refuse("contractor_unavailable", `Contractor ${contractorId} has no capacity left.`);
  }
  const at = ctx.now.toISOString();
  // Assigned the job it is offered, at a start: its unit stays, its block moves there.
  const retime = cmd.start && holder === contractorId ? [contractorId] : [];
  return changeOf(
    order,
    {
      status,
      contractor_id: contractorId,
      // Every assignment counts, and by its kind (evals): a dispatch automation could not make, a
      // re-dispatch after a failure, or (the rest) a contractor replaced.
      override_count: order.override_count + 1,
      ...(order.status === "needs_dispatcher"
        ? { manual_dispatch_count: order.manual_dispatch_count + 1 }
        : {}),
      ...(order.status === "cannot_complete" ? { redispatch_count: order.redispatch_count + 1 } : {}),
      accepted_at: at,
      first_accepted_at: order.first_accepted_at ?? at,
      eta_at: null,
      on_site_at: null,
      check_in: null,
      status_reason: null,
      updated_at: at,
    },
    {
      offers: { create: [], settle: withdrawPending(state.offers, at, "assigned by a dispatcher") },
      counter: withdrawnCounter(state, at, cmd.actor, "assigned by a dispatcher"),
      capacity: {
        take: [contractorId],
        release: holder ? [holder] : [],
        ...(retime.length > 0 ? { retime } : {}),
      },
      audit: [
        {
          kind: "order.assigned",
          actor: cmd.actor,
          at,
          data: {
            action,
            from_status: order.status,
            from_contractor: order.contractor_id,
            to_contractor: contractorId,
            reason: cmd.reason,
            ...(cmd.start ? { start: cmd.start.toISOString() } : {}),
            ...(issues.length > 0 ? { compliance_override: { reason: cmd.complianceOverride, issues } } : {}),
          },
        },
      ],
      event: { type: statusEvent(status), at, details: { previous_status: order.status, action } },
    },
  );
}

/** The statuses in which the dispatch team may move an order's arrival window: before anyone set off. */
const RESCHEDULABLE_STATUSES: readonly OrderStatus[] = [
  "offered",
  "accepted",
  "needs_dispatcher",
  "cannot_complete",
];

/**
 * The dispatch team moves the order's arrival window (routine and scheduled work: windowed). The window
 * meets the rules a caller's does (windowIssues: 422 on the field); the order must not be under way yet
 * (offered, accepted, needs_dispatcher or cannot_complete). The contractor holding the job (or offered
 * it) keeps it: its block of time is placed again inside the new window, strictly, and when it has no
 * room there (working hours, time off, another job) the move is refused with window_unavailable. The
 * arrive clock starts again at the new window: a stored at-risk is cleared, a breach stays (it happened).
 * With `start` (the schedule board's drop: a contractor must hold or be offered the job) the block is
 * placed exactly there, inside the new window, or refused naming the conflict; the window may then be
 * the one the order has, to move the block within it (nothing else of the order changes).
 */
export function rescheduleOrder(
  state: OrderState | null,
  cmd: {
    orderId: string;
    livemode: boolean;
    window: TimeWindow;
    reason: string;
    /** When the holder's job begins, inside the new window. */
    start?: Date;
    /** Where the holder's block starts now (ISO; null: it holds none): a start equal to it moves nothing. */
    currentStart?: string | null;
    actor: Actor;
  },
  ctx: CommandContext,
): Decision {
  const order = state?.order;
  if (!state || !order || order.livemode !== cmd.livemode) {
    return refuse("not_found", `No order ${cmd.orderId}.`);
  }
  if (!RESCHEDULABLE_STATUSES.includes(order.status)) {
    return refuse(
      "invalid_transition",
      `The order is ${order.status}: its window can be moved only while it is ${RESCHEDULABLE_STATUSES.join(", ")}.`,
      { currentStatus: order.status },
    );
  }
  const issues = windowIssues(cmd.window, { urgency: order.urgency, trade: order.trade, now: ctx.now });
  if (issues.length > 0) {
    return refuse("validation_failed", issues.map((i) => i.message).join("; "), {
      errors: issues.map((i) => ({ field: i.field, message: i.message, code: i.code })),
    });
  }
  const start = cmd.window.start.toISOString();
  const end = cmd.window.end.toISOString();
  const holder = holdsContractor(order.status) ? order.contractor_id : null;
  const exact = cmd.start?.toISOString();
  if (cmd.start) {
    const wrong =
      holder === null
        ? [
            {
              field: "start",
              code: "start_without_contractor",
              message: `No contractor holds or is offered the job (it is ${order.status}): assign one first.`,
            },
          ]
        : startIssues(cmd.start, { window_start: start, window_end: end, arrive_by: null }, ctx.now);
    if (wrong.length > 0) return startIssuesRefusal(wrong);
  }
  const sameWindow = order.window_start === start && order.window_end === end;
  if (sameWindow && (exact === undefined || exact === cmd.currentStart)) {
    return refuse(
      "invalid_transition",
      `The order's window is ${start} to ${end} already${exact === undefined ? "" : `, and its job starts at ${exact}`}.`,
      { currentStatus: order.status },
    );
  }
  if (holder !== null && ctx.unavailable.has(holder)) {
    const why = ctx.unavailableWhy?.get(holder);
    if (why) return startRefusal(holder, why);
    return refuse(
      "window_unavailable",
      `Contractor ${holder} has no room for the job from ${start} to ${end}: outside its working hours, ` +
        "on time off, or taken by its other jobs. Pick another window, or assign another contractor first.",
      { extra: { contractor_id: holder } },
    );
  }
  const at = ctx.now.toISOString();
  const previous = order.window_start === null ? null : { start: order.window_start, end: order.window_end };
  const moved = { start, end };
  return changeOf(
    order,
    // The same window, the block moved within it: the window, its source and its clock stay as they are.
    sameWindow
      ? { updated_at: at }
      : {
          window_start: start,
          window_end: end,
          window_source: "rescheduled",
          sla_arrive_at_risk_at: null,
          updated_at: at,
        },
    {
      capacity: { take: [], release: [], retime: holder === null ? [] : [holder] },
      audit: [
        {
          kind: "order.rescheduled",
          actor: cmd.actor,
          at,
          data: {
            from_window: previous,
            to_window: moved,
            contractor_id: holder,
            reason: cmd.reason,
            ...(exact === undefined ? {} : { start: exact }),
          },
        },
      ],
      event: {
        type: "order.rescheduled",
        at,
        details: { previous_status: null, previous_window: previous, reason: cmd.reason },
      },
    },
  );
}

/** The caller approves or rejects an NTE increase; an approval raises the NTE in force. */
export function decideNte(
  state: OrderState,
  cmd: {
    request: NteRequest | undefined;
    requestId: string;
    decision: "approved" | "rejected";
    reason: string | null;
    actor: Actor;
  },
  ctx: CommandContext,
): Decision {
  const { order } = state;
  const { request } = cmd;
  if (!request || request.order_id !== order.id) {
    return refuse("not_found", `No NTE request ${cmd.requestId} on this order.`);
  }
  if (request.status !== "pending") {
    return refuse("invalid_transition", `The NTE request was already ${request.status}.`, {
      currentStatus: order.status,
    });
  }
  if (!NTE_STATUSES.includes(order.status)) {
    return refuse(
      "invalid_transition",
      `The order is ${order.status}: an NTE increase is decided while the job is active.`,
      { currentStatus: order.status },
    );
  }
  const at = ctx.now.toISOString();
  const patch: OrderPatch =
    cmd.decision === "approved"
      ? { nte_approved_cents: request.requested_cents, updated_at: at }
      : { updated_at: at };
  return changeOf(order, patch, {
    nte: { create: null, decide: { id: request.id, status: cmd.decision, at, reason: cmd.reason } },
    audit: [
      {
        kind: "order.nte_decided",
        actor: cmd.actor,
        at,
        data: {
          request_id: request.id,
          decision: cmd.decision,
          requested_cents: request.requested_cents,
          reason: cmd.reason,
        },
      },
    ],
    event: {
      type: cmd.decision === "approved" ? "order.nte_approved" : "order.nte_rejected",
      at,
      details: {
        previous_status: null,
        nte_request: {
          request_id: request.id,
          requested_cents: Number(request.requested_cents),
          decision: cmd.decision,
          reason: cmd.reason,
        },
      },
    },
  });
}
