// Checklists (issue 32, proof of work): the items a job's contractor answers on site, the rules an answer
// must meet, which templates an order gets, and the completion gate. Pure: the operations read and write
// templates, an order's fixed checklist and its answers (operations/orders/checklist-*.ts).
//
// A template is never edited: it is created and later retired, and an order's checklist is a copy of the
// items of the templates in force when it was fixed, so a job under way never changes under its contractor.

import type { FieldError } from "../../errors.js";
import { type CompletionEvidence, type MissingProof, missingForCompletion } from "./completion-gate.js";
import type { Refusal } from "./order.js";

/** The limits of a template, one place for the schemas and the docs. */
export const CHECKLIST_LIMITS = {
  itemsPerTemplate: 50,
  nameLength: 100,
  labelLength: 200,
  unitLength: 20,
  /** The most a text item may allow, and what it allows when its template says nothing. */
  textMaxLength: 2000,
  textDefaultMaxLength: 500,
  /** Templates in force at once for one trade, per account and for the service. */
  activeTemplatesPerTrade: 10,
  /** Answers in one request (an offline phone's queue sends them together). */
  answersPerRequest: 100,
} as const;

export const ITEM_KINDS = ["yes_no", "number", "text", "photo"] as const;
type ItemKind = (typeof ITEM_KINDS)[number];

/** One item of a checklist, as a template holds it and an order's checklist copies it. */
export interface ChecklistItem {
  item_id: string;
  label: string;
  kind: ItemKind;
  /** Completion is refused while a required item is unanswered. */
  required: boolean;
  /** number: the unit its value is in (shown, not converted), and its inclusive range. */
  unit?: string | null;
  min?: number | null;
  max?: number | null;
  /** text: the most characters an answer may hold. */
  max_length?: number;
}

/** A template: the items of a trade's checklist, for the whole service (accountId null) or one account. */
export interface ChecklistTemplate {
  id: string;
  livemode: boolean;
  /** null: the service's, managed by the dispatch team; else the account's own. */
  accountId: string | null;
  trade: string;
  name: string;
  /** An account's template that stands instead of the service's templates of its trade (not beside). */
  replacesService: boolean;
  items: ChecklistItem[];
  createdAt: string;
  createdBy: string;
  retiredAt: string | null;
}

/** An item of an order's checklist: the template's item, with the template it came from. */
export interface OrderChecklistItem extends ChecklistItem {
  template_id: string;
}

/** An order's checklist, fixed once: the items of the templates in force then. */
export interface OrderChecklist {
  orderId: string;
  templateIds: string[];
  items: OrderChecklistItem[];
  fixedAt: string;
}

/** An answer's value: yes_no a boolean, number a number, text a string, photo an attachment id. */
export type AnswerValue = boolean | number | string;

/** An answer as stored: its value, when and by whom, and the seal of its record. */
export interface ChecklistAnswer {
  orderId: string;
  itemId: string;
  value: AnswerValue;
  answeredAt: string;
  answeredBy: string;
  seal: string;
}

/** The templates an order of `trade` placed by `accountId` gets, of those in force in its mode: the
 * service's first, then the account's own; none of the service's when one of the account's replaces them. */
export function templatesFor(
  active: readonly ChecklistTemplate[],
  order: { trade: string; account_id: string; livemode: boolean },
): ChecklistTemplate[] {
  const inForce = active.filter(
    (t) => t.retiredAt === null && t.trade === order.trade && t.livemode === order.livemode,
  );
  const own = inForce.filter((t) => t.accountId === order.account_id);
  const service = own.some((t) => t.replacesService) ? [] : inForce.filter((t) => t.accountId === null);
  const byAge = (a: ChecklistTemplate, b: ChecklistTemplate) =>
    a.createdAt.localeCompare(b.createdAt) || a.id.localeCompare(b.id);
  return [...service.sort(byAge), ...own.sort(byAge)];
}

/** An order's checklist fixed from its templates. */
export function fixChecklist(
  orderId: string,
  templates: readonly ChecklistTemplate[],
  at: string,
): OrderChecklist {
  return {
    orderId,
    templateIds: templates.map((t) => t.id),
    items: templates.flatMap((t) => t.items.map((item) => ({ ...item, template_id: t.id }))),
    fixedAt: at,
  };
}

/** Why `value` does not answer `item` (a message for its field), or null when it does. `photos`: the ids
 * of the order's attachments that are photos. */
export function answerError(
  item: ChecklistItem,
  value: AnswerValue,
  photos: ReadonlySet<string>,
): string | null {
  switch (item.kind) {
    case "yes_no":
      return typeof value === "boolean" ? null : "must be true or false (a yes/no item)";
    case "number": {
      if (typeof value !== "number" || !Number.isFinite(value)) return "must be a number (a number item)";
      const unit = item.unit ? ` ${item.unit}` : "";
      if (item.min != null && value < item.min) return `must be at least ${item.min}${unit}`;
      if (item.max != null && value > item.max) return `must be at most ${item.max}${unit}`;
      return null;
    }
    case "text": {
      if (typeof value !== "string") return "must be a string (a text item)";
      if (value.trim() === "") return "must not be empty";
      const max = item.max_length ?? CHECKLIST_LIMITS.textDefaultMaxLength;
      return [...value].length > max ? `must be at most ${max} characters` : null;
    }
    case "photo":
      if (typeof value !== "string") return "must be the attachment_id of a photo of this order";
      return photos.has(value) ? null : `no photo ${value} on this order: upload it first, then name it`;
  }
}

