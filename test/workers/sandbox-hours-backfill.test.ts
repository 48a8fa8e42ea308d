// A sandbox pool seeded before contractors had working hours is available any time: the next start gives
// each non-anchor contractor its generated hours, once (the anchors stay on call any time).

import { sql } from "kysely";
import { afterEach, describe, expect, it } from "vitest";
import { ALL_ACCOUNTS } from "../../src/audit/persistence.js";
import { bootstrap } from "../../src/bootstrap.js";
import { generateSandboxPool } from "../../src/domain/sandbox-pool.js";
import type { KyselyStore } from "../../src/storage/kysely-store.js";
import { createHarness, type Harness } from "../helpers/harness.js";

const open: Harness[] = [];
afterEach(async () => {
  for (const h of open.splice(0)) await h.close();
});

describe("sandbox hours backfill", () => {
  it("fills the hours of a sandbox seeded without them, at the next start, once", async () => {
    const h = await createHarness();
    open.push(h);
    const store = h.services.store as KyselyStore;
    const count = async (where: string) =>
      Number(
        (
          await sql<{
            n: number;
          }>`SELECT count(*) AS n FROM contractors WHERE pool = 'sandbox' AND ${sql.raw(where)}`.execute(
            store.db,
          )
        ).rows[0]?.n,
      );
    const withHours = await count("hours IS NOT NULL");
    const generated = generateSandboxPool(new Date()).filter((c) => c.hours !== "").length;
    expect(withHours).toBe(generated);
    expect(withHours).toBeGreaterThan(0);
    await sql`UPDATE contractors SET hours = NULL WHERE pool = 'sandbox'`.execute(store.db);

    const now = () => new Date();
    await bootstrap(store, h.services.keys, now);
    await bootstrap(store, h.services.keys, now); // nothing left to fill: no second record
    expect(await count("hours IS NOT NULL")).toBe(generated);
    const seeded = await store.audit.listAudit({
      accountId: ALL_ACCOUNTS,
      livemode: false,
      kind: "pool.seeded",
      limit: 10,
    });
    expect(seeded.filter((r) => r.record.includes("working_hours_backfilled"))).toHaveLength(1);
  });
});
