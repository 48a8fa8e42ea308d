// The contractor pools: seeding and importing (with their records), flags, loading for the matcher, and
// the jobs each contractor holds.

import { createHash } from "node:crypto";
import { type Insertable, type Kysely, type Selectable, type SelectQueryBuilder, sql } from "kysely";
import type { AuditEntry } from "../audit/record.js";
import type { Clock } from "../clock.js";
import type { Commitment } from "../domain/commitments.js";
import type { Contractor } from "../domain/contractor.js";
import { contractorCalendar } from "../domain/contractor-calendar.js";
import { WORK_DONE_STATUSES } from "../domain/orders/statuses.js";
import { CONTRACTOR_CHANGED_EVENT } from "../domain/pool-events.js";
import type { RatingTally } from "../domain/ratings.js";
import type { TradeCode } from "../domain/trades.js";
import type { StateCode } from "../domain/us-regions.js";
import type { AuditStore } from "./audit-store.js";
import { loadCommitments } from "./commitment-ledger.js";
import { type Dialect, inSnapshot } from "./dialect.js";
import type { OrderEventStore, PoolEvent } from "./order-event-store.js";
import type { ContractorsTable, ContractorTimeOffTable, Database } from "./schema.js";
import type {
  CapacityDrift,
  ContractorFilter,
  ContractorListing,
  ContractorRecord,
  ContractorStore,
  HeldOrder,
  NewContractor,
  WriteTx,
} from "./store.js";
import { trxOf } from "./write-tx.js";

const CHUNK = 500;

/** The columns the dispatch team reads: everything but contact details. */
const LISTING_COLUMNS = [
  "id",
  "pool",
  "name",
  "trades",
  "states",
  "home_zip",
  "lat",
  "lon",
  "service_radius_miles",
  "hourly_rate_cents",
  "emergency_capable",
  "max_active_jobs",
  "active_jobs",
  "rating",
  "response_minutes",
  "active",
  "excluded",
  "insurance_verified_until",
  "license_verified_until",
  "hours",
  "created_at",
  "updated_at",
  "rating_count",
  "rating_quality_sum",
  "rating_timeliness_sum",
  "rating_communication_sum",
  "rating_value_sum",
  "rated_at",
] as const satisfies ReadonlyArray<keyof ContractorsTable>;

/** What a plan of a contractor's day relies on: its standing, reach, calendar, limits and compliance (and
 * updated_at, which every change of them moves). Not active_jobs: the plan's own assignments move it. */
const FINGERPRINT_COLUMNS = [
  "id",
  "pool",
  "trades",
  "states",
  "lat",
  "lon",
  "service_radius_miles",
  "max_active_jobs",
  "active",
  "excluded",
  "insurance_verified_until",
  "license_verified_until",
  "hours",
  "updated_at",
] as const satisfies ReadonlyArray<keyof ContractorsTable>;

/** A LIKE pattern matching `text` anywhere, its wildcards escaped with `!`. */
function containing(text: string): string {
  return `%${text.toLowerCase().replace(/[!%_]/g, (c) => `!${c}`)}%`;
}

/** The directory's filters on a query of contractors. Trades and states are JSON arrays of codes, so
 * `"code"` (quotes included) occurs in the text only for a code in the array. */
function filtered<O>(
  query: SelectQueryBuilder<Database, "contractors", O>,
  f: ContractorFilter,
): SelectQueryBuilder<Database, "contractors", O> {
  let q = query.where("pool", "=", f.pool);
  if (f.trade !== undefined) q = q.where("trades", "like", `%"${f.trade}"%`);
  if (f.state !== undefined) q = q.where("states", "like", `%"${f.state}"%`);
  if (f.standing === "active") q = q.where("active", "=", 1).where("excluded", "=", 0);
  if (f.standing === "inactive") q = q.where("active", "=", 0).where("excluded", "=", 0);
  if (f.standing === "excluded") q = q.where("excluded", "=", 1);
  if (f.name !== undefined) q = q.where(sql<boolean>`lower(name) LIKE ${containing(f.name)} ESCAPE '!'`);
  const box = f.box;
  if (box) {
    q = q
      .where("lat", ">=", box.minLat)
      .where("lat", "<=", box.maxLat)
      .where("lon", ">=", box.minLon)
      .where("lon", "<=", box.maxLon);
  }
  return q;
}

