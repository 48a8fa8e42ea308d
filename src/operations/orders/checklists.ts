// Proof of work (issue 32): an order's checklist and its answers. The contractor holding the job answers
// it while on site (one answer or many at once; an answer sent again is accepted and changes nothing, so
// a phone's offline queue can be replayed), each answer sealed in the order's audit log
// (order.checklist_answered); the account, the contractor and the dispatch team read it. Completion is
// refused while a required item is unanswered (the gate: domain/orders/checklist.ts, run by the command
// runner's completion).

import { z } from "zod";
import {
  CHECKLIST_LIMITS,
  type ChecklistAnswer,
  ITEM_KINDS,
  type OrderChecklist,
  unansweredRequired,
} from "../../domain/orders/checklist.js";
import { ApiError } from "../../errors.js";
import { contractorOf, defineOperation, type OperationContext } from "../kernel/operation.js";
import { sealRef, sealRefSchema } from "../matching/decision-records.js";
import { orderFor } from "./attachment-access.js";
import { checklistOf, FIXING_STATUSES, fixedChecklist, saveAnswers } from "./checklist-state.js";

const orderIdParam = z.string().min(1).max(64).describe("The order's id.");

const answerValueSchema = z
  .union([z.boolean(), z.number(), z.string().max(CHECKLIST_LIMITS.textMaxLength)])
  .describe(
    "yes_no: true or false; number: a number within the item's range, in its unit; text: the text; " +
      "photo: the attachment_id of a photo of this order (upload it first).",
  );

/** An item's fields as a template declares them and a checklist shows them. */
export const itemShape = {
  item_id: z.string().describe("The item's id (cli_...), what an answer names."),
  label: z.string(),
  kind: z.enum(ITEM_KINDS),
  required: z
    .boolean()
    .describe("Completion is refused (409 completion_requirements_unmet) while it is unanswered."),
  unit: z.string().nullable().optional().describe("number: the unit the value is in."),
  min: z.number().nullable().optional().describe("number: the least value accepted."),
  max: z.number().nullable().optional().describe("number: the most value accepted."),
  max_length: z.number().int().optional().describe("text: the most characters an answer may hold."),
};

const checklistSchema = z
  .object({
    order_id: z.string(),
    fixed_at: z.iso
      .datetime()
      .nullable()
      .describe(
        "When the checklist was fixed for the job (copied from the templates in force): when the contractor " +
          "first read or answered it, or completed the job. null: not yet, and what the templates give now is shown.",
      ),
    template_ids: z.array(z.string()),
    items: z.array(
      z.object({
        ...itemShape,
        template_id: z.string(),
        answer: z
          .object({
            value: answerValueSchema,
            answered_at: z.iso.datetime(),
            record: sealRefSchema.describe("The audit record that seals this answer."),
          })
          .nullable(),
      }),
    ),
    unanswered_required: z
      .array(z.object({ item_id: z.string(), label: z.string() }))
      .describe("The required items without an answer: what stands between the job and its completion."),
  })
  .meta({ id: "OrderChecklist" });

function checklistView(
  ctx: OperationContext,
  checklist: OrderChecklist,
  fixed: boolean,
  answers: readonly ChecklistAnswer[],
): z.input<typeof checklistSchema> {
  const byItem = new Map(answers.map((a) => [a.itemId, a]));
  const missing = unansweredRequired(checklist, new Set(byItem.keys()));
  return {
    order_id: checklist.orderId,
    fixed_at: fixed ? checklist.fixedAt : null,
    template_ids: checklist.templateIds,
    items: checklist.items.map((item) => {
      const a = byItem.get(item.item_id);
      return {
        ...item,
        answer: a
          ? {
              value: a.value,
              answered_at: a.answeredAt,
              record: sealRef(ctx.baseUrl, a.seal, "order.checklist_answered", a.answeredAt),
            }
          : null,
      };
    }),
    unanswered_required: missing.map((i) => ({ item_id: i.item_id, label: i.label })),
  };
}

export const orderChecklistOperation = defineOperation({
  id: "orderChecklist",
  name: "order.checklist",
  summary: "Read an order's checklist and its answers",
  description:
    "The items the job's contractor answers on site (from the service's templates of the trade and the " +
    "account's own), each with its answer and the audit record sealing it, and the required items still " +
    "unanswered. The account that owns the order, the contractor holding the job, and the dispatch team may " +
    "read it. The contractor's first read of a job under way fixes its checklist.",
  access: "any_key",
  effect: "read",
  limit: "key",
  http: { method: "GET", path: "/api/orders/:order_id/checklist", input: "params" },
  input: z.strictObject({ order_id: orderIdParam }),
  output: checklistSchema,
  example: { order_id: "ord_0VberZOdAb12Cd34Ef56" },
  async handler(ctx, input) {
    const { order, role } = await orderFor(ctx, input.order_id);
    const { store } = ctx.services;
    const now = ctx.services.now();
    let { checklist, fixed } = await checklistOf(store, order, now);
    if (!fixed && role === "contractor" && FIXING_STATUSES.includes(order.status)) {
      checklist = await store.write((tx) => fixedChecklist(store, tx, order, now));
      fixed = true;
    }
    return checklistView(ctx, checklist, fixed, await store.checklists.answers(order.id));
  },
});

export const contractorChecklistAnswerOperation = defineOperation({
  id: "contractorChecklistAnswer",
  name: "contractor.checklist_answer",
  summary: "Answer items of a job's checklist",
  description:
    "One answer or many (up to 100) to your job's checklist, while you are on site: yes_no true/false, " +
    "number within the item's range, text, or photo (the attachment_id of a photo you added to the order). " +
    "Each answer that changes what the job holds is sealed in the order's audit log " +
    "(order.checklist_answered); an answer may be changed until the job is completed. An answer equal to " +
    "the one held is accepted in any status and writes nothing, so a phone's offline queue may be sent " +
    "again. 422 validation_failed names each answer at fault; 409 invalid_transition when the job is not " +
    "on site. Answers with the checklist as it stands.",
  access: "contractor",
  effect: "write",
  limit: "key",
  http: { method: "POST", path: "/api/contractor/v1/jobs/checklist", input: "body" },
  problems: [404, 409],
  input: z.strictObject({
    order_id: z.string().min(1).max(64),
    answers: z
      .array(
        z.strictObject({
          item_id: z.string().min(1).max(64).describe("The item's id (cli_...) on the job's checklist."),
          value: answerValueSchema,
        }),
      )
      .min(1)
      .max(CHECKLIST_LIMITS.answersPerRequest),
  }),
  output: checklistSchema,
  example: {
    order_id: "ord_0VberZOdAb12Cd34Ef56",
    answers: [{ item_id: "cli_0VberZOdAb12Cd34Ef56", value: true }],
  },
  async handler(ctx, input) {
    const outcome = await saveAnswers(ctx.services, contractorOf(ctx), input.order_id, input.answers);
    if (outcome instanceof ApiError) throw outcome;
    return checklistView(ctx, outcome.checklist, outcome.fixed, outcome.answers);
  },
});
