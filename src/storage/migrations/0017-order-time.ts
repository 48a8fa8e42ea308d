// The order's time (domain/time): the job's local time zone (IANA), the arrival window of windowed work
// and where it came from (the caller's, or the earliest the service books), and the service level's
// clocks of as-soon-as-possible work (respond_by, arrive_by). All UTC text like the other times; null for
// orders created before this migration (their promise was never stated, so none is made up for them).

import type { Kysely, Migration } from "kysely";

export const migration0017: Migration = {
  async up(db: Kysely<unknown>) {
    for (const column of [
      "time_zone",
      "window_start",
      "window_end",
      "window_source",
      "respond_by",
      "arrive_by",
    ]) {
      await db.schema.alterTable("orders").addColumn(column, "text").execute();
    }
  },
  async down(db: Kysely<unknown>) {
    for (const column of [
      "arrive_by",
      "respond_by",
      "window_source",
      "window_end",
      "window_start",
      "time_zone",
    ]) {
      await db.schema.alterTable("orders").dropColumn(column).execute();
    }
  },
};