const count = (v: unknown) => (v === null || v === undefined ? 0 : Number(v));

/** A contractor's tally of ratings, from its row's columns (migration 0036). */
export function tallyOfRow(
  row: Pick<
    Selectable<ContractorsTable>,
    | "rating_count"
    | "rating_quality_sum"
    | "rating_timeliness_sum"
    | "rating_communication_sum"
    | "rating_value_sum"
  >,
): RatingTally {
  return {
    count: count(row.rating_count),
    quality: count(row.rating_quality_sum),
    timeliness: count(row.rating_timeliness_sum),
    communication: count(row.rating_communication_sum),
    value: count(row.rating_value_sum),
  };
}

function toContractor(
  row: Selectable<ContractorsTable>,
  timeOff: ReadonlyArray<{ start: number; end: number }> = [],
): Contractor {
  const states = JSON.parse(row.states) as StateCode[];
  const calendar = contractorCalendar(row.hours ?? null, row.home_zip, states, timeOff);
  const ratings = tallyOfRow(row);
  return {
    ...(calendar ? { calendar } : {}),
    ...(ratings.count > 0 ? { ratings } : {}),
    id: row.id,
    pool: row.pool,
    trades: JSON.parse(row.trades) as TradeCode[],
    states,
    lat: row.lat,
    lon: row.lon,
    serviceRadiusMiles: row.service_radius_miles,
    hourlyRateCents: Number(row.hourly_rate_cents),
    emergencyCapable: row.emergency_capable === 1,
    maxActiveJobs: row.max_active_jobs,
    rating: row.rating,
    responseMinutes: row.response_minutes,
    active: row.active === 1,
    excluded: row.excluded === 1,
    insuranceVerifiedUntil: row.insurance_verified_until ?? null,
    licenseVerifiedUntil: row.license_verified_until ?? null,
  };
}

function toRow(c: NewContractor, now: string): Insertable<ContractorsTable> {
  return {
    id: c.id,
    pool: c.pool,
    external_ref: c.externalRef,
    name: c.name,
    email: c.email,
    phone: c.phone,
    trades: JSON.stringify(c.trades),
    states: JSON.stringify(c.states),
    home_zip: c.homeZip,
    lat: c.lat,
    lon: c.lon,
    service_radius_miles: c.serviceRadiusMiles,
    hourly_rate_cents: c.hourlyRateCents,
    emergency_capable: c.emergencyCapable ? 1 : 0,
    max_active_jobs: c.maxActiveJobs,
    rating: c.rating,
    response_minutes: c.responseMinutes,
    active: c.active ? 1 : 0,
    excluded: c.excluded ? 1 : 0,
    insurance_verified_until: c.insuranceVerifiedUntil ?? null,
    license_verified_until: c.licenseVerifiedUntil ?? null,
    hours: c.hours || null,
    created_at: now,
    updated_at: now,
  };
}

/** The stream's report of a change to the pool, with the audit record that holds it: which change (the
 * record's kind), of which contractor (null: many, a pool import), and the record's seal. */
function contractorChanged(audit: AuditEntry, contractorId: string | null): PoolEvent {
  return {
    type: CONTRACTOR_CHANGED_EVENT,
    livemode: audit.livemode === 1,
    createdAt: audit.created_at,
    payload: { change: audit.kind, contractor_id: contractorId, seal: audit.seal },
  };
}

export class KyselyContractorStore implements ContractorStore {
  constructor(
    private readonly db: Kysely<Database>,
    private readonly audit: AuditStore,
    private readonly clock: Clock,
    private readonly dialect: Dialect,
    /** Where a change to a contractor is reported (pool.contractor_changed), in the change's transaction. */
    private readonly events: Pick<OrderEventStore, "transactionWithEvents">,
  ) {}

