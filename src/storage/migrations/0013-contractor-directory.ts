// The dispatch team's contractor directory and the sandbox's hand-played contractors:
// - orders.on_site_at: when the contractor holding the job reported itself on site, against the ETA it
//   gave (eta_at) the lateness of its arrivals is measured. Backfilled from the audit log: the latest
//   `order.status_changed` record to on_site since the order's last acceptance or assignment (the
//   contractor it holds now; an assignment clears both columns).
// - contractors_pool_name_idx (pool, name, id): the directory's page ordered by name, then id
//   (ContractorStore.directory without a location), walked in order and stopped after the page
//   instead of sorting the pool. PostgreSQL keys it on name COLLATE "C", the byte order the query asks
//   for so that both stores list names alike (SQLite's default is byte order).
// - api_keys_contractor_idx (contractor_id, partial): the sandbox player's queries
//   (OrderStore.sandboxOffers and sandboxOrdersIn), run every second in every process, skip the
//   contractors that have a key of their own with NOT EXISTS on it.
// The directory's measured record (ContractorStore.records) needs no new index: it aggregates
// offers by offers_contractor_idx (contractor_id, status) and orders by orders_contractor_idx
// (contractor_id, status).

import { type Kysely, type Migration, sql } from "kysely";
import type { Dialect } from "../dialect.js";

export function migration0013(dialect: Dialect): Migration {
  return {
    async up(db: Kysely<unknown>) {
      await db.schema.alterTable("orders").addColumn("on_site_at", "text").execute();
      // Canonical JSON has no whitespace, so the record of a report to on_site contains "to":"on_site".
      await sql`
        UPDATE orders SET on_site_at = (
          SELECT max(a.created_at) FROM audit_records a
          WHERE a.order_id = orders.id AND a.kind = 'order.status_changed'
            AND a.record LIKE '%"to":"on_site"%' AND a.created_at >= orders.accepted_at)
        WHERE eta_at IS NOT NULL AND status IN ('on_site', 'completed', 'invoiced', 'cannot_complete')`.execute(
        db,
      );
      await sql
        .raw(
          dialect === "postgres"
            ? `CREATE INDEX contractors_pool_name_idx ON contractors (pool, name COLLATE "C", id)`
            : "CREATE INDEX contractors_pool_name_idx ON contractors (pool, name, id)",
        )
        .execute(db);
      await db.schema
        .createIndex("api_keys_contractor_idx")
        .on("api_keys")
        .column("contractor_id")
        .where(sql.ref("contractor_id"), "is not", null)
        .execute();
    },
    async down(db: Kysely<unknown>) {
      await db.schema.dropIndex("api_keys_contractor_idx").execute();
      await db.schema.dropIndex("contractors_pool_name_idx").execute();
      await db.schema.alterTable("orders").dropColumn("on_site_at").execute();
    },
  };
}
