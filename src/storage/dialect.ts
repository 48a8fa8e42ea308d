// The SQL dialects the one Kysely store runs on, and what differs between them in how a read is made.

import type { Kysely, Transaction } from "kysely";

export type Dialect = "sqlite" | "postgres";

/**
 * Runs `read` in one read-only transaction, so that its queries see one snapshot of the store whatever
 * other processes commit meanwhile (a check that reads several tables must not see half of a change).
 * PostgreSQL: REPEATABLE READ, READ ONLY. SQLite: a deferred transaction, which in WAL mode reads one
 * snapshot from its first query on and never takes the write lock.
 */
export function inSnapshot<DB, T>(
  db: Kysely<DB>,
  dialect: Dialect,
  read: (trx: Transaction<DB>) => Promise<T>,
): Promise<T> {
  const transaction = db.transaction();
  return (
    dialect === "postgres"
      ? transaction.setIsolationLevel("repeatable read").setAccessMode("read only")
      : transaction
  ).execute(read);
}