  async count(pool: "sandbox" | "live"): Promise<number> {
    const row = await this.db
      .selectFrom("contractors")
      .select((eb) => eb.fn.countAll<number>().as("n"))
      .where("pool", "=", pool)
      .executeTakeFirstOrThrow();
    return Number(row.n);
  }

  async insert(rows: NewContractor[], audit: AuditEntry): Promise<void> {
    const now = this.clock().toISOString();
    await this.db.transaction().execute(async (trx) => {
      await this.audit.writeEntries(trx, [audit]);
      for (let i = 0; i < rows.length; i += CHUNK) {
        // Ids are deterministic for the sandbox pool: a second process seeding at the same time skips them.
        await trx
          .insertInto("contractors")
          .values(rows.slice(i, i + CHUNK).map((c) => toRow(c, now)))
          .onConflict((oc) => oc.column("id").doNothing())
          .execute();
      }
    });
  }

  async upsert(
    rows: NewContractor[],
    audit: (counts: { inserted: number; updated: number }) => AuditEntry,
  ): Promise<{ inserted: number; updated: number }> {
    const now = this.clock().toISOString();
    let inserted = 0;
    let updated = 0;
    await this.events.transactionWithEvents(async (trx, publish) => {
      for (const c of rows) {
        const existing = await trx
          .selectFrom("contractors")
          .select("id")
          .where("pool", "=", c.pool)
          .where("external_ref", "=", c.externalRef)
          .executeTakeFirst();
        if (existing) {
          const { id: _id, created_at: _created, ...changes } = toRow(c, now);
          await trx.updateTable("contractors").set(changes).where("id", "=", existing.id).execute();
          updated++;
        } else {
          await trx.insertInto("contractors").values(toRow(c, now)).execute();
          inserted++;
        }
      }
      const entry = audit({ inserted, updated });
      await this.audit.writeEntries(trx, [entry]);
      if (inserted + updated > 0) publish(contractorChanged(entry, null));
    });
    return { inserted, updated };
  }

  async standing(id: string, tx?: WriteTx) {
    const row = await trxOf(tx, this.db)
      .selectFrom("contractors")
      .select(["pool", "active", "excluded", "insurance_verified_until", "license_verified_until"])
      .where("id", "=", id)
      .executeTakeFirst();
    return row
      ? {
          pool: row.pool,
          active: Number(row.active) === 1,
          excluded: Number(row.excluded) === 1,
          insuranceVerifiedUntil: row.insurance_verified_until ?? null,
          licenseVerifiedUntil: row.license_verified_until ?? null,
        }
      : undefined;
  }

  async fingerprints(ids: readonly string[], since: string, tx?: WriteTx): Promise<Map<string, string>> {
    const out = new Map<string, string>();
    if (ids.length === 0) return out;
    const db = trxOf(tx, this.db);
    const list = [...new Set(ids)];
    let rows = db.selectFrom("contractors").select(FINGERPRINT_COLUMNS).where("id", "in", list);
    // Held until COMMIT where the store locks rows: a change to them waits for the caller's decision.
    if (tx && this.dialect === "postgres") rows = rows.forShare();
    const off = await db
      .selectFrom("contractor_time_off")
      .select(["contractor_id", "id", "start_at", "end_at", "removed_at"])
      .where("contractor_id", "in", list)
      .where("end_at", ">", since)
      .orderBy("contractor_id")
      .orderBy("id")
      .execute();
    for (const row of await rows.execute()) {
      const periods = off
        .filter((o) => o.contractor_id === row.id)
        .map((o) => [o.id, o.start_at, o.end_at, o.removed_at]);
      const values = FINGERPRINT_COLUMNS.map((c) => {
        const v = (row as Record<string, unknown>)[c];
        return typeof v === "bigint" ? Number(v) : (v ?? null);
      });
      const digest = createHash("sha256")
        .update(JSON.stringify([values, periods]))
        .digest("hex");
      out.set(row.id, digest.slice(0, 32));
    }
    return out;
  }

