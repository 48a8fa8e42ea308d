// Recalls (issue 33): an order may name an earlier order of the caller's as its recall, a callback to the
// same site for the same trade within RECALL_WINDOW_DAYS of that job's completion. The rule a new order's
// `recall_of` must meet, and the site both orders must be at, decided here, pure.
//
// Sites do not exist yet: until they do, "the same site" is the same location as the orders state it:
// the same state, and the same street address when both give one (normalised: case, spacing and
// punctuation aside), else the same ZIP (its first five digits) when both give one. Two orders that share
// neither an address nor a ZIP cannot be told to be at one site, and are refused. Sites will refine this.

import type { Order } from "./order.js";

/** A recall must be ordered within this many days of the original job's completion. */
export const RECALL_WINDOW_DAYS = 30;
export const RECALL_WINDOW_MS = RECALL_WINDOW_DAYS * 86_400_000;

/** What the rule reads of the order named as recalled. */
export type RecalledOrder = Pick<
  Order,
  "id" | "account_id" | "livemode" | "status" | "trade" | "state" | "zip" | "address" | "completed_at"
>;

/** What the rule reads of the new order: its caller, mode, trade, location and when it is made. */
export type RecallRequest = Pick<Order, "account_id" | "livemode" | "trade" | "state" | "zip" | "address"> & {
  at: string;
};

/** The rule a refused `recall_of` broke (the field error's `code`). */
type RecallRule = "unknown_order" | "cancelled" | "other_trade" | "other_site" | "not_completed" | "too_late";

export interface RecallRefusal {
  rule: RecallRule;
  message: string;
}

/** An address as compared: lower case, letters and digits only, single spaces. */
const addressKey = (a: string) =>
  a
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, " ")
    .trim();

/** A ZIP as compared: its five digits (12345-6789 is at 12345). */
const zipKey = (z: string) => z.trim().slice(0, 5);

const given = (v: string | null): v is string => v !== null && v.trim() !== "";

/**
 * Whether two locations are one site: the same state, and the same address when both give one, else the
 * same ZIP when both give one; null when they are, else why not.
 */
export function siteMismatch(
  a: Pick<Order, "state" | "zip" | "address">,
  b: Pick<Order, "state" | "zip" | "address">,
): string | null {
  if (a.state.toUpperCase() !== b.state.toUpperCase()) return `it is in ${a.state}, not ${b.state}`;
  if (given(a.address) && given(b.address)) {
    if (addressKey(a.address) !== addressKey(b.address)) return "its address is another";
    if (given(a.zip) && given(b.zip) && zipKey(a.zip) !== zipKey(b.zip)) return "its ZIP is another";
    return null;
  }
  if (given(a.zip) && given(b.zip)) return zipKey(a.zip) === zipKey(b.zip) ? null : "its ZIP is another";
  return "the two locations share neither an address nor a ZIP to compare";
}

/**
 * Why `original` cannot be the order `request` is a recall of, or null when it can: it must be the
 * caller's (same account and mode; another's reads as unknown, never as existing), not cancelled, of the
 * same trade, at the same site, and completed no more than RECALL_WINDOW_DAYS before the request.
 */
export function recallRefusal(
  id: string,
  original: RecalledOrder | null,
  request: RecallRequest,
): RecallRefusal | null {
  if (
    original === null ||
    original.account_id !== request.account_id ||
    original.livemode !== request.livemode
  )
    return { rule: "unknown_order", message: `You have no order ${id}.` };
  if (original.status === "cancelled") return { rule: "cancelled", message: `Order ${id} was cancelled.` };
  if (original.trade !== request.trade)
    return {
      rule: "other_trade",
      message: `Order ${id} is ${original.trade} work, not ${request.trade}: a recall is of the same trade.`,
    };
  const site = siteMismatch(original, request);
  if (site !== null) return { rule: "other_site", message: `Order ${id} is not at this site: ${site}.` };
  if (original.completed_at === null)
    return {
      rule: "not_completed",
      message: `Order ${id} is ${original.status}, not completed: only a completed job can be recalled.`,
    };
  if (Date.parse(request.at) - Date.parse(original.completed_at) > RECALL_WINDOW_MS)
    return {
      rule: "too_late",
      message:
        `Order ${id} was completed at ${original.completed_at}, more than ${RECALL_WINDOW_DAYS} days ago: ` +
        "a recall is a callback within that time.",
    };
  return null;
}

/**
 * The cascade's candidates with the original job's contractor first when it is one of them: a recall goes
 * back to whoever did the job (it knows the site, and answers for its work), when it is eligible and has
 * the capacity, as every candidate is. The same list, unchanged, otherwise.
 */
export function recallFirst<C extends { contractor: { id: string } }>(
  candidates: readonly C[],
  contractorId: string | null,
): readonly C[] {
  const at = contractorId === null ? -1 : candidates.findIndex((c) => c.contractor.id === contractorId);
  if (at <= 0) return candidates;
  return [candidates[at] as C, ...candidates.slice(0, at), ...candidates.slice(at + 1)];
}
