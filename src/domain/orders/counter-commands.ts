// Counter-offers' commands (issue 33): the contractor counters its pending offer; the account (or its
// policy) accepts the counter, which assigns the job at its price and/or window, or declines it, which
// moves the cascade on as a decline does; a counter unanswered by its deadline expires the same way.
// Pure, as commands.ts: each returns the change to commit or the refusal (counter-rules.ts has the rules).

import { type TimeWindow, windowIssues } from "../time/service-window.js";
import { type CommandContext, type ContractorKey, changeOf, passOn, refuse } from "./commands.js";
import {
  autoAcceptCeiling,
  autoAccepts,
  type CounterPolicy,
  counterDeadline,
  counterDetails,
  counteredOffer,
  POLICY_ACTOR,
} from "./counter-rules.js";
import type {
  Actor,
  AuditFact,
  CounterOffer,
  Decision,
  Offer,
  OrderChange,
  OrderPatch,
  OrderState,
  Refusal,
} from "./order.js";
import { nteInForce } from "./policy.js";
import { transition } from "./transitions.js";

export interface CounterCommand {
  offerId: string;
  contractor: ContractorKey;
  priceCents: number | null;
  window: TimeWindow | null;
  note: string | null;
  actor: Actor;
  /** The account's policy, read in the command's transaction (null: none set). */
  policy: CounterPolicy | null;
}

/** Why a counter is refused before it is made (the offer, its deadline, what it proposes); null: none. */
function counterRefusal(state: OrderState | null, cmd: CounterCommand, ctx: CommandContext): Refusal | null {
  const offer = state?.offers.find((o) => o.id === cmd.offerId);
  const key = cmd.contractor;
  if (!state || !offer || offer.contractor_id !== key.contractorId || offer.livemode !== key.livemode) {
    return refuse("not_found", `You have no offer ${cmd.offerId}.`);
  }
  const { order } = state;
  if (offer.status !== "pending") {
    return refuse("invalid_transition", `The offer is ${offer.status}: it can no longer be countered.`, {
      currentStatus: offer.status,
    });
  }
  if (offer.deadline_at <= ctx.now.toISOString()) {
    return refuse(
      "offer_expired",
      `The offer expired at ${offer.deadline_at}: a counter is made before the offer's deadline.`,
      { currentStatus: "expired", extra: { deadline_at: offer.deadline_at } },
    );
  }
  if (order.status !== "offered" || order.contractor_id !== offer.contractor_id) {
    return refuse(
      "invalid_transition",
      `The order is ${order.status}: the offer can no longer be countered.`,
      {
        currentStatus: order.status,
      },
    );
  }
  if (cmd.window) {
    const issues = windowIssues(cmd.window, { urgency: order.urgency, trade: order.trade, now: ctx.now });
    if (issues.length > 0) {
      return refuse("validation_failed", issues.map((i) => i.message).join("; "), {
        errors: issues.map((i) => ({
          field: i.field.replace("service_window", "arrival_window"),
          message: i.message.replaceAll("service_window", "arrival_window"),
          code: i.code,
        })),
      });
    }
  }
  const sameWindow =
    cmd.window === null ||
    (order.window_start === cmd.window.start.toISOString() &&
      order.window_end === cmd.window.end.toISOString());
  const samePrice = cmd.priceCents === null || cmd.priceCents === order.estimated_cost_cents;
  if (sameWindow && samePrice) {
    return refuse(
      "validation_failed",
      "A counter proposes another price or another window than the offer's.",
      {
        errors: [{ field: "price_cents", message: "the counter changes nothing: accept the offer instead" }],
      },
    );
  }
  return null;
}

/**
 * The contractor answers its pending offer with a counter before the offer's deadline: the offer is
 * settled "countered", the counter waits on the account until its own deadline, the contractor's capacity
 * stays held. When the account's policy accepts it at once, the same change accepts it (counter-rules.ts).
 */