  async ranToday(job: string, day: string, livemode: boolean): Promise<boolean> {
    const row = await this.db
      .selectFrom("daily_runs")
      .select("job")
      .where("job", "=", job)
      .where("day", "=", day)
      .where("livemode", "=", livemode ? 1 : 0)
      .executeTakeFirst();
    return row !== undefined;
  }

  async backfillSandboxVerification(
    dates: ReadonlyArray<{ id: string; insuranceVerifiedUntil: string; licenseVerifiedUntil: string }>,
    audit: (changed: number) => AuditEntry,
  ): Promise<number> {
    const now = this.clock().toISOString();
    const missing = await this.db
      .selectFrom("contractors")
      .select("id")
      .where("pool", "=", "sandbox")
      .where("insurance_verified_until", "is", null)
      .where("license_verified_until", "is", null)
      .execute();
    if (missing.length === 0) return 0;
    const ids = new Set(missing.map((r) => r.id));
    return this.db.transaction().execute(async (trx) => {
      let changed = 0;
      for (const d of dates) {
        if (!ids.has(d.id)) continue;
        const result = await trx
          .updateTable("contractors")
          .set({
            insurance_verified_until: d.insuranceVerifiedUntil,
            license_verified_until: d.licenseVerifiedUntil,
            updated_at: now,
          })
          .where("id", "=", d.id)
          .where("pool", "=", "sandbox")
          .where("insurance_verified_until", "is", null)
          .where("license_verified_until", "is", null)
          .executeTakeFirst();
        changed += Number(result.numUpdatedRows);
      }
      if (changed > 0) await this.audit.writeEntries(trx, [audit(changed)]);
      return changed;
    });
  }

  async setFlags(id: string, flags: { active?: boolean; excluded?: boolean }, audit: AuditEntry) {
    return this.events.transactionWithEvents(async (trx, publish) => {
      const result = await trx
        .updateTable("contractors")
        .set({
          ...(flags.active === undefined ? {} : { active: flags.active ? 1 : 0 }),
          ...(flags.excluded === undefined ? {} : { excluded: flags.excluded ? 1 : 0 }),
          updated_at: this.clock().toISOString(),
        })
        .where("id", "=", id)
        .executeTakeFirst();
      if (Number(result.numUpdatedRows) === 0) return false;
      await this.audit.writeEntries(trx, [audit]);
      publish(contractorChanged(audit, id));
      return true;
    });
  }

  async load(): Promise<Contractor[]> {
    const rows = await this.db.selectFrom("contractors").selectAll().orderBy("id").execute();
    // Only the time off not yet over matters to matching.
    const off = await this.db
      .selectFrom("contractor_time_off")
      .select(["contractor_id", "start_at", "end_at"])
      .where("end_at", ">", this.clock().toISOString())
      .where("removed_at", "is", null)
      .execute();
    const byContractor = new Map<string, Array<{ start: number; end: number }>>();
    for (const o of off) {
      let list = byContractor.get(o.contractor_id);
      if (!list) {
        list = [];
        byContractor.set(o.contractor_id, list);
      }
      list.push({ start: Date.parse(o.start_at), end: Date.parse(o.end_at) });
    }
    return rows.map((row) => toContractor(row, byContractor.get(row.id)));
  }

  async backfillSandboxHours(
    hours: ReadonlyArray<{ id: string; hours: string }>,
    audit: (changed: number) => AuditEntry,
  ): Promise<number> {
    const missing = await this.db
      .selectFrom("contractors")
      .select("id")
      .where("pool", "=", "sandbox")
      .where("hours", "is", null)
      .execute();
    const ids = new Set(missing.map((r) => r.id));
    const todo = hours.filter((h) => ids.has(h.id));
    if (todo.length === 0) return 0;
    const now = this.clock().toISOString();
    return this.db.transaction().execute(async (trx) => {
      let changed = 0;
      for (const h of todo) {
        const result = await trx
          .updateTable("contractors")
          .set({ hours: h.hours, updated_at: now })
          .where("id", "=", h.id)
          .where("pool", "=", "sandbox")
          .where("hours", "is", null)
          .executeTakeFirst();
        changed += Number(result.numUpdatedRows);
      }
      if (changed > 0) await this.audit.writeEntries(trx, [audit(changed)]);
      return changed;
    });
  }

