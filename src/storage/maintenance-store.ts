// Maintenance plans and their occurrences (migration 0042), each mapped to and from its row here. The
// window, exceptions and a move's previous window are kept as JSON text (the same on SQLite and
// PostgreSQL).

import { type Kysely, sql } from "kysely";
import type {
  ComplianceCounts,
  MaintenancePlan,
  OccurrenceState,
  PlanOccurrence,
  PlanStatus,
  PreferredWindow,
} from "../domain/maintenance/plan.js";
import { WORK_DONE_STATUSES } from "../domain/orders/statuses.js";
import type { Database, MaintenancePlansTable, PlanOccurrencesTable } from "./schema.js";
import type { MaintenanceStore, WriteTx } from "./store.js";
import { trxOf } from "./write-tx.js";

function planOf(row: MaintenancePlansTable): MaintenancePlan {
  return {
    id: row.id,
    livemode: Number(row.livemode) === 1,
    accountId: row.account_id,
    siteId: row.site_id,
    assetId: row.asset_id,
    trade: row.trade,
    name: row.name,
    description: row.description,
    checklistTemplateId: row.checklist_template_id,
    durationMinutes: Number(row.duration_minutes),
    recurrence: row.recurrence,
    exceptions: JSON.parse(row.exceptions) as string[],
    startsOn: row.starts_on,
    window: JSON.parse(row.window) as PreferredWindow,
    horizonDays: Number(row.horizon_days),
    nteCents: row.nte_cents === null ? null : Number(row.nte_cents),
    status: row.status as PlanStatus,
    version: Number(row.version),
    generatedUntil: row.generated_until,
    refreshAt: row.refresh_at,
    createdAt: row.created_at,
    createdBy: row.created_by,
    updatedAt: row.updated_at,
    updatedBy: row.updated_by,
    seal: row.seal,
  };
}

function planRow(p: MaintenancePlan): MaintenancePlansTable {
  return {
    id: p.id,
    livemode: p.livemode ? 1 : 0,
    account_id: p.accountId,
    site_id: p.siteId,
    asset_id: p.assetId,
    trade: p.trade,
    name: p.name,
    description: p.description,
    checklist_template_id: p.checklistTemplateId,
    duration_minutes: p.durationMinutes,
    recurrence: p.recurrence,
    exceptions: JSON.stringify(p.exceptions),
    starts_on: p.startsOn,
    window: JSON.stringify(p.window),
    horizon_days: p.horizonDays,
    nte_cents: p.nteCents,
    status: p.status,
    version: p.version,
    generated_until: p.generatedUntil,
    refresh_at: p.refreshAt,
    created_at: p.createdAt,
    created_by: p.createdBy,
    updated_at: p.updatedAt,
    updated_by: p.updatedBy,
    seal: p.seal,
  };
}

function occurrenceOf(row: PlanOccurrencesTable): PlanOccurrence {
  return {
    planId: row.plan_id,
    key: row.occurrence_key,
    livemode: Number(row.livemode) === 1,
    accountId: row.account_id,
    siteId: row.site_id,
    assetId: row.asset_id,
    windowStart: row.window_start,
    windowEnd: row.window_end,
    state: row.state as OccurrenceState,
    orderId: row.order_id,
    reason: row.reason,
    movedFrom:
      row.moved_from === null ? null : (JSON.parse(row.moved_from) as { start: string; end: string }),
    overdueAt: row.overdue_at,
    createdAt: row.created_at,
    updatedAt: row.updated_at,
    seal: row.seal,
  };
}

function occurrenceRow(o: PlanOccurrence): PlanOccurrencesTable {
  return {
    plan_id: o.planId,
    occurrence_key: o.key,
    livemode: o.livemode ? 1 : 0,
    account_id: o.accountId,
    site_id: o.siteId,
    asset_id: o.assetId,
    window_start: o.windowStart,
    window_end: o.windowEnd,
    state: o.state,
    order_id: o.orderId,
    reason: o.reason,
    moved_from: o.movedFrom === null ? null : JSON.stringify(o.movedFrom),
    overdue_at: o.overdueAt,
    created_at: o.createdAt,
    updated_at: o.updatedAt,
    seal: o.seal,
  };
}

export class KyselyMaintenanceStore implements MaintenanceStore {
  constructor(private readonly db: Kysely<Database>) {}

  async insertPlan(plan: MaintenancePlan, tx: WriteTx): Promise<void> {
    await trxOf(tx, this.db).insertInto("maintenance_plans").values(planRow(plan)).execute();
  }

