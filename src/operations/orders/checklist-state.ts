// An order's checklist as the operations need it: fixed (copied from the templates in force) the first
// time it is needed for the job, that is when the contractor holding it reads it, answers it, or
// completes the job; before that the account and the dispatch team are shown what it would be now.

import { sealRecord } from "../../audit/record.js";
import {
  type AnswerInput,
  type ChecklistAnswer,
  type CompletionRequirements,
  decideAnswers,
  fixChecklist,
  type OrderChecklist,
  templatesFor,
} from "../../domain/orders/checklist.js";
import type { ContractorKey } from "../../domain/orders/commands.js";
import type { Order } from "../../domain/orders/order.js";
import { WORK_DONE_STATUSES } from "../../domain/orders/statuses.js";
import { ApiError } from "../../errors.js";
import type { Store, WriteTx } from "../../storage/store.js";
import type { Services } from "../kernel/operation.js";

/** Statuses an order's checklist is not fixed in any more when it has none (an order that ended before
 * checklists, or before it needed one): it has none. */
const ENDED: readonly string[] = [...WORK_DONE_STATUSES, "cancelled", "cannot_complete"];

/** The checklist the templates in force give `order` now, and, for an order a maintenance plan generated,
 * the plan's own template (an account's template of the trade, retired or not: an account keeps a plan's
 * checklist off its other orders by retiring it). */
async function fromTemplates(store: Store, order: Order, at: string, tx?: WriteTx): Promise<OrderChecklist> {
  const scope = { livemode: order.livemode, trade: order.trade, accountId: order.account_id };
  const active = await store.checklists.inForce(scope, tx);
  const templates = templatesFor(active, order);
  const planned = await planTemplate(store, order, tx);
  if (planned && !templates.some((t) => t.id === planned.id)) templates.push(planned);
  return fixChecklist(order.id, templates, at);
}

async function planTemplate(store: Store, order: Order, tx?: WriteTx) {
  const occurrence = await store.maintenance.occurrenceOfOrder(order.id, tx);
  if (!occurrence) return undefined;
  const plan = await store.maintenance.planById(occurrence.planId, tx);
  if (!plan?.checklistTemplateId) return undefined;
  const template = await store.checklists.templateById(plan.checklistTemplateId, tx);
  return template && template.accountId === order.account_id && template.trade === order.trade
    ? template
    : undefined;
}

/** An order's checklist, and whether it is fixed; not fixed: what the templates give it now (or nothing,
 * for an order that ended without one). */
export async function checklistOf(
  store: Store,
  order: Order,
  now: Date,
  tx?: WriteTx,
): Promise<{ checklist: OrderChecklist; fixed: boolean }> {
  const fixed = await store.checklists.orderChecklist(order.id, tx);
  if (fixed) return { checklist: fixed, fixed: true };
  const at = now.toISOString();
  if (ENDED.includes(order.status)) {
    return { checklist: { orderId: order.id, templateIds: [], items: [], fixedAt: at }, fixed: false };
  }
  return { checklist: await fromTemplates(store, order, at, tx), fixed: false };
}

/** The statuses of a job under way, in which its contractor's read or answers fix its checklist (an
 * offered contractor reads what the job would ask, and fixes nothing). */
export const FIXING_STATUSES: readonly string[] = ["accepted", "en_route", "on_site"];

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
 * fixed there if it was not yet and the templates give it items). As few statements as the case needs:
 * a job whose templates give it no items (the most) writes nothing (an ended order without a fixed
 * checklist has none: checklistOf), and the answers are read only when a required item could lack one
 * (a checklist fixed here has none yet). */
export async function completionRequirements(
  store: Store,
  tx: WriteTx,
  order: Order,
  now: Date,
): Promise<CompletionRequirements> {
  const held = await store.checklists.orderChecklist(order.id, tx);
  if (!held) {
    const fresh = await fromTemplates(store, order, now.toISOString(), tx);
    if (fresh.items.length === 0) return { checklist: { items: [], answered: new Set() } };
    const fixed = await store.checklists.fixOrderChecklist(fresh, tx);
    return { checklist: { items: fixed.items, answered: new Set() } };
  }
  if (!held.items.some((i) => i.required)) return { checklist: { items: held.items, answered: new Set() } };
  const answers = await store.checklists.answers(order.id, tx);
  return { checklist: { items: held.items, answered: new Set(answers.map((a) => a.itemId)) } };
}

/**
 * Saves a contractor's answers to its job's checklist (fixed first while the job is under way) in one write
 * transaction, the order's row locked: each answer that changes what the job holds sealed as
 * order.checklist_answered with its row; the checklist and its answers after, or the refusal (404 for a
 * job that is not the contractor's, 422 for an answer at fault, 409 off site). Used by the contractor's
 * operation and the sandbox's simulated contractors.
 */
export async function saveAnswers(
  services: Pick<Services, "store" | "refs" | "now">,
  contractor: ContractorKey,
  orderId: string,
  answers: readonly AnswerInput[],
): Promise<{ checklist: OrderChecklist; fixed: boolean; answers: ChecklistAnswer[] } | ApiError> {
  const { store, refs } = services;
  const now = services.now();
  const at = now.toISOString();
  const actor = `contractor:${contractor.contractorId}` as const;
  return store.write(
    async (tx) => {
      const order = await store.orders.byId(orderId, tx, true);
      if (
        !order ||
        order.contractor_id !== contractor.contractorId ||
        order.livemode !== contractor.livemode
      ) {
        return new ApiError("not_found", `You have no job ${orderId}.`);
      }
      const { checklist, fixed } = FIXING_STATUSES.includes(order.status)
        ? { checklist: await fixedChecklist(store, tx, order, now), fixed: true }
        : await checklistOf(store, order, now, tx);
      const held = await store.checklists.answers(order.id, tx);
      const photos = new Set(
        (await store.attachments.ofOrder(order.id, tx)).filter((a) => a.kind === "photo").map((a) => a.id),
      );
      const decision = decideAnswers(checklist, held, answers, order.status, photos);
      if (decision.kind === "refused") {
        return new ApiError(decision.code, decision.message, {
          ...(decision.errors ? { errors: decision.errors } : {}),
          ...(decision.currentStatus ? { extra: { current_status: decision.currentStatus } } : {}),
        });
      }
      const refOf = (id: string) => refs.of(order.account_id, id);
      for (const { item, value } of decision.changed) {
        const entry = sealRecord({
          kind: "order.checklist_answered",
          at,
          accountId: order.account_id,
          livemode: order.livemode,
          orderId: order.id,
          actor,
          refOf,
          data: {
            item_id: item.item_id,
            template_id: item.template_id,
            label: item.label,
            kind: item.kind,
            value,
            ...(item.kind === "number" && item.unit ? { unit: item.unit } : {}),
            contractor_id: contractor.contractorId,
          },
        });
        tx.appendAudit(entry);
        await store.checklists.saveAnswer(
          {
            orderId: order.id,
            itemId: item.item_id,
            value,
            answeredAt: at,
            answeredBy: actor,
            seal: entry.seal,
          },
          tx,
        );
      }
      return { checklist, fixed, answers: await store.checklists.answers(order.id, tx) };
    },
    { orders: [orderId] },
  );
}
