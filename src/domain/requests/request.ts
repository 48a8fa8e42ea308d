// A request (issue 35): what someone at a site reported through the site's request form, or the account's
// agent reported for it, and the rules it goes through. Pure: its limits, how text is taken (as text:
// markup is kept as the characters typed and drawn as text wherever it is shown, never removed or run),
// which orders are open, the duplicate rule and what the account's policy decides.

import type { OrderStatus } from "../orders/statuses.js";
import type { TradeCode } from "../trades.js";
import type { TradeGuess } from "./trade-model.js";

export const REQUEST_LIMITS = {
  descriptionLength: 2000,
  nameLength: 200,
  contactLength: 254,
  rejectReasonLength: 500,
  /** The bytes of a form's JSON body (text only). */
  formBytes: 16 * 1024,
  /** Photos a request takes, the bytes of each, and for how long after it was sent (minutes). */
  photos: 2,
  photoBytes: 8 * 1024 * 1024,
  photoMinutes: 30,
} as const;

/** How urgent the reporter says it is: the order's urgencies without `scheduled` (a request is reactive). */
export const REQUEST_URGENCIES = ["emergency", "urgent", "routine"] as const;
export type RequestUrgency = (typeof REQUEST_URGENCIES)[number];

export const REQUEST_STATUSES = ["pending", "ordered", "linked", "rejected"] as const;

/** The account's policy: a confident request becomes an order at once, or every request waits. */
export const REQUEST_POLICY_MODES = ["create", "hold"] as const;
export type RequestPolicyMode = (typeof REQUEST_POLICY_MODES)[number];
/** Until the account chooses: a public form's submission costs a click to approve; an unwanted order
 * costs a technician's trip. */
export const DEFAULT_REQUEST_POLICY: RequestPolicyMode = "hold";

/** An order still open: a new request of its site and trade is linked to it rather than doubled. */
export const OPEN_ORDER_STATUSES = [
  "received",
  "offered",
  "needs_dispatcher",
  "accepted",
  "en_route",
  "on_site",
  "cannot_complete",
] as const satisfies readonly OrderStatus[];

export function isOpenOrder(status: OrderStatus): boolean {
  return (OPEN_ORDER_STATUSES as readonly OrderStatus[]).includes(status);
}

/** Of the site's orders, the one a request of `trade` duplicates: the newest open one of that trade. */
export function duplicateOf<
  O extends { id: string; trade: TradeCode; status: OrderStatus; createdAt: string },
>(orders: readonly O[], trade: TradeCode): O | null {
  const open = orders.filter((o) => o.trade === trade && isOpenOrder(o.status));
  open.sort((a, b) => (a.createdAt < b.createdAt ? 1 : a.createdAt > b.createdAt ? -1 : 0));
  return open[0] ?? null;
}

/** What a new request's intake does under the account's policy: create (or link) with the guessed trade,
 * or hold it, saying why. */
export type IntakeDecision = { kind: "create"; trade: TradeCode } | { kind: "hold"; reason: string };

export function intakeDecision(policy: RequestPolicyMode, guess: TradeGuess): IntakeDecision {
  if (policy === "hold") return { kind: "hold", reason: "The account holds requests for approval." };
  if (guess.trade === null) {
    return {
      kind: "hold",
      reason:
        guess.best === null
          ? "No trade could be guessed from the text."
          : `The trade guess (${guess.best}, ${guess.confidence}) is below the threshold.`,
    };
  }
  return { kind: "create", trade: guess.trade };
}

/** One line of a request's text as an order's description: who reported it and what they wrote. */
export function orderDescription(
  requestId: string,
  r: { description: string; reporterName: string; reporterContact: string; source: "form" | "agent" },
): string {
  const via = r.source === "form" ? "the site's request form" : "the account's agent";
  return `${r.description}\n\nReported by ${r.reporterName} (${r.reporterContact}) through ${via} (${requestId}).`.slice(
    0,
    5000,
  );
}

/** Text as the form takes it: trimmed; line ends made \n; nothing else changed (markup stays as typed). */
export function formText(text: string): string {
  return text.replace(/\r\n?/g, "\n").trim();
}