  timeOff(contractorId: string, after: string): Promise<ContractorTimeOffTable[]> {
    return this.db
      .selectFrom("contractor_time_off")
      .selectAll()
      .where("contractor_id", "=", contractorId)
      .where("end_at", ">", after)
      .where("removed_at", "is", null)
      .orderBy("start_at")
      .orderBy("id")
      .execute();
  }

  timeOffById(id: string): Promise<ContractorTimeOffTable | undefined> {
    return this.db.selectFrom("contractor_time_off").selectAll().where("id", "=", id).executeTakeFirst();
  }

  async addTimeOff(row: ContractorTimeOffTable, audit: AuditEntry): Promise<void> {
    await this.events.transactionWithEvents(async (trx, publish) => {
      await trx.insertInto("contractor_time_off").values(row).execute();
      // The pool's version moves, so every process reloads the calendars.
      await trx
        .updateTable("contractors")
        .set({ updated_at: this.clock().toISOString() })
        .where("id", "=", row.contractor_id)
        .execute();
      await this.audit.writeEntries(trx, [audit]);
      publish(contractorChanged(audit, row.contractor_id));
    });
  }

  async removeTimeOff(contractorId: string, id: string, audit: AuditEntry): Promise<boolean> {
    return this.events.transactionWithEvents(async (trx, publish) => {
      const row = await trx
        .selectFrom("contractor_time_off")
        .select("removed_at")
        .where("id", "=", id)
        .where("contractor_id", "=", contractorId)
        .executeTakeFirst();
      if (!row) return false;
      const result = await trx
        .updateTable("contractor_time_off")
        .set({ removed_at: this.clock().toISOString() })
        .where("id", "=", id)
        .where("removed_at", "is", null)
        .executeTakeFirst();
      // Removed before (by this request's twin, or earlier): the same answer, nothing recorded twice.
      if (Number(result.numUpdatedRows) === 0) return true;
      await trx
        .updateTable("contractors")
        .set({ updated_at: this.clock().toISOString() })
        .where("id", "=", contractorId)
        .execute();
      await this.audit.writeEntries(trx, [audit]);
      publish(contractorChanged(audit, contractorId));
      return true;
    });
  }

  async version(): Promise<string> {
    const row = await this.db
      .selectFrom("contractors")
      .select((eb) => [
        eb.fn.countAll<number>().as("n"),
        eb.fn.max("updated_at").as("latest"),
        // A rating moves a contractor's tally without touching updated_at (which a day's plan relies on).
        eb.fn.max("rated_at").as("rated"),
      ])
      .executeTakeFirstOrThrow();
    return `${Number(row.n)}|${row.latest ?? ""}|${row.rated ?? ""}`;
  }

  async activeJobCounts(): Promise<Array<[string, number]>> {
    const rows = await this.db
      .selectFrom("contractors")
      .select(["id", "active_jobs"])
      .where("active_jobs", ">", 0)
      .execute();
    return rows.map((r) => [r.id, Number(r.active_jobs)]);
  }

  commitments(ids?: readonly string[], tx?: WriteTx): Promise<Array<[string, Commitment]>> {
    return loadCommitments(trxOf(tx, this.db), ids);
  }

  async withCapacity(ids: string[]): Promise<Set<string>> {
    if (ids.length === 0) return new Set();
    const rows = await this.db
      .selectFrom("contractors")
      .select("id")
      .where("id", "in", ids)
      .where("active", "=", 1)
      .where("excluded", "=", 0)
      .whereRef("active_jobs", "<", "max_active_jobs")
      .execute();
    return new Set(rows.map((r) => r.id));
  }

