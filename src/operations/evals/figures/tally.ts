// The per-status sums of the window's orders (evals-store.ts `figures`) as the figures read them: how
// many orders are in each status now, and any summed field over some statuses.

import { WORK_DONE_STATUSES } from "../../../domain/orders/statuses.js";
import { ORDER_STATUSES, type OrderStatus } from "../../../domain/orders/transitions.js";
import type { EvalsFigures, StatusSums } from "../../../storage/evals-store.js";

/** The work done, whatever its invoice's fate. */
export const FINISHED: readonly OrderStatus[] = WORK_DONE_STATUSES;

export interface Tally {
  /** Orders by current status, every status (zero included). */
  readonly byStatus: Record<OrderStatus, number>;
  /** A summed field over `statuses` (every status by default). */
  sum(field: keyof StatusSums, statuses?: readonly OrderStatus[]): number;
}

/** The tally of `figures`; of nothing (every count zero) for a day without orders. */
export function tallyOf(figures: EvalsFigures | undefined): Tally {
  const of = (status: OrderStatus): StatusSums | undefined => figures?.byStatus.get(status);
  return {
    byStatus: Object.fromEntries(ORDER_STATUSES.map((s) => [s, of(s)?.orders ?? 0])) as Record<
      OrderStatus,
      number
    >,
    sum: (field, statuses = ORDER_STATUSES) =>
      statuses.reduce((total, s) => total + (of(s)?.[field] ?? 0), 0),
  };
}
