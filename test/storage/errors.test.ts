// Which store failures answer 503 (retry) rather than 500 (a bug).

import { describe, expect, it } from "vitest";
import { isStoreUnavailable } from "../../src/storage/store-errors.js";

const withCode = (message: string, code: string) => Object.assign(new Error(message), { code });

describe("store availability errors", () => {
  it("treats busy, lost and saturated stores as unavailable", () => {
    expect(isStoreUnavailable(withCode("database is locked", "SQLITE_BUSY"))).toBe(true);
    expect(isStoreUnavailable(withCode("the database system is shutting down", "57P01"))).toBe(true);
    expect(isStoreUnavailable(withCode("too many connections", "53300"))).toBe(true);
    expect(isStoreUnavailable(withCode("connect ECONNREFUSED 127.0.0.1:5432", "ECONNREFUSED"))).toBe(true);
    expect(isStoreUnavailable(new Error("Connection terminated unexpectedly"))).toBe(true);
    // pg-pool, when every pooled connection stays busy past connectionTimeoutMillis
    expect(isStoreUnavailable(new Error("timeout exceeded when trying to connect"))).toBe(true);
  });

  it("treats anything else as a bug", () => {
    expect(isStoreUnavailable(withCode('relation "orders" does not exist', "42P01"))).toBe(false);
    expect(isStoreUnavailable(withCode("UNIQUE constraint failed", "SQLITE_CONSTRAINT_UNIQUE"))).toBe(false);
    expect(isStoreUnavailable(new TypeError("x is not a function"))).toBe(false);
    expect(isStoreUnavailable("not an error")).toBe(false);
  });
});
