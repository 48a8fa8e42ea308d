// Do-not-dispatch (issue 33): an account excludes a contractor from its own work, for every trade or for
// some, with a reason. Pure: which entry bars a contractor from a job of a trade, and the set of
// contractors a job of an account may not be offered to (matching, the cascade and the optimised day take
// that set; an assignment by hand is refused naming the entry).

import type { Refusal } from "./orders/order.js";
import type { TradeCode } from "./trades.js";

/** One entry of an account's list, in one mode. `trades` null: every trade. */
export interface DoNotDispatchEntry {
  readonly id: string;
  readonly accountId: string;
  readonly livemode: boolean;
  readonly contractorId: string;
  readonly trades: readonly TradeCode[] | null;
  readonly reason: string;
  readonly createdAt: string;
  /** Who added it: `key:<id>` (the account) or `operator:<id>` (the dispatch team). */
  readonly createdBy: string;
  /** The audit record that added it. */
  readonly seal: string;
}

/** The longest reason an entry keeps. */
export const DO_NOT_DISPATCH_REASON_MAX = 500;
/** How many entries one account may keep in one mode: a list, not a second pool. */
export const DO_NOT_DISPATCH_MAX_ENTRIES = 500;

const NONE: ReadonlySet<string> = new Set();

/** Whether `entry` covers work of `trade`. */
function covers(entry: Pick<DoNotDispatchEntry, "trades">, trade: string): boolean {
  return entry.trades === null || (entry.trades as readonly string[]).includes(trade);
}

/** The entry that bars `contractorId` from the account's work of `trade` (the first added), if any. */
export function barringEntry<E extends Pick<DoNotDispatchEntry, "contractorId" | "trades">>(
  entries: readonly E[],
  contractorId: string,
  trade: string,
): E | undefined {
  return entries.find((e) => e.contractorId === contractorId && covers(e, trade));
}

/** The contractors the account's work of `trade` is never offered to. */
export function barredFor(
  entries: readonly Pick<DoNotDispatchEntry, "contractorId" | "trades">[],
  trade: string,
): ReadonlySet<string> {
  let out: Set<string> | null = null;
  for (const e of entries) {
    if (!covers(e, trade)) continue;
    out ??= new Set();
    out.add(e.contractorId);
  }
  return out ?? NONE;
}

/** The refusal of a dispatcher's assignment of `contractorId` to a job of `trade` that an entry of the
 * job's account bars, or null when none does. The dispatch team cannot override it: the entry is the
 * account's to remove. */
export function exclusionRefusal(
  entries: readonly DoNotDispatchEntry[],
  contractorId: string,
  trade: string,
): Refusal | null {
  const entry = barringEntry(entries, contractorId, trade);
  if (entry === undefined) return null;
  const scope = entry.trades === null ? "all its work" : `its ${entry.trades.join(", ")} work`;
  return {
    kind: "refused",
    code: "contractor_excluded",
    message:
      `The order's account excludes ${contractorId} from ${scope} (do-not-dispatch entry ${entry.id}: ` +
      `${entry.reason}). Only the account can remove the entry.`,
    errors: [{ field: "contractor_id", code: "do_not_dispatch", message: `excluded by entry ${entry.id}` }],
    extra: { entry_id: entry.id, entry_trades: entry.trades, entry_reason: entry.reason },
  };
}
