// The operator's capacity check (`pool check`) beside a serving API: its reads (open offers and jobs, the
// capacity ledger, the counters) are one snapshot, so an order committed while it reads is seen whole or
// not at all, never as drift. The order is placed through the API between the check's first read and the
// next ones; the check reads through a connection of its own, as the CLI does (issue 28, item 23).

import { join } from "node:path";
import SQLite from "better-sqlite3";
import { Kysely, type KyselyPlugin, SqliteDialect } from "kysely";
import { describe, expect, it } from "vitest";
import { KyselyContractorStore } from "../../src/storage/contractor-store.js";
import type { KyselyStore } from "../../src/storage/kysely-store.js";
import type { Database } from "../../src/storage/schema.js";
import { liveContractor, testRecord } from "../helpers/fixtures.js";
import { createHarness, ORDER_PATH, validOrder } from "../helpers/harness.js";

/** Runs `between` once, after the first query through the instance returns. */
function afterFirstQuery(between: () => Promise<void>): KyselyPlugin {
  let done = false;
  return {
    transformQuery: (args) => args.node,
    async transformResult(args) {
      if (!done) {
        done = true;
        await between();
      }
      return args.result;
    },
  };
}

describe("pool check beside the API", () => {
  it("reads one snapshot: an order committed between its reads is no drift", async () => {
    const h = await createHarness();
    try {
      const store = h.services.store as KyselyStore;
      await store.contractors.insert([liveContractor({ maxActiveJobs: 3 })], testRecord());
      await h.services.pool.load();
      const key = await h.key("snapshot", "live");
      expect(await store.contractors.capacityDrift()).toEqual([]);
      // The check's own connection: SQLite's is a second connection to the file (the store's one
      // connection serves the API), PostgreSQL's pool hands out another.
      const own =
        store.dialect === "sqlite"
          ? new Kysely<Database>({
              dialect: new SqliteDialect({ database: new SQLite(join(h.config.DATA_DIR, "test.sqlite")) }),
            })
          : null;
      let offered = "";
      const placeOrder = async () => {
        const res = await h.post(ORDER_PATH, validOrder({ urgency: "emergency" }), { "x-api-key": key });
        expect(res.statusCode, res.body).toBe(200);
        offered = res.json().status;
      };
      const db = (own ?? store.db).withPlugin(afterFirstQuery(placeOrder));
      const check = new KyselyContractorStore(
        db,
        store.audit,
        h.services.now,
        store.dialect,
        store.orderEvents,
      );
      expect(await check.capacityDrift()).toEqual([]);
      expect(offered).toBe("offered");
      // Read again, the order is there whole: held, counted and open.
      expect(await check.capacityDrift()).toEqual([]);
      await own?.destroy();
    } finally {
      await h.close();
    }
  });
});
