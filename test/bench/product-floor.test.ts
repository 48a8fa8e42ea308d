// The product floor (bench/product-floor.ts) writes what its header says an order needs (issue 29), and its
// sealed records hold up to the service's own checks: canonical text, leaf, disclosures, Merkle nodes.

import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import SQLite from "better-sqlite3";
import { afterEach, describe, expect, it } from "vitest";
import type { OrderBody } from "../../bench/floor-common.js";
import { openProductFloor } from "../../bench/product-floor.js";
import { applyDisclosures } from "../../src/audit/disclosure.js";
import { appendLeaves, type Hash } from "../../src/audit/merkle.js";
import { rowMatchesLeaf } from "../../src/audit/record.js";
import { disclosureProblem, disclosuresFor } from "../../src/audit/redaction.js";
import { CONTRACTOR_REF_PATTERN } from "../../src/auth/contractor-refs.js";
import { canonicalJson } from "../../src/canonical-json.js";

const dirs: string[] = [];
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

function storeFile(): string {
  const dir = mkdtempSync(join(tmpdir(), "fd-product-floor-"));
  dirs.push(dir);
  return join(dir, "product-floor.sqlite");
}

const input = (i: number): OrderBody => ({
  trade: "plumbing",
  location: { state: "TX", zip: "78701", city: "Austin", address: `${i} Congress Ave`, name: `Store #${i}` },
  description: "Kitchen sink leaking under the cabinet",
  urgency: i % 4 === 0 ? "scheduled" : "urgent",
  ...(i % 2 === 0 ? { nte_cents: 45_000 } : {}),
  reference_id: `WO-${i}`,
});

/** Places `count` orders at once (so that the group commit gathers them), numbered from `from`. */
async function place(file: string, from: number, count: number) {
  const floor = openProductFloor(file);
  try {
    return await Promise.all(Array.from({ length: count }, (_, i) => floor.order(input(from + i))));
  } finally {
    await floor.close();
  }
}

const count = (db: SQLite.Database, table: string) =>
  (db.prepare(`SELECT count(*) AS n FROM ${table}`).get() as { n: number }).n;

describe("the product floor", () => {
  it("writes the order's rows and index entries, and answers as the service does", async () => {
    const file = storeFile();
    const answers = await place(file, 0, 100);
    for (const answer of answers) {
      expect(answer.status).toBe("offered");
      expect(answer.order_id).toMatch(/^ord_/);
      expect(answer.contractor_ref).toMatch(CONTRACTOR_REF_PATTERN);
    }
    const db = new SQLite(file, { readonly: true });
    try {
      const perOrder = { orders: 1, offers: 1, capacity_holds: 1, order_events: 1, webhook_events: 1 };
      for (const [table, n] of Object.entries(perOrder)) expect(count(db, table), table).toBe(100 * n);
      expect(count(db, "audit_records")).toBe(200);
      expect(count(db, "audit_leaves")).toBe(200);
      // Every perfect subtree above the leaves: n - popcount(n) of them for n leaves.
      expect(count(db, "audit_nodes")).toBe(200 - 3);
      // The index entries an order adds (the tables' own b-trees not counted): 20, as the header says.
      const indexes = db
        .prepare(
          "SELECT tbl_name AS t, count(*) AS n FROM sqlite_schema WHERE type = 'index' GROUP BY tbl_name",
        )
        .all() as Array<{ t: string; n: number }>;
      const entries = indexes.reduce((sum, { t, n }) => sum + n * count(db, t), 0);
      expect(entries / 100).toBeCloseTo(20, 1);
    } finally {
      db.close();
    }
  });

  it("seals records the service's checks accept, in a Merkle tree that grows across restarts", async () => {
    const file = storeFile();
    await place(file, 0, 40);
    // A second process on the same store continues the tree from the edge it reads back.
    await place(file, 40, 25);
    const db = new SQLite(file, { readonly: true });
    try {
      const rows = db
        .prepare(
          "SELECT r.seal, r.kind, r.account_id, r.livemode, r.order_id, r.actor, r.created_at, r.record, " +
            "r.disclosures, l.leaf_hash FROM audit_records r JOIN audit_leaves l USING (seal) ORDER BY l.leaf_index",
        )
        .all() as Array<{ record: string; disclosures: string; leaf_hash: Buffer; kind: string } & object>;
      expect(rows).toHaveLength(130);
      for (const row of rows) {
        const r = row as Parameters<typeof rowMatchesLeaf>[0] & { leaf_hash: Buffer };
        expect(canonicalJson(JSON.parse(r.record))).toBe(r.record);
        expect(rowMatchesLeaf(r, r.leaf_hash.toString("hex"))).toBe(true);
        expect(disclosureProblem(r)).toBeNull();
      }
      // The caller reads its site's details back from the creation; a contractor reads none of them.
      const created = rows.find((r) => r.kind === "order.created") as (typeof rows)[number];
      const caller = applyDisclosures(
        JSON.parse(created.record).data,
        disclosuresFor(created.disclosures, { role: "caller" }),
      );
      expect(caller.ok && caller.claims.caller_details).toMatchObject({ address: "0 Congress Ave" });
      expect(disclosuresFor(created.disclosures, { role: "contractor", contractorId: "ctr_x" })).toEqual([]);

      const leaves = db
        .prepare("SELECT leaf_hash FROM audit_leaves ORDER BY leaf_index")
        .pluck()
        .all() as Hash[];
      const expected = appendLeaves(0, [], leaves).nodes.filter((n) => n.level > 0);
      const stored = db
        .prepare("SELECT level, idx, hash FROM audit_nodes ORDER BY level, idx")
        .all() as Array<{
        level: number;
        idx: number;
        hash: Buffer;
      }>;
      expect(stored.map((n) => `${n.level}:${n.idx}:${n.hash.toString("hex")}`).sort()).toEqual(
        expected.map((n) => `${n.level}:${n.index}:${n.hash.toString("hex")}`).sort(),
      );
    } finally {
      db.close();
    }
  });
});
