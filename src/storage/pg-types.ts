// How the store's PostgreSQL connections read values: shared by the store's pool (postgres.ts) and the
// day planner's read connection (day-reader.ts).

import pg from "pg";

const INT8_OID = 20;

/** bigint columns (counts, cents) come back as numbers: every value we store fits in 2^53. */
export const PG_TYPES = {
  getTypeParser: ((oid: number, format?: "text" | "binary") =>
    oid === INT8_OID ? Number : pg.types.getTypeParser(oid, format)) as typeof pg.types.getTypeParser,
};
