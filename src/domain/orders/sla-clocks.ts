// The service-level clocks of an order, and when each is at risk or breached: the one place these rules
// are written. Pure: the clock is an argument.
//
// An active order has up to two clocks, each with a start, a deadline and the step that stops it:
//
//   respond  from the request (received_at) to respond_by: stopped by the first acceptance
//            (first_accepted_at: the contractor's, or a dispatcher's assignment). As-soon-as-possible
//            work only: windowed work has no respond_by.
//   arrive   from the request to arrive_by (as-soon-as-possible work), or over the arrival window, from
//            its start to its end (windowed work): stopped by the contractor on site (on_site_at).
//
// The contractor's reported ETA (eta_at, from `en_route` with eta_minutes) is the third input: it moves
// no deadline, it tells early that the arrive clock will not be met.
//
// A clock is
//   at risk   when AT_RISK_SHARE (80 %) of its time has passed with its step not done (reason
//             "time_used"), or, for the arrive clock, when the contractor's reported ETA is after the
//             deadline (reason "eta_after_deadline": at once, however little time has passed);
//   breached  when its deadline passes with its step not done (reason "deadline_passed"), or its step
//             was done after the deadline before anyone looked (reason "done_late").
// Each fires at most once per clock and order (the order's sla_* columns, migration 0020, are set by
// the change that fires it). A clock already breached is not reported at risk afterwards. Closed orders
// (completed, invoiced, cancelled, cannot_complete) fire nothing.

import { type CommandContext, changeOf, refuse } from "./commands.js";
import type { Actor, Decision, Order, OrderState } from "./order.js";
import { WORK_DONE_STATUSES } from "./statuses.js";

/** The share of a clock's time after which, its step not done, it is at risk. */
export const AT_RISK_SHARE = 0.8;

const SLA_CLOCKS = ["respond", "arrive"] as const;
export type SlaClockName = (typeof SLA_CLOCKS)[number];

/** Statuses in which no clock fires: the order's story is over. */
export const CLOSED_STATUSES: readonly string[] = [...WORK_DONE_STATUSES, "cancelled", "cannot_complete"];

/** The SQL predicate of an order not closed (the SLA watch's scan and its partial index, migration 0020):
 * literal text, identical in both (migration 0039 rebuilt the index when the invoice's statuses came). */
export const OPEN_ORDERS_SQL = `status not in (${CLOSED_STATUSES.map((s) => `'${s}'`).join(", ")})`;

/** The order columns a clock's firings are stored in (migration 0020). */
export const SLA_COLUMNS = {
  respond: { at_risk: "sla_respond_at_risk_at", breached: "sla_respond_breached_at" },
  arrive: { at_risk: "sla_arrive_at_risk_at", breached: "sla_arrive_breached_at" },
} as const satisfies Record<SlaClockName, { at_risk: keyof Order; breached: keyof Order }>;

export type SlaOrder = Pick<
  Order,
  | "status"
  | "received_at"
  | "respond_by"
  | "arrive_by"
  | "window_start"
  | "window_end"
  | "first_accepted_at"
  | "eta_at"
  | "on_site_at"
  | "sla_respond_at_risk_at"
  | "sla_respond_breached_at"
  | "sla_arrive_at_risk_at"
  | "sla_arrive_breached_at"
>;

export interface SlaClock {
  clock: SlaClockName;
  /** When the clock started: the request, or the arrival window's start. */
  startedAt: Date;
  deadline: Date;
  /** When the step that stops it was done; null while it is not. */
  doneAt: Date | null;
}

type SlaFiringKind = "at_risk" | "breached";
type SlaReason = "time_used" | "eta_after_deadline" | "deadline_passed" | "done_late";

/** A clock that is due to fire, with what its event says. */
export interface SlaFiring {
  kind: SlaFiringKind;
  clock: SlaClockName;
  reason: SlaReason;
  startedAt: Date;
  deadline: Date;
  /** From the clock's start to now (or to when the step was done, for done_late). */
  timeUsedMs: number;
  /** From the clock's start to its deadline. */
  timeAllowedMs: number;
  /** The contractor's reported ETA, when the order has one. */
  etaAt: Date | null;
}

const date = (iso: string | null | undefined): Date | null => (iso ? new Date(iso) : null);

/** The order's clocks (none for a closed order, or one whose promise was never stated). */
export function slaClocks(order: SlaOrder): SlaClock[] {
  if (CLOSED_STATUSES.includes(order.status)) return [];
  const received = new Date(order.received_at);
  const clocks: SlaClock[] = [];
  const respondBy = date(order.respond_by);
  if (respondBy) {
    clocks.push({
      clock: "respond",
      startedAt: received,
      deadline: respondBy,
      doneAt: date(order.first_accepted_at),
    });
  }
  const arriveBy = date(order.arrive_by);
  const windowEnd = date(order.window_end);
  const onSite = date(order.on_site_at);
  if (arriveBy) {
    clocks.push({ clock: "arrive", startedAt: received, deadline: arriveBy, doneAt: onSite });
  } else if (windowEnd) {
    clocks.push({
      clock: "arrive",
      startedAt: date(order.window_start) ?? received,
      deadline: windowEnd,
      doneAt: onSite,
    });
  }
  return clocks;
}