export function counterOffer(state: OrderState | null, cmd: CounterCommand, ctx: CommandContext): Decision {
  const refusal = counterRefusal(state, cmd, ctx);
  if (refusal || !state) return refusal ?? refuse("not_found", `You have no offer ${cmd.offerId}.`);
  const { order } = state;
  const offer = state.offers.find((o) => o.id === cmd.offerId) as Offer;
  transition(order.status, "counter", "contractor");
  const at = ctx.now.toISOString();
  const counter: CounterOffer = {
    offer_id: offer.id,
    order_id: order.id,
    contractor_id: offer.contractor_id,
    livemode: offer.livemode,
    price_cents: cmd.priceCents,
    window_start: cmd.window?.start.toISOString() ?? null,
    window_end: cmd.window?.end.toISOString() ?? null,
    note: cmd.note,
    status: "pending",
    created_at: at,
    deadline_at: counterDeadline(order.urgency, ctx.now),
    decided_at: null,
    decided_by: null,
    reason: null,
  };
  const countered: AuditFact = {
    kind: "order.countered",
    actor: cmd.actor,
    at,
    data: {
      offer_id: offer.id,
      contractor_id: offer.contractor_id,
      attempt: offer.attempt,
      price_cents: counter.price_cents,
      arrival_window: counterDetails(counter).arrival_window,
      note: counter.note,
      estimated_cost_cents: order.estimated_cost_cents,
      deadline_at: counter.deadline_at,
    },
  };
  const settle = [{ id: offer.id, status: "countered" as const, at, reason: cmd.note }];
  if (autoAccepts(cmd.policy, order, counter)) {
    const ceiling = autoAcceptCeiling(cmd.policy, order);
    const accepted = { ...counter, status: "accepted" as const, decided_at: at, decided_by: POLICY_ACTOR };
    return acceptance(state, offer, accepted, {
      actor: POLICY_ACTOR,
      offerSettle: settle,
      before: [countered],
      policy: { auto_accept_within_pct: cmd.policy?.auto_accept_within_pct ?? null, ...ceiling },
      ctx,
    });
  }
  return changeOf(
    order,
    { updated_at: at },
    {
      offers: { create: [], settle },
      counter: { create: counter },
      audit: [countered],
      event: {
        type: "order.countered",
        at,
        details: { previous_status: null, counter: counterDetails(counter) },
      },
    },
  );
}

/** The accepted counter's change: the order accepted by its contractor at the counter's price and/or
 * window (its block of time placed again in the new window), the NTE raised to an agreed price above it. */
function acceptance(
  state: OrderState,
  offer: Offer,
  counter: CounterOffer,
  how: {
    actor: Actor;
    offerSettle: OrderChange["offers"]["settle"];
    before: AuditFact[];
    policy: Record<string, unknown> | null;
    ctx: CommandContext;
  },
): OrderChange {
  const { order } = state;
  const at = how.ctx.now.toISOString();
  const status = transition(order.status, "accept_counter", how.actor === POLICY_ACTOR ? "system" : "caller");
  const price = counter.price_cents === null ? null : Number(counter.price_cents);
  const nte = nteInForce(order);
  const raisesNte = price !== null && nte !== null && price > nte;
  const patch: OrderPatch = {
    status,
    accepted_at: at,
    first_accepted_at: order.first_accepted_at ?? at,
    accepted_offer_attempt: offer.attempt,
    updated_at: at,
    ...(price !== null ? { agreed_price_cents: price } : {}),
    ...(raisesNte ? { nte_approved_cents: price } : {}),
    ...(counter.window_start !== null
      ? {
          window_start: counter.window_start,
          window_end: counter.window_end,
          window_source: "countered" as const,
        }
      : {}),
  };
  const settled = { offer_id: offer.id, status: "accepted" as const, at, by: how.actor, reason: null };
  const details = counterDetails(counter);
  return changeOf(order, patch, {
    offers: { create: [], settle: how.offerSettle },
    // Made and accepted at once (the policy), or waiting until now.
    counter: counter.status === "pending" ? { settle: settled } : { create: counter },
    capacity: {
      take: [],
      release: [],
      ...(counter.window_start !== null ? { retime: [offer.contractor_id] } : {}),
    },
    audit: [
      ...how.before,
      {
        kind: "order.counter_accepted",
        actor: how.actor,
        at,
        data: {
          offer_id: offer.id,
          contractor_id: offer.contractor_id,
          agreed_price_cents: price,
          arrival_window: details.arrival_window,
          ...(raisesNte ? { nte_raised_from_cents: nte } : {}),
          ...(how.policy ? { policy: how.policy } : {}),
        },
      },
    ],
    event: {
      type: "order.accepted",
      at,
      details: {
        previous_status: order.status,
        action: "accept_counter",
        counter: { ...details, status: "accepted", decided_at: at },
      },
    },
  });
}

