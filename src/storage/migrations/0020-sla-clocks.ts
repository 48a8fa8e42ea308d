// The service-level clocks' firings (domain/orders/sla-clocks.ts): when each clock of an order fired its
// at-risk and its breached event, UTC text, null until then. Set by the change that fires it, through
// the order's versioned write, so each fires once however many processes watch the clocks, and a
// restarted process does not fire it again. A partial index of the open orders serves the watch's scan
// (order-store.ts slaWatched), which would otherwise read every order ever received each round; its
// predicate is the scan's own text, so that SQLite, which matches a partial index's WHERE term by term,
// uses it.

import { type Kysely, type Migration, sql } from "kysely";
import { OPEN_ORDERS_SQL } from "../../domain/orders/sla-clocks.js";

const COLUMNS = [
  "sla_respond_at_risk_at",
  "sla_respond_breached_at",
  "sla_arrive_at_risk_at",
  "sla_arrive_breached_at",
] as const;

export const migration0020: Migration = {
  async up(db: Kysely<unknown>) {
    for (const column of COLUMNS) {
      await db.schema.alterTable("orders").addColumn(column, "text").execute();
    }
    await db.schema
      .createIndex("orders_open_idx")
      .on("orders")
      .column("id")
      .where(sql<boolean>`${sql.raw(OPEN_ORDERS_SQL)}`)
      .execute();
  },
  async down(db: Kysely<unknown>) {
    await db.schema.dropIndex("orders_open_idx").execute();
    for (const column of [...COLUMNS].reverse()) {
      await db.schema.alterTable("orders").dropColumn(column).execute();
    }
  },
};
