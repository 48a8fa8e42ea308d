// A sandbox pool seeded before contractors had verification dates would be all unverified, so the
// compliance filter would match nothing: the next start gives each its generated dates, once.

import { sql } from "kysely";
import { afterEach, describe, expect, it } from "vitest";
import { ALL_ACCOUNTS } from "../../src/audit/persistence.js";
import { bootstrap } from "../../src/bootstrap.js";
import type { KyselyStore } from "../../src/storage/kysely-store.js";
import { createHarness, type Harness, QUOTE_PATH } from "../helpers/harness.js";

const open: Harness[] = [];
afterEach(async () => {
  for (const h of open.splice(0)) await h.close();
});

describe("sandbox verification backfill", () => {
  it("fills the dates of a sandbox seeded without them, at the next start, once", async () => {
    const h = await createHarness();
    open.push(h);
    const store = h.services.store as KyselyStore;
    await sql`UPDATE contractors SET insurance_verified_until = NULL, license_verified_until = NULL WHERE pool = 'sandbox'`.execute(
      store.db,
    );
    await h.services.pool.load();
    const job = { trade: "plumbing", location: { state: "TX", zip: "78701" }, urgency: "routine" };
    const before = await h.post(QUOTE_PATH, job, { "x-api-key": h.sandboxKey });
    expect(before.json().contractor_ref ?? null).toBeNull(); // every sandbox contractor is unverified now

    const now = () => new Date();
    await bootstrap(store, h.services.keys, now);
    await bootstrap(store, h.services.keys, now); // nothing left to fill: no second record
    const missing = await sql<{
      n: number;
    }>`SELECT count(*) AS n FROM contractors WHERE pool = 'sandbox' AND (insurance_verified_until IS NULL OR license_verified_until IS NULL)`.execute(
      store.db,
    );
    expect(Number(missing.rows[0]?.n)).toBe(0);
    const seeded = await store.audit.listAudit({
      accountId: ALL_ACCOUNTS,
      livemode: false,
      kind: "pool.seeded",
      limit: 10,
    });
    const backfills = seeded.filter((r) => r.record.includes("verification_dates_backfilled"));
    expect(backfills).toHaveLength(1);

    await h.services.pool.load();
    const after = await h.post(QUOTE_PATH, job, { "x-api-key": h.sandboxKey });
    expect(after.statusCode, after.body).toBe(200);
    expect(after.json().contractor_ref).toMatch(/^cref-/);
  });
});