/** The order's waiting counter, or the refusal naming why there is none to answer. */
function waiting(
  state: OrderState | null,
  counters: readonly CounterOffer[],
  orderId: string,
  ctx: CommandContext,
  expiring: boolean,
): { offer: Offer; counter: CounterOffer } | Refusal {
  if (!state) return refuse("not_found", `No order ${orderId}.`);
  const offer = counteredOffer(state);
  const counter = offer ? counters.find((c) => c.offer_id === offer.id && c.status === "pending") : undefined;
  if (!offer || !counter) {
    return refuse("invalid_transition", `The order is ${state.order.status}: no counter-offer waits on it.`, {
      currentStatus: state.order.status,
    });
  }
  const due = counter.deadline_at <= ctx.now.toISOString();
  if (expiring && !due) {
    return refuse("invalid_transition", `The counter-offer waits until ${counter.deadline_at}.`, {
      currentStatus: state.order.status,
    });
  }
  if (!expiring && due) {
    return refuse("offer_expired", `The counter-offer expired at ${counter.deadline_at}.`, {
      currentStatus: state.order.status,
      extra: { deadline_at: counter.deadline_at },
    });
  }
  return { offer, counter };
}

/** The account accepts the counter waiting on its order, before the counter's deadline. */
export function acceptCounter(
  state: OrderState | null,
  cmd: { orderId: string; counters: readonly CounterOffer[]; actor: Actor },
  ctx: CommandContext,
): Decision {
  const found = waiting(state, cmd.counters, cmd.orderId, ctx, false);
  if ("kind" in found || !state) return "kind" in found ? found : refuse("not_found", "No order.");
  return acceptance(state, found.offer, found.counter, {
    actor: cmd.actor,
    offerSettle: [],
    before: [],
    policy: null,
    ctx,
  });
}

/**
 * The account declines the counter waiting on its order (before its deadline), or the sweeper expires it
 * (after): the contractor's capacity is given back and the job goes to the next contractor in the ranking,
 * or to a dispatcher, exactly as after a decline.
 */
export function endCounter(
  state: OrderState | null,
  cmd: {
    orderId: string;
    counters: readonly CounterOffer[];
    outcome: "declined" | "expired";
    actor: Actor;
    reason: string | null;
  },
  ctx: CommandContext,
): Decision {
  const found = waiting(state, cmd.counters, cmd.orderId, ctx, cmd.outcome === "expired");
  if ("kind" in found || !state) return "kind" in found ? found : refuse("not_found", "No order.");
  const { offer, counter } = found;
  const at = ctx.now.toISOString();
  const details = { ...counterDetails(counter), status: cmd.outcome, decided_at: at, reason: cmd.reason };
  return passOn(
    state,
    offer.contractor_id,
    {
      patch: {},
      settle: [],
      audit: [
        {
          kind: cmd.outcome === "declined" ? "order.counter_declined" : "order.counter_expired",
          actor: cmd.actor,
          at,
          data: {
            offer_id: offer.id,
            contractor_id: offer.contractor_id,
            price_cents: details.price_cents,
            arrival_window: details.arrival_window,
            deadline_at: counter.deadline_at,
            reason: cmd.reason,
          },
        },
      ],
      counter: { settle: { offer_id: offer.id, status: cmd.outcome, at, by: cmd.actor, reason: cmd.reason } },
      reofferEvent: {
        type: cmd.outcome === "declined" ? "order.counter_declined" : "order.counter_expired",
        at,
        details: { previous_status: null, counter: details },
      },
      details: { counter: details },
    },
    ctx,
  );
}
