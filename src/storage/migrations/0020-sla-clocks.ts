// The service-level clocks' firings (domain/orders/sla-clocks.ts): when each clock of an order fired its
// at-risk and its breached event, UTC text, null until then. Set by the change that fires it, through
// the order's versioned write, so each fires once however many processes watch the clocks, and a
// restarted process does not fire it again.

import type { Kysely, Migration } from "kysely";

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
  },
  async down(db: Kysely<unknown>) {
    for (const column of [...COLUMNS].reverse()) {
      await db.schema.alterTable("orders").dropColumn(column).execute();
    }
  },
};