/** When a clock is at risk by time alone: AT_RISK_SHARE of its time after its start. */
export function atRiskTime(clock: Pick<SlaClock, "startedAt" | "deadline">): Date {
  const start = clock.startedAt.getTime();
  const span = Math.max(0, clock.deadline.getTime() - start);
  return new Date(start + Math.ceil(span * AT_RISK_SHARE));
}

/** What a clock should have fired by `now`, whether stored or not: its breach, else its risk, else null. */
function clockState(
  clock: SlaClock,
  eta: Date | null,
  now: Date,
): { kind: SlaFiringKind; reason: SlaReason } | null {
  const t = now.getTime();
  const deadline = clock.deadline.getTime();
  if (clock.doneAt !== null) {
    return clock.doneAt.getTime() > deadline ? { kind: "breached", reason: "done_late" } : null;
  }
  if (t > deadline) return { kind: "breached", reason: "deadline_passed" };
  if (clock.clock === "arrive" && eta !== null && eta.getTime() > deadline) {
    return { kind: "at_risk", reason: "eta_after_deadline" };
  }
  if (t >= atRiskTime(clock).getTime()) return { kind: "at_risk", reason: "time_used" };
  return null;
}

/**
 * The firings due on the order at `now` that it has not stored yet, respond before arrive. A breach
 * supersedes the clock's risk: once breached, its risk is never reported.
 */
export function dueFirings(order: SlaOrder, now: Date): SlaFiring[] {
  const eta = date(order.eta_at);
  const due: SlaFiring[] = [];
  for (const clock of slaClocks(order)) {
    const columns = SLA_COLUMNS[clock.clock];
    if (order[columns.breached]) continue;
    const state = clockState(clock, eta, now);
    if (state === null) continue;
    if (state.kind === "at_risk" && order[columns.at_risk]) continue;
    const until = clock.doneAt && clock.doneAt < now ? clock.doneAt : now;
    due.push({
      ...state,
      clock: clock.clock,
      startedAt: clock.startedAt,
      deadline: clock.deadline,
      timeUsedMs: Math.max(0, until.getTime() - clock.startedAt.getTime()),
      timeAllowedMs: Math.max(0, clock.deadline.getTime() - clock.startedAt.getTime()),
      etaAt: eta,
    });
  }
  return due;
}

/** What the audit record, the webhook and the event stream say of a firing. */
function firingFacts(firing: SlaFiring): Record<string, unknown> {
  return {
    clock: firing.clock,
    reason: firing.reason,
    started_at: firing.startedAt.toISOString(),
    deadline: firing.deadline.toISOString(),
    time_allowed_minutes: Math.round(firing.timeAllowedMs / 6_000) / 10,
    time_used_minutes: Math.round(firing.timeUsedMs / 6_000) / 10,
    time_used_percent:
      firing.timeAllowedMs > 0 ? Math.round((firing.timeUsedMs / firing.timeAllowedMs) * 1000) / 10 : null,
    eta_at: firing.etaAt?.toISOString() ?? null,
  };
}

/**
 * The order's first due clock fires: its column set, an audit record, and the order.sla_at_risk or
 * order.sla_breached event, without a status move. Refused (invalid_transition) when nothing is due, so
 * that of two processes deciding on the same order, the one that reads it after the other's commit
 * fires nothing.
 */
export function fireSlaClock(state: OrderState | null, cmd: { actor: Actor }, ctx: CommandContext): Decision {
  const order = state?.order;
  if (!order) return refuse("not_found", "No such order.");
  const [firing] = dueFirings(order, ctx.now);
  if (!firing) {
    return refuse("invalid_transition", "No service-level clock of the order is due.", {
      currentStatus: order.status,
    });
  }
  const at = ctx.now.toISOString();
  const sla = firingFacts(firing);
  const kind = firing.kind === "at_risk" ? "order.sla_at_risk" : "order.sla_breached";
  return changeOf(
    order,
    { [SLA_COLUMNS[firing.clock][firing.kind]]: at },
    {
      audit: [{ kind, actor: cmd.actor, at, data: { status: order.status, ...sla } }],
      event: { type: kind, at, details: { previous_status: null, sla } },
    },
  );
}

/** Where a clock stands at a moment: its step done in time (met), not done and fine (on_track), at risk or
 * breached (stored firings count, so a risk reported stays reported until the step is done). */
type SlaStanding = "on_track" | "at_risk" | "breached" | "met";

export interface SlaClockState extends SlaClock {
  /** When the clock is at risk by time alone (atRiskTime). */
  atRiskAt: Date;
  standing: SlaStanding;
}

/** The order's clocks and where each stands at `now`: what the dispatch team's views show. */
export function slaStanding(order: SlaOrder, now: Date): SlaClockState[] {
  const eta = date(order.eta_at);
  return slaClocks(order).map((clock) => {
    const columns = SLA_COLUMNS[clock.clock];
    const state = clockState(clock, eta, now);
    let standing: SlaStanding;
    if (order[columns.breached] || state?.kind === "breached") standing = "breached";
    else if (clock.doneAt !== null) standing = "met";
    else if (order[columns.at_risk] || state?.kind === "at_risk") standing = "at_risk";
    else standing = "on_track";
    return { ...clock, atRiskAt: atRiskTime(clock), standing };
  });
}