  async capacityDrift(): Promise<CapacityDrift[]> {
    // The three reads in one snapshot: a change committed between them (an offer made while the check
    // runs beside a server) would otherwise show as drift that is not there.
    const { open, holds, counters } = await inSnapshot(this.db, this.dialect, async (trx) => ({
      // What is open: each pending offer, each counter-offer waiting on its account, and each job, holds
      // one unit of its contractor.
      open: await sql<{ order_id: string; contractor_id: string }>`
        SELECT order_id, contractor_id FROM offers WHERE status = 'pending'
        UNION
        SELECT order_id, contractor_id FROM counter_offers WHERE status = 'pending'
        UNION
        SELECT id AS order_id, contractor_id FROM orders
        WHERE status IN ('accepted', 'en_route', 'on_site') AND contractor_id IS NOT NULL`.execute(trx),
      holds: await trx.selectFrom("capacity_holds").select(["order_id", "contractor_id"]).execute(),
      counters: await trx.selectFrom("contractors").select(["id", "active_jobs"]).execute(),
    }));
    const byContractor = new Map<string, CapacityDrift>();
    const entry = (id: string, counter: number): CapacityDrift => {
      let e = byContractor.get(id);
      if (!e) {
        e = { contractorId: id, counter, ledger: 0, open: 0, unheld: [], stale: [] };
        byContractor.set(id, e);
      }
      return e;
    };
    for (const c of counters) entry(c.id, Number(c.active_jobs));
    const held = new Set(holds.map((h) => `${h.order_id}|${h.contractor_id}`));
    const opened = new Set(open.rows.map((o) => `${o.order_id}|${o.contractor_id}`));
    for (const h of holds) {
      const e = entry(h.contractor_id, 0);
      e.ledger++;
      if (!opened.has(`${h.order_id}|${h.contractor_id}`)) e.stale.push(h.order_id);
    }
    for (const o of open.rows) {
      const e = entry(o.contractor_id, 0);
      e.open++;
      if (!held.has(`${o.order_id}|${o.contractor_id}`)) e.unheld.push(o.order_id);
    }
    return [...byContractor.values()].filter(
      (e) => e.counter !== e.open || e.ledger !== e.open || e.unheld.length > 0 || e.stale.length > 0,
    );
  }

  directory(
    filter: ContractorFilter,
    page: { after?: { name: string; id: string }; limit: number },
  ): Promise<ContractorListing[]> {
    // Byte order on both stores (SQLite compares text that way by default): contractors_pool_name_idx.
    const name = this.dialect === "postgres" ? sql<string>`name COLLATE "C"` : sql<string>`name`;
    let q = filtered(this.db.selectFrom("contractors").select(LISTING_COLUMNS), filter);
    const after = page.after;
    if (after) {
      q = q.where(sql<boolean>`(${name} > ${after.name} OR (${name} = ${after.name} AND id > ${after.id}))`);
    }
    return q.orderBy(name).orderBy("id").limit(page.limit).execute();
  }

  locations(filter: ContractorFilter) {
    return filtered(this.db.selectFrom("contractors").select(["id", "lat", "lon"]), filter)
      .orderBy("id")
      .execute();
  }

  async matching(filter: ContractorFilter): Promise<number> {
    const row = await filtered(
      this.db.selectFrom("contractors").select((eb) => eb.fn.countAll<number>().as("n")),
      filter,
    ).executeTakeFirstOrThrow();
    return Number(row.n);
  }

  listings(ids: string[]): Promise<ContractorListing[]> {
    if (ids.length === 0) return Promise.resolve([]);
    return this.db.selectFrom("contractors").select(LISTING_COLUMNS).where("id", "in", ids).execute();
  }

