// Checklists (migration 0030): templates, orders' fixed checklists and their answers, each mapped to and
// from its row here. Items and values are kept as JSON text (the same on SQLite and PostgreSQL).

import type { Kysely } from "kysely";
import type {
  AnswerValue,
  ChecklistAnswer,
  ChecklistItem,
  ChecklistTemplate,
  OrderChecklist,
  OrderChecklistItem,
} from "../domain/orders/checklist.js";
import type {
  ChecklistAnswersTable,
  ChecklistTemplatesTable,
  Database,
  OrderChecklistsTable,
} from "./schema.js";
import type { ChecklistStore, WriteTx } from "./store.js";
import { trxOf } from "./write-tx.js";

function templateOf(row: ChecklistTemplatesTable): ChecklistTemplate {
  return {
    id: row.id,
    livemode: Number(row.livemode) === 1,
    accountId: row.account_id,
    trade: row.trade,
    name: row.name,
    replacesService: Number(row.replaces_service) === 1,
    items: JSON.parse(row.items) as ChecklistItem[],
    createdAt: row.created_at,
    createdBy: row.created_by,
    retiredAt: row.retired_at,
  };
}

function checklistOf(row: OrderChecklistsTable): OrderChecklist {
  return {
    orderId: row.order_id,
    templateIds: JSON.parse(row.template_ids) as string[],
    items: JSON.parse(row.items) as OrderChecklistItem[],
    fixedAt: row.fixed_at,
  };
}

function answerOf(row: ChecklistAnswersTable): ChecklistAnswer {
  return {
    orderId: row.order_id,
    itemId: row.item_id,
    value: JSON.parse(row.value) as AnswerValue,
    answeredAt: row.answered_at,
    answeredBy: row.answered_by,
    seal: row.seal,
  };
}

export class KyselyChecklistStore implements ChecklistStore {
  constructor(private readonly db: Kysely<Database>) {}

  async insertTemplate(t: ChecklistTemplate, tx: WriteTx): Promise<void> {
    await trxOf(tx, this.db)
      .insertInto("checklist_templates")
      .values({
        id: t.id,
        livemode: t.livemode ? 1 : 0,
        account_id: t.accountId,
        trade: t.trade,
        name: t.name,
        replaces_service: t.replacesService ? 1 : 0,
        items: JSON.stringify(t.items),
        created_at: t.createdAt,
        created_by: t.createdBy,
        retired_at: t.retiredAt,
        retired_by: null,
      })
      .execute();
  }

  async templateById(id: string, tx?: WriteTx): Promise<ChecklistTemplate | undefined> {
    const row = await trxOf(tx, this.db)
      .selectFrom("checklist_templates")
      .selectAll()
      .where("id", "=", id)
      .executeTakeFirst();
    return row === undefined ? undefined : templateOf(row);
  }

  async templates(
    filter: { livemode: boolean; accountId?: string | null; trade?: string; includeRetired?: boolean },
    tx?: WriteTx,
  ): Promise<ChecklistTemplate[]> {
    let q = trxOf(tx, this.db)
      .selectFrom("checklist_templates")
      .selectAll()
      .where("livemode", "=", filter.livemode ? 1 : 0);
    if (filter.accountId === null) q = q.where("account_id", "is", null);
    else if (filter.accountId !== undefined) q = q.where("account_id", "=", filter.accountId);
    if (filter.trade !== undefined) q = q.where("trade", "=", filter.trade);
    if (!filter.includeRetired) q = q.where("retired_at", "is", null);
    const rows = await q.orderBy("created_at").orderBy("id").execute();
    return rows.map(templateOf);
  }

  async inForce(
    order: { livemode: boolean; trade: string; accountId: string },
    tx?: WriteTx,
  ): Promise<ChecklistTemplate[]> {
    const rows = await trxOf(tx, this.db)
      .selectFrom("checklist_templates")
      .selectAll()
      .where("livemode", "=", order.livemode ? 1 : 0)
      .where("trade", "=", order.trade)
      .where("retired_at", "is", null)
      .where((eb) => eb.or([eb("account_id", "is", null), eb("account_id", "=", order.accountId)]))
      .orderBy("created_at")
      .orderBy("id")
      .execute();
    return rows.map(templateOf);
  }

  async retireTemplate(id: string, at: string, by: string, tx: WriteTx): Promise<boolean> {
    const result = await trxOf(tx, this.db)
      .updateTable("checklist_templates")
      .set({ retired_at: at, retired_by: by })
      .where("id", "=", id)
      .where("retired_at", "is", null)
      .executeTakeFirst();
    return Number(result.numUpdatedRows) > 0;
  }

  async orderChecklist(orderId: string, tx?: WriteTx): Promise<OrderChecklist | undefined> {
    const row = await trxOf(tx, this.db)
      .selectFrom("order_checklists")
      .selectAll()
      .where("order_id", "=", orderId)
      .executeTakeFirst();
    return row === undefined ? undefined : checklistOf(row);
  }

  async fixOrderChecklist(c: OrderChecklist, tx: WriteTx): Promise<OrderChecklist> {
    const inserted = await trxOf(tx, this.db)
      .insertInto("order_checklists")
      .values({
        order_id: c.orderId,
        template_ids: JSON.stringify(c.templateIds),
        items: JSON.stringify(c.items),
        fixed_at: c.fixedAt,
      })
      .onConflict((oc) => oc.column("order_id").doNothing())
      .returningAll()
      .executeTakeFirst();
    if (inserted) return checklistOf(inserted);
    // Fixed meanwhile (another request's transaction): that one stands.
    const fixed = await this.orderChecklist(c.orderId, tx);
    if (!fixed) throw new Error(`order ${c.orderId}: its checklist was not written`);
    return fixed;
  }

  async answers(orderId: string, tx?: WriteTx): Promise<ChecklistAnswer[]> {
    const rows = await trxOf(tx, this.db)
      .selectFrom("checklist_answers")
      .selectAll()
      .where("order_id", "=", orderId)
      .execute();
    return rows.map(answerOf);
  }

  async saveAnswer(a: ChecklistAnswer, tx: WriteTx): Promise<void> {
    const row = {
      order_id: a.orderId,
      item_id: a.itemId,
      value: JSON.stringify(a.value),
      answered_at: a.answeredAt,
      answered_by: a.answeredBy,
      seal: a.seal,
    };
    await trxOf(tx, this.db)
      .insertInto("checklist_answers")
      .values(row)
      .onConflict((oc) =>
        oc.columns(["order_id", "item_id"]).doUpdateSet({
          value: row.value,
          answered_at: row.answered_at,
          answered_by: row.answered_by,
          seal: row.seal,
        }),
      )
      .execute();
  }
}
