// The work order's life: its statuses and the one table of allowed transitions. Pure: no I/O, no clock.
// Everything that changes an order's status asks `transition` first; anything not in the table is refused
// with the current status named (the API answers 409 invalid_transition).
//
//   received -> offered -> accepted -> en_route -> on_site -> completed -> invoiced -> approved -> paid
//   plus needs_dispatcher (no eligible contractor, or the cascade ran out), cancelled, cannot_complete;
//   and an invoice sent back: revision_requested or invoice_rejected, which a revision makes invoiced again.
//
// Declines and expired offers are recorded events, not statuses: the order stays `offered` while the job
// moves down the ranking (the `reoffer` action), until a contractor accepts or the list runs out. A
// counter-offer keeps it `offered` too (the `counter` action), with the contractor's capacity held until
// the account accepts it (`accept_counter`) or declines it or lets it expire (then `reoffer`/`exhaust`).

import { ORDER_STATUSES, type OrderStatus } from "./statuses.js";

export { ORDER_STATUSES, type OrderStatus };

/** Who may take an action: the service itself, the contractor on the job, the dispatch team, the caller. */
export const ROLES = ["system", "contractor", "dispatcher", "caller"] as const;
export type Role = (typeof ROLES)[number];

export const ACTIONS = [
  "offer",
  "reoffer",
  "no_candidate",
  "exhaust",
  "accept",
  "assign",
  "reassign",
  "depart",
  "arrive",
  "complete",
  "cannot_complete",
  "invoice",
  "revise",
  "request_revision",
  "reject",
  "approve",
  "pay",
  "cancel",
  "counter",
  "accept_counter",
] as const;
export type Action = (typeof ACTIONS)[number];

interface Transition {
  action: Action;
  from: readonly OrderStatus[];
  to: OrderStatus;
  by: readonly Role[];
  /** What the transition means, for the OpenAPI description and the timeline. */
  meaning: string;
}

/** The transition table: the only place that says what may happen to an order. */
export const TRANSITIONS: readonly Transition[] = [
  {
    action: "offer",
    from: ["received"],
    to: "offered",
    by: ["system"],
    meaning: "offered to the best-ranked eligible contractor",
  },
  {
    action: "no_candidate",
    from: ["received"],
    to: "needs_dispatcher",
    by: ["system"],
    meaning: "no eligible contractor: a dispatcher takes over",
  },
  {
    action: "reoffer",
    from: ["offered"],
    to: "offered",
    by: ["system"],
    meaning: "declined or expired: offered to the next-ranked contractor",
  },
  {
    action: "exhaust",
    from: ["offered"],
    to: "needs_dispatcher",
    by: ["system"],
    meaning: "the cascade ran out: a dispatcher takes over",
  },
  {
    action: "accept",
    from: ["offered"],
    to: "accepted",
    by: ["contractor"],
    meaning: "the contractor accepted the offer",
  },
  {
    action: "counter",
    from: ["offered"],
    to: "offered",
    by: ["contractor"],
    meaning: "the contractor answered the offer with a counter (price and/or window): the account decides",
  },
  {
    action: "accept_counter",
    from: ["offered"],
    to: "accepted",
    by: ["caller", "system"],
    meaning: "the account (or its policy) accepted the contractor's counter: assigned at its price/window",
  },
  {
    action: "assign",
    from: ["offered", "needs_dispatcher", "cannot_complete"],
    to: "accepted",
    by: ["dispatcher"],
    meaning: "a dispatcher assigned a contractor by hand (an override)",
  },
  {
    action: "reassign",
    from: ["accepted", "en_route"],
    to: "accepted",
    by: ["dispatcher"],
    meaning: "a dispatcher moved the job to another contractor (an override)",
  },
  {
    action: "depart",
    from: ["accepted"],
    to: "en_route",
    by: ["contractor"],
    meaning: "the contractor is on the way, with an ETA",
  },
  {
    action: "arrive",
    from: ["en_route"],
    to: "on_site",
    by: ["contractor"],
    meaning: "the contractor is on site",
  },
  {
    action: "complete",
    from: ["on_site"],
    to: "completed",
    by: ["contractor"],
    meaning: "the work is done, with its final cost",
  },
  {
    action: "cannot_complete",
    from: ["accepted", "en_route", "on_site"],
    to: "cannot_complete",
    by: ["contractor"],
    meaning: "the contractor cannot finish the job, with a reason",
  },
  {
    action: "invoice",
    from: ["completed"],
    to: "invoiced",
    by: ["contractor", "dispatcher"],
    meaning: "invoiced, within the NTE in force",
  },
  {
    action: "revise",
    from: ["invoiced", "revision_requested", "invoice_rejected"],
    to: "invoiced",
    by: ["contractor"],
    meaning: "the contractor sent a new version of its invoice (until it is approved)",
  },
  {
    action: "request_revision",
    from: ["invoiced"],
    to: "revision_requested",
    by: ["caller"],
    meaning: "the account's approver sent the invoice back for a revision, with a note",
  },
  {
    action: "reject",
    from: ["invoiced"],
    to: "invoice_rejected",
    by: ["caller"],
    meaning: "the account's approver rejected the invoice, with a reason code (a revision may follow)",
  },
  {
    action: "approve",
    from: ["invoiced"],
    to: "approved",
    by: ["caller", "system"],
    meaning: "the invoice was approved: by an approver within its limit, or by the account's policy",
  },
  {
    action: "pay",
    from: ["approved"],
    to: "paid",
    by: ["caller"],
    meaning: "the account recorded its payment, with a reference and a date",
  },
  {
    action: "cancel",
    from: ["received", "offered", "accepted", "en_route", "needs_dispatcher"],
    to: "cancelled",
    by: ["caller", "dispatcher"],
    meaning: "cancelled before the contractor was on site",
  },
  {
    action: "cancel",
    from: ["on_site", "cannot_complete"],
    to: "cancelled",
    by: ["dispatcher"],
    meaning: "cancelled by a dispatcher",
  },
];

/** Statuses no action leaves. */
export const TERMINAL_STATUSES: readonly OrderStatus[] = ORDER_STATUSES.filter(
  (s) => !TRANSITIONS.some((t) => t.from.includes(s)),
);

export class TransitionRefused extends Error {
  constructor(
    readonly current: OrderStatus,
    readonly action: Action,
    readonly role: Role,
  ) {
    const allowed = allowedActions(current, role);
    super(
      `The order is ${current}: ${action} is not possible now${allowed.length ? ` (possible: ${allowed.join(", ")})` : ""}.`,
    );
    this.name = "TransitionRefused";
  }
}

/** The status `action` by `role` leads to from `current`; throws TransitionRefused when the table has no such move. */
export function transition(current: OrderStatus, action: Action, role: Role): OrderStatus {
  const t = TRANSITIONS.find((x) => x.action === action && x.from.includes(current) && x.by.includes(role));
  if (!t) throw new TransitionRefused(current, action, role);
  return t.to;
}

/** The actions `role` may take on an order in `current`. */
export function allowedActions(current: OrderStatus, role: Role): Action[] {
  return [
    ...new Set(
      TRANSITIONS.filter((t) => t.from.includes(current) && t.by.includes(role)).map((t) => t.action),
    ),
  ];
}

/** Whether the order holds a contractor's capacity in this status (released on leaving it). */
export function holdsContractor(status: OrderStatus): boolean {
  return status === "offered" || status === "accepted" || status === "en_route" || status === "on_site";
}