  async records(ids: string[], recallsJudgedBefore: string): Promise<Map<string, ContractorRecord>> {
    const out = new Map<string, ContractorRecord>();
    if (ids.length === 0) return out;
    const list = sql.join(ids);
    // Minutes from the ETA to the arrival; ISO 8601 UTC text of one width compares in time order.
    const minutesLate =
      this.dialect === "postgres"
        ? sql`date_part('epoch', on_site_at::timestamptz - eta_at::timestamptz) / 60.0`
        : sql`(julianday(on_site_at) - julianday(eta_at)) * 1440.0`;
    const rows = await sql<Record<string, unknown>>`
      SELECT c.id,
        o.received, o.accepted, o.declined, o.expired, o.pending,
        j.open_jobs, j.completed, j.cannot_complete, j.arrivals, j.late, j.minutes_late, j.judged, j.recalled
      FROM contractors c
      LEFT JOIN (
        SELECT contractor_id, count(*) AS received,
          sum(CASE WHEN status = 'accepted' THEN 1 ELSE 0 END) AS accepted,
          sum(CASE WHEN status = 'declined' THEN 1 ELSE 0 END) AS declined,
          sum(CASE WHEN status = 'expired' THEN 1 ELSE 0 END) AS expired,
          sum(CASE WHEN status = 'pending' THEN 1 ELSE 0 END) AS pending
        FROM offers WHERE contractor_id IN (${list}) GROUP BY contractor_id
      ) o ON o.contractor_id = c.id
      LEFT JOIN (
        SELECT contractor_id,
          sum(CASE WHEN status IN ('accepted', 'en_route', 'on_site') THEN 1 ELSE 0 END) AS open_jobs,
          sum(CASE WHEN status IN (${sql.raw(WORK_DONE_STATUSES.map((s) => `'${s}'`).join(", "))}) THEN 1 ELSE 0 END) AS completed,
          sum(CASE WHEN status = 'cannot_complete' THEN 1 ELSE 0 END) AS cannot_complete,
          sum(CASE WHEN on_site_at IS NOT NULL AND eta_at IS NOT NULL THEN 1 ELSE 0 END) AS arrivals,
          sum(CASE WHEN on_site_at > eta_at THEN 1 ELSE 0 END) AS late,
          sum(CASE WHEN on_site_at > eta_at THEN ${minutesLate} ELSE 0 END) AS minutes_late,
          sum(CASE WHEN completed_at < ${recallsJudgedBefore} THEN 1 ELSE 0 END) AS judged,
          sum(CASE WHEN completed_at < ${recallsJudgedBefore}
            AND EXISTS (SELECT 1 FROM orders r WHERE r.recall_of = orders.id) THEN 1 ELSE 0 END) AS recalled
        FROM orders WHERE contractor_id IN (${list}) GROUP BY contractor_id
      ) j ON j.contractor_id = c.id
      WHERE c.id IN (${list})`.execute(this.db);
    for (const r of rows.rows) {
      out.set(String(r.id), {
        offersReceived: count(r.received),
        offersAccepted: count(r.accepted),
        offersDeclined: count(r.declined),
        offersExpired: count(r.expired),
        offersPending: count(r.pending),
        openJobs: count(r.open_jobs),
        jobsCompleted: count(r.completed),
        jobsCannotComplete: count(r.cannot_complete),
        arrivals: count(r.arrivals),
        lateArrivals: count(r.late),
        minutesLate: count(r.minutes_late),
        jobsJudged: count(r.judged),
        jobsRecalled: count(r.recalled),
      });
    }
    return out;
  }

  heldOrders(id: string, limit: number): Promise<HeldOrder[]> {
    // orders_contractor_idx (contractor_id, status).
    return this.db
      .selectFrom("orders")
      .select(["id as order_id", "status", "trade", "urgency", "state", "updated_at"])
      .where("contractor_id", "=", id)
      .where("status", "in", ["offered", "accepted", "en_route", "on_site"])
      .orderBy("updated_at", "desc")
      .orderBy("id", "desc")
      .limit(limit)
      .execute();
  }
}
