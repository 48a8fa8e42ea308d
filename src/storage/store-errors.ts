// Recognises store errors that mean "the store cannot serve right now" (busy, down, disk trouble, lost
// connection) as opposed to a bug: those answer 503 and the caller retries.

const SQLITE_UNAVAILABLE = /^SQLITE_(BUSY|LOCKED|FULL|IOERR|CANTOPEN|READONLY|NOMEM|PROTOCOL)/;
// PostgreSQL SQLSTATE classes 08 (connection exception), 53 (insufficient resources), 57P0x (operator
// intervention: shutdown, cannot connect now), 40001/40P01 (serialization failure, deadlock: retryable).
const POSTGRES_UNAVAILABLE = /^(08...|53...|57P0[1-4]|40001|40P01)$/;
const NETWORK_UNAVAILABLE = new Set([
  "ECONNREFUSED",
  "ECONNRESET",
  "ETIMEDOUT",
  "EPIPE",
  "EHOSTUNREACH",
  "ENOTFOUND",
]);
// pg's own messages for a lost connection, and pg-pool's when no pooled connection frees up in time
// (connectionTimeoutMillis): a saturated pool is a busy store, not a bug.
const CONNECTION_MESSAGES =
  /Connection terminated|connection timeout|Client has encountered a connection error|timeout exceeded when trying to connect/i;

export function isStoreUnavailable(error: unknown): boolean {
  if (!(error instanceof Error)) return false;
  const code = (error as { code?: unknown }).code;
  if (typeof code === "string") {
    if (SQLITE_UNAVAILABLE.test(code) || POSTGRES_UNAVAILABLE.test(code) || NETWORK_UNAVAILABLE.has(code)) {
      return true;
    }
  }
  return CONNECTION_MESSAGES.test(error.message);
}

/** A transaction that lost a deadlock or a serialization check (PostgreSQL 40P01, 40001): running it again
 * as it was is safe, and usually succeeds. */
export function isRetryableConflict(error: unknown): boolean {
  const code = (error as { code?: unknown } | null)?.code;
  return code === "40P01" || code === "40001";
}
