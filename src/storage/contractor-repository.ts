// The contractor pools: seeding and importing (with their records), flags, loading for the matcher, and
// the jobs each contractor holds.

import { type Insertable, type Kysely, type Selectable, sql } from "kysely";
import type { AuditEntry } from "../audit/record.js";
import type { Clock } from "../clock.js";
import type { Contractor } from "../domain/contractor.js";
import type { TradeCode } from "../domain/trades.js";
import type { StateCode } from "../domain/us-regions.js";
import type { AuditStore } from "./audit-store.js";
import type { ContractorsTable, Database } from "./schema.js";
import type { CapacityDrift, ContractorRepository, NewContractor, WriteTx } from "./store.js";
import { trxOf } from "./write-tx.js";

const CHUNK = 500;

function toContractor(row: Selectable<ContractorsTable>): Contractor {
  return {
    id: row.id,
    pool: row.pool,
    trades: JSON.parse(row.trades) as TradeCode[],
    states: JSON.parse(row.states) as StateCode[],
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
    created_at: now,
    updated_at: now,
  };
}

export class KyselyContractorRepository implements ContractorRepository {
  constructor(
    private readonly db: Kysely<Database>,
    private readonly audit: AuditStore,
    private readonly clock: Clock,
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

  async upsertLive(
    rows: NewContractor[],
    audit: (counts: { inserted: number; updated: number }) => AuditEntry,
  ): Promise<{ inserted: number; updated: number }> {
    const now = this.clock().toISOString();
    let inserted = 0;
    let updated = 0;
    await this.db.transaction().execute(async (trx) => {
      for (const c of rows) {
        const existing = await trx
          .selectFrom("contractors")
          .select("id")
          .where("pool", "=", "live")
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
      await this.audit.writeEntries(trx, [audit({ inserted, updated })]);
    });
    return { inserted, updated };
  }

  async standing(id: string, tx?: WriteTx) {
    const row = await trxOf(tx, this.db)
      .selectFrom("contractors")
      .select(["pool", "active", "excluded"])
      .where("id", "=", id)
      .executeTakeFirst();
    return row
      ? { pool: row.pool, active: Number(row.active) === 1, excluded: Number(row.excluded) === 1 }
      : undefined;
  }

  async setFlags(id: string, flags: { active?: boolean; excluded?: boolean }, audit: AuditEntry) {
    return this.db.transaction().execute(async (trx) => {
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
      return true;
    });
  }

  async load(): Promise<Contractor[]> {
    const rows = await this.db.selectFrom("contractors").selectAll().orderBy("id").execute();
    return rows.map(toContractor);
  }

  async version(): Promise<string> {
    const row = await this.db
      .selectFrom("contractors")
      .select((eb) => [eb.fn.countAll<number>().as("n"), eb.fn.max("updated_at").as("latest")])
      .executeTakeFirstOrThrow();
    return `${Number(row.n)}|${row.latest ?? ""}`;
  }

  async activeJobCounts(): Promise<Array<[string, number]>> {
    const rows = await this.db
      .selectFrom("contractors")
      .select(["id", "active_jobs"])
      .where("active_jobs", ">", 0)
      .execute();
    return rows.map((r) => [r.id, Number(r.active_jobs)]);
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
    // What is open: each pending offer, and each job, holds one unit of its contractor.
    const open = await sql<{ order_id: string; contractor_id: string }>`
      SELECT order_id, contractor_id FROM offers WHERE status = 'pending'
      UNION
      SELECT id AS order_id, contractor_id FROM orders
      WHERE status IN ('accepted', 'en_route', 'on_site') AND contractor_id IS NOT NULL`.execute(this.db);
    const holds = await this.db.selectFrom("capacity_holds").select(["order_id", "contractor_id"]).execute();
    const counters = await this.db.selectFrom("contractors").select(["id", "active_jobs"]).execute();
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
}