  async updatePlan(plan: MaintenancePlan, tx: WriteTx, options?: { regenerate: boolean }): Promise<void> {
    const {
      id: _id,
      generated_until: _g,
      refresh_at: _r,
      created_at: _c,
      created_by: _b,
      ...changed
    } = planRow(plan);
    await trxOf(tx, this.db)
      .updateTable("maintenance_plans")
      // A changed rule or window is generated again from now on (occurrences claimed keep their rows).
      .set(options?.regenerate ? { ...changed, generated_until: null, refresh_at: null } : changed)
      .where("id", "=", plan.id)
      .execute();
  }

  async planById(id: string, tx?: WriteTx): Promise<MaintenancePlan | undefined> {
    const row = await trxOf(tx, this.db)
      .selectFrom("maintenance_plans")
      .selectAll()
      .where("id", "=", id)
      .executeTakeFirst();
    return row === undefined ? undefined : planOf(row);
  }

  async plans(
    filter: {
      livemode: boolean;
      accountId?: string;
      siteId?: string;
      assetId?: string;
      includeArchived?: boolean;
      after?: string;
      limit: number;
    },
    tx?: WriteTx,
  ): Promise<MaintenancePlan[]> {
    let q = trxOf(tx, this.db)
      .selectFrom("maintenance_plans")
      .selectAll()
      .where("livemode", "=", filter.livemode ? 1 : 0);
    if (filter.accountId !== undefined) q = q.where("account_id", "=", filter.accountId);
    if (filter.siteId !== undefined) q = q.where("site_id", "=", filter.siteId);
    if (filter.assetId !== undefined) q = q.where("asset_id", "=", filter.assetId);
    if (!filter.includeArchived) q = q.where("status", "=", "active");
    if (filter.after !== undefined) q = q.where("id", ">", filter.after);
    const rows = await q.orderBy("id").limit(filter.limit).execute();
    return rows.map(planOf);
  }

  async plansToGenerate(now: string, limit: number): Promise<MaintenancePlan[]> {
    const rows = await this.db
      .selectFrom("maintenance_plans")
      .selectAll()
      .where("status", "=", "active")
      .where((eb) => eb.or([eb("refresh_at", "is", null), eb("refresh_at", "<=", now)]))
      .orderBy("refresh_at")
      .orderBy("id")
      .limit(limit)
      .execute();
    return rows.map(planOf);
  }

  async setGeneratedUntil(
    planId: string,
    version: number,
    until: string,
    refreshAt: string,
    tx: WriteTx,
  ): Promise<void> {
    // Only for the version generated from: a plan changed meanwhile is generated again from its change.
    await trxOf(tx, this.db)
      .updateTable("maintenance_plans")
      .set({ generated_until: until, refresh_at: refreshAt })
      .where("id", "=", planId)
      .where("version", "=", version)
      .execute();
  }

  async claimOccurrence(occurrence: PlanOccurrence, tx: WriteTx): Promise<boolean> {
    const result = await trxOf(tx, this.db)
      .insertInto("plan_occurrences")
      .values(occurrenceRow(occurrence))
      .onConflict((oc) => oc.columns(["plan_id", "occurrence_key"]).doNothing())
      .executeTakeFirst();
    return Number(result.numInsertedOrUpdatedRows ?? 0) === 1;
  }

  async updateOccurrence(occurrence: PlanOccurrence, tx: WriteTx): Promise<void> {
    const { plan_id: _p, occurrence_key: _k, created_at: _c, ...changed } = occurrenceRow(occurrence);
    await trxOf(tx, this.db)
      .updateTable("plan_occurrences")
      .set(changed)
      .where("plan_id", "=", occurrence.planId)
      .where("occurrence_key", "=", occurrence.key)
      .execute();
  }

  async replaceFailed(occurrence: PlanOccurrence, tx: WriteTx): Promise<boolean> {
    const { plan_id: _p, occurrence_key: _k, created_at: _c, ...changed } = occurrenceRow(occurrence);
    const result = await trxOf(tx, this.db)
      .updateTable("plan_occurrences")
      .set(changed)
      .where("plan_id", "=", occurrence.planId)
      .where("occurrence_key", "=", occurrence.key)
      .where("state", "=", "failed")
      .executeTakeFirst();
    return Number(result.numUpdatedRows) === 1;
  }

  async markOverdue(planId: string, key: string, at: string, tx: WriteTx): Promise<boolean> {
    const result = await trxOf(tx, this.db)
      .updateTable("plan_occurrences")
      .set({ overdue_at: at, updated_at: at })
      .where("plan_id", "=", planId)
      .where("occurrence_key", "=", key)
      .where("overdue_at", "is", null)
      .executeTakeFirst();
    return Number(result.numUpdatedRows) === 1;
  }

  async occurrence(planId: string, key: string, tx?: WriteTx): Promise<PlanOccurrence | undefined> {
    const row = await trxOf(tx, this.db)
      .selectFrom("plan_occurrences")
      .selectAll()
      .where("plan_id", "=", planId)
      .where("occurrence_key", "=", key)
      .executeTakeFirst();
    return row === undefined ? undefined : occurrenceOf(row);
  }