/** Answers as a contractor sends them. */
export interface AnswerInput {
  item_id: string;
  value: AnswerValue;
}

/** What saving a batch of answers comes to: the answers that change something, and those the order holds
 * already (a re-sent queue: accepted, nothing written), or the refusal. */
export type AnswerDecision =
  | { kind: "answers"; changed: Array<{ item: OrderChecklistItem; value: AnswerValue }>; unchanged: number }
  | Refusal;

/** The statuses in which answers may be given or changed: the contractor is at the site. */
const ANSWER_STATUSES: readonly string[] = ["on_site"];

/**
 * Decides a batch of answers to an order's checklist: every answer checked against its item (all faults
 * named, as field errors of `answers.<i>`), then, when any of them changes what the order holds, the job
 * must be on site. Answers equal to those held are accepted in any status, so a phone's offline queue
 * can be sent again after the job moved on.
 */
export function decideAnswers(
  checklist: OrderChecklist,
  held: readonly ChecklistAnswer[],
  answers: readonly AnswerInput[],
  status: string,
  photos: ReadonlySet<string>,
): AnswerDecision {
  const items = new Map(checklist.items.map((i) => [i.item_id, i]));
  const current = new Map(held.map((a) => [a.itemId, a.value]));
  const errors: FieldError[] = [];
  const seen = new Set<string>();
  const changed: Array<{ item: OrderChecklistItem; value: AnswerValue }> = [];
  let unchanged = 0;
  answers.forEach((answer, i) => {
    const item = items.get(answer.item_id);
    if (!item) {
      errors.push({
        field: `answers.${i}.item_id`,
        message: `no item ${answer.item_id} on this job's checklist`,
      });
      return;
    }
    if (seen.has(item.item_id)) {
      errors.push({
        field: `answers.${i}.item_id`,
        message: `${item.item_id} is answered twice in this request`,
      });
      return;
    }
    seen.add(item.item_id);
    const fault = answerError(item, answer.value, photos);
    if (fault) {
      errors.push({ field: `answers.${i}.value`, message: fault });
      return;
    }
    if (current.get(item.item_id) === answer.value) unchanged++;
    else changed.push({ item, value: answer.value });
  });
  if (errors.length > 0) {
    const fields = [...new Set(errors.map((e) => e.field))];
    return {
      kind: "refused",
      code: "validation_failed",
      message: `Invalid request: ${fields.join(", ")}.`,
      errors,
    };
  }
  if (changed.length > 0 && !ANSWER_STATUSES.includes(status)) {
    return {
      kind: "refused",
      code: "invalid_transition",
      message: `A checklist is answered while the job is on site; this one is ${status} (an answer it holds already may be sent again).`,
      currentStatus: status,
    };
  }
  return { kind: "answers", changed, unchanged };
}

/** The required items of `checklist` that `answered` (item ids) does not answer, in the checklist's order. */
export function unansweredRequired(
  checklist: { items: readonly OrderChecklistItem[] },
  answered: ReadonlySet<string>,
): OrderChecklistItem[] {
  return checklist.items.filter((i) => i.required && !answered.has(i.item_id));
}

/** What an order needs before it may be completed: its checklist's required items answered and the proof
 * its account requires (completion-gate.ts). Each is checked by completionRefusal. */
export interface CompletionRequirements {
  checklist: { items: readonly OrderChecklistItem[]; answered: ReadonlySet<string> };
  /** The account's proof requirements and what the order holds; absent or undefined: none required. */
  proof?: CompletionEvidence | undefined;
}

/** The completion gate: null when the order may be completed, else the refusal naming everything missing
 * (409 completion_requirements_unmet: `missing`, each with its requirement; `unanswered`, the checklist's
 * required items with their ids and labels, when any). */
export function completionRefusal(requirements: CompletionRequirements): Refusal | null {
  const unanswered = unansweredRequired(requirements.checklist, requirements.checklist.answered);
  const missing: MissingProof[] = [
    ...unanswered.map((i) => ({
      requirement: "checklist_item" as const,
      item_id: i.item_id,
      label: i.label,
      message: `Answer the checklist's "${i.label}".`,
    })),
    ...(requirements.proof ? missingForCompletion(requirements.proof) : []),
  ];
  if (missing.length === 0) return null;
  return {
    kind: "refused",
    code: "completion_requirements_unmet",
    message: `The job cannot be completed yet: ${missing.map((m) => m.message).join(" ")}`,
    extra: {
      missing,
      ...(unanswered.length > 0
        ? { unanswered: unanswered.map((i) => ({ item_id: i.item_id, label: i.label })) }
        : {}),
    },
  };
}
