// What a simulated contractor answers to a job's checklist: the sandbox's contractors (sandbox-player.ts)
// and the CLI simulator's (order-play.ts) answer the same way. Plausible values, not random ones: yes to a
// yes/no, a number in the middle of the item's range, a short note, and the photo it added.

import type { AnswerValue, ChecklistItem } from "../domain/orders/checklist.js";

/** A number item's answer: the middle of its range (whole when its bounds are), else its bound or 0. */
function numberAnswer(item: ChecklistItem): number {
  const min = item.min ?? null;
  const max = item.max ?? null;
  if (min !== null && max !== null) {
    const middle = (min + max) / 2;
    return Number.isInteger(min) && Number.isInteger(max) ? Math.round(middle) : middle;
  }
  return Math.min(Math.max(0, min ?? 0), max ?? Number.POSITIVE_INFINITY);
}

/** A simulated contractor's answer to `item`; `photo`: the id of the photo it added (null: none, and a
 * photo item is left unanswered). */
function simulatedAnswer(item: ChecklistItem, photo: string | null, note: string): AnswerValue | null {
  switch (item.kind) {
    case "yes_no":
      return true;
    case "number":
      return numberAnswer(item);
    case "text":
      return note.slice(0, item.max_length ?? 500);
    case "photo":
      return photo;
  }
}

/** The answers a simulated contractor gives to the items of `items` not yet answered (`held`: their ids). */
export function simulatedAnswers(
  items: readonly ChecklistItem[],
  held: ReadonlySet<string>,
  photo: string | null,
  note: string,
): Array<{ item_id: string; value: AnswerValue }> {
  return items.flatMap((item) => {
    const value = held.has(item.item_id) ? null : simulatedAnswer(item, photo, note);
    return value === null ? [] : [{ item_id: item.item_id, value }];
  });
}
