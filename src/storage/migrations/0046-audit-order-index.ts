// Issue 30 (years of history): an order's audit records are found through the order's own index whatever
// else the listing filters by. `listAudit` with an account and an order (the audit listing of one order,
// GET /api/audit/v1/records?order_id=…, and the console's timeline) filters `livemode = ?`,
// `account_id = ?` and `order_id = ?` and orders by seq. SQLite's planner, with no statistics, counts
// equality terms per index: audit_records_account_idx (account_id, livemode, seq) matched two and the
// ORDER BY, the old audit_records_order_idx (order_id) one, so it walked every record of the account to
// find one order's seven. Measured (200,000 records, 180,000 of one account): 17.6 ms a listing, against
// 28 µs through the order's index. An index on (order_id, seq) is not enough (still one equality term):
// this one matches order_id and livemode, so it wins the tie and also serves the order in log order for
// `orderSeals`. It replaces the old one: one index on the write path, as before. Partial as before
// (records of quotes and keys have no order).
// PostgreSQL keeps statistics (autovacuum's ANALYZE) and chose well already; it gets the same index so the
// two stores keep one schema.

import { type Kysely, type Migration, sql } from "kysely";

export const migration0046: Migration = {
  async up(db: Kysely<unknown>) {
    await db.schema.dropIndex("audit_records_order_idx").execute();
    await db.schema
      .createIndex("audit_records_order_idx")
      .on("audit_records")
      .columns(["order_id", "livemode", "seq"])
      .where(sql.ref("order_id"), "is not", null)
      .execute();
  },
  async down(db: Kysely<unknown>) {
    await db.schema.dropIndex("audit_records_order_idx").execute();
    await db.schema
      .createIndex("audit_records_order_idx")
      .on("audit_records")
      .column("order_id")
      .where(sql.ref("order_id"), "is not", null)
      .execute();
  },
};
