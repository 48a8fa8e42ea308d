// The order's version: every command that changes an order (or its offers and NTE requests) checks the
// version it read and writes the next one, so a writer that read an older state matches no row and
// reports the conflict instead of overwriting a change it never saw (see storage/order-writer.ts).

import { type Kysely, type Migration, sql } from "kysely";

export const migration0010: Migration = {
  async up(db: Kysely<unknown>) {
    await db.schema
      .alterTable("orders")
      .addColumn("version", "integer", (c) => c.notNull().defaultTo(sql`0`))
      .execute();
  },
  async down(db: Kysely<unknown>) {
    await db.schema.alterTable("orders").dropColumn("version").execute();
  },
};
