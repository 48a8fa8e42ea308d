// An order's checklist as the operations need it: fixed (copied from the templates in force) the first
// time it is needed for the job, that is when the contractor holding it reads it, answers it, or
// completes the job; before that the account and the dispatch team are shown what it would be now.

import {
  type CompletionRequirements,
  fixChecklist,
  type OrderChecklist,
  templatesFor,
} from "../../domain/orders/checklist.js";
import type { Order } from "../../domain/orders/order.js";
import type { Store, WriteTx } from "../../storage/store.js";

/** Statuses an order's checklist is not fixed in any more when it has none (an order that ended before
 * checklists, or before it needed one): it has none. */
const ENDED: readonly string[] = ["completed", "invoiced", "cancelled", "cannot_complete"];

/** The checklist the templates in force give `order` now. */
async function fromTemplates(store: Store, order: Order, at: string, tx?: WriteTx): Promise<OrderChecklist> {
  const scope = { livemode: order.livemode, trade: order.trade };
  const active = [
    ...(await store.checklists.templates({ ...scope, accountId: null }, tx)),
    ...(await store.checklists.templates({ ...scope, accountId: order.account_id }, tx)),
  ];
  return fixChecklist(order.id, templatesFor(active, order), at);
}

/** An order's checklist, and whether it is fixed; not fixed: what the templates give it now (or nothing,
 * for an order that ended without one). */
export async function checklistOf(
  store: Store,
  order: Order,
  now: Date,
): Promise<{ checklist: OrderChecklist; fixed: boolean }> {
  const fixed = await store.checklists.orderChecklist(order.id);
  if (fixed) return { checklist: fixed, fixed: true };
  const at = now.toISOString();
  if (ENDED.includes(order.status)) {
    return { checklist: { orderId: order.id, templateIds: [], items: [], fixedAt: at }, fixed: false };
  }
  return { checklist: await fromTemplates(store, order, at), fixed: false };
}

/** The order's checklist, fixed inside `tx` if it was not yet. */
export async function fixedChecklist(
  store: Store,
  tx: WriteTx,
  order: Order,
  now: Date,
): Promise<OrderChecklist> {
  const held = await store.checklists.orderChecklist(order.id, tx);
  if (held) return held;
  return store.checklists.fixOrderChecklist(await fromTemplates(store, order, now.toISOString(), tx), tx);
}

/** What the order needs for its completion, read inside the completion's transaction (its checklist
 * fixed there if it was not yet). */
export async function completionRequirements(
  store: Store,
  tx: WriteTx,
  order: Order,
  now: Date,
): Promise<CompletionRequirements> {
  const checklist = await fixedChecklist(store, tx, order, now);
  const answers = await store.checklists.answers(order.id, tx);
  return { checklist: { items: checklist.items, answered: new Set(answers.map((a) => a.itemId)) } };
}