  async occurrences(
    filter: {
      livemode: boolean;
      accountId?: string;
      planId?: string;
      siteId?: string;
      /** Windows that end at or after this instant. */
      from?: string;
      /** Windows that start before this instant. */
      until?: string;
      /** Only the generated ones flagged overdue (whenever their window was). */
      overdue?: boolean;
      limit: number;
    },
    tx?: WriteTx,
  ): Promise<PlanOccurrence[]> {
    let q = trxOf(tx, this.db)
      .selectFrom("plan_occurrences")
      .selectAll()
      .where("livemode", "=", filter.livemode ? 1 : 0);
    if (filter.accountId !== undefined) q = q.where("account_id", "=", filter.accountId);
    if (filter.planId !== undefined) q = q.where("plan_id", "=", filter.planId);
    if (filter.siteId !== undefined) q = q.where("site_id", "=", filter.siteId);
    if (filter.from !== undefined) q = q.where("window_end", ">=", filter.from);
    if (filter.until !== undefined) q = q.where("window_start", "<", filter.until);
    if (filter.overdue) q = q.where("overdue_at", "is not", null).where("state", "=", "generated");
    const rows = await q.orderBy("window_start").orderBy("plan_id").limit(filter.limit).execute();
    return rows.map(occurrenceOf);
  }

  async occurrenceOfOrder(orderId: string, tx?: WriteTx): Promise<PlanOccurrence | undefined> {
    const row = await trxOf(tx, this.db)
      .selectFrom("plan_occurrences")
      .selectAll()
      .where("order_id", "=", orderId)
      .executeTakeFirst();
    return row === undefined ? undefined : occurrenceOf(row);
  }

  async complianceCounts(filter: {
    livemode: boolean;
    accountId?: string;
    since: string;
    until: string;
  }): Promise<ComplianceCounts> {
    const rows = await this.complianceRows(filter, false);
    return rows[0]?.counts ?? { ended: 0, skipped: 0, completed_in_window: 0, completed_late: 0, failed: 0 };
  }

  async complianceBySite(filter: {
    livemode: boolean;
    accountId: string;
    since: string;
    until: string;
  }): Promise<Array<{ siteId: string; counts: ComplianceCounts }>> {
    return (await this.complianceRows(filter, true)).map((r) => ({
      siteId: r.siteId as string,
      counts: r.counts,
    }));
  }

  private async complianceRows(
    filter: { livemode: boolean; accountId?: string; since: string; until: string },
    bySite: boolean,
  ): Promise<Array<{ siteId: string | null; counts: ComplianceCounts }>> {
    const done = sql.join(WORK_DONE_STATUSES.map((st) => sql`${st}`));
    const account = filter.accountId === undefined ? sql`` : sql` AND p.account_id = ${filter.accountId}`;
    const site = bySite ? sql`p.site_id` : sql`NULL`;
    const result = await sql<
      Record<keyof ComplianceCounts, number | string | null> & { site_id: string | null }
    >`
      SELECT ${site} AS site_id,
        count(*) AS ended,
        sum(CASE WHEN p.state = 'skipped' THEN 1 ELSE 0 END) AS skipped,
        sum(CASE WHEN p.state = 'completed' THEN 1 ELSE 0 END) AS completed_in_window,
        sum(CASE WHEN p.state = 'generated' AND o.status IN (${done}) THEN 1 ELSE 0 END) AS completed_late,
        sum(CASE WHEN p.state = 'failed' THEN 1 ELSE 0 END) AS failed
      FROM plan_occurrences p LEFT JOIN orders o ON o.id = p.order_id
      WHERE p.livemode = ${filter.livemode ? 1 : 0}${account}
        AND p.window_end >= ${filter.since} AND p.window_end < ${filter.until}
      ${bySite ? sql`GROUP BY p.site_id ORDER BY p.site_id` : sql``}`.execute(this.db);
    const n = (v: number | string | null | undefined) => Number(v ?? 0);
    return result.rows.map((row) => ({
      siteId: row.site_id,
      counts: {
        ended: n(row.ended),
        skipped: n(row.skipped),
        completed_in_window: n(row.completed_in_window),
        completed_late: n(row.completed_late),
        failed: n(row.failed),
      },
    }));
  }

  async endedNotFlagged(before: string, limit: number): Promise<PlanOccurrence[]> {
    const rows = await this.db
      .selectFrom("plan_occurrences")
      .selectAll()
      .where("state", "=", "generated")
      .where("overdue_at", "is", null)
      .where("window_end", "<", before)
      .orderBy("window_end")
      .limit(limit)
      .execute();
    return rows.map(occurrenceOf);
  }
}
