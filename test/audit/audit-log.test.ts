// The audit log end to end, through the HTTP API, on whichever store the project runs (SQLite, or
// PostgreSQL in the postgres project). Proofs are checked with the independent RFC 9162 verifier in
// test/helpers/rfc9162.ts and signatures with node:crypto and the published key only.

import { createPublicKey, verify as verifySignature } from "node:crypto";
import { join } from "node:path";
import SQLite from "better-sqlite3";
import canonicalize from "canonicalize";
import { Kysely, SqliteDialect, sql } from "kysely";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { EXTERNAL_CHANGE_CHECK_MS } from "../../src/audit/audit-log.js";
import { checkLog } from "../../src/audit/log-check.js";
import { sealRecord } from "../../src/audit/record.js";
import type { Checkpoint } from "../../src/audit/signing.js";
import type { KyselyStore } from "../../src/storage/kysely-store.js";
import { AUDIT_LOG_TABLES, auditTriggerNames } from "../../src/storage/migrations/0003-audit-log.js";
import type { Database } from "../../src/storage/schema.js";
import { createHarness, type Harness } from "../helpers/harness.js";
import { rfcLeafHash, rfcVerifyConsistency, rfcVerifyInclusion } from "../helpers/rfc9162.js";
import { testClock } from "../helpers/test-clock.js";

const OPEN_LIMITS = { PUBLIC_RATE_LIMIT_PER_MINUTE: "1000000", PUBLIC_RATE_LIMIT_BURST: "1000000" };
const QUOTE = { trade: "plumbing", location: { state: "TX", zip: "78701" }, urgency: "urgent" };

/** The tampering tests' services clock: settle() moves it past EXTERNAL_CHANGE_CHECK_MS, so the service
 * looks again for changes made by other connections on its next verification. */
const clock = testClock();
const settle = () => clock.advance(EXTERNAL_CHANGE_CHECK_MS);

function dbOf(h: Harness): Kysely<Database> {
  return (h.services.store as KyselyStore).db;
}

/**
 * A connection of an outsider's own to the harness's store, as someone tampering with the database
 * would have (the service caches what it proved until another connection commits). PostgreSQL's pool
 * hands out separate connections already.
 */
function outsiderDb(h: Harness): { db: Kysely<Database>; close(): Promise<void> } {
  if (h.services.store.dialect !== "sqlite") return { db: dbOf(h), close: async () => {} };
  const db = new Kysely<Database>({
    dialect: new SqliteDialect({ database: new SQLite(join(h.config.DATA_DIR, "test.sqlite")) }),
  });
  return { db, close: () => db.destroy() };
}

/** Writes `count` records straight through the store, as operations do, and returns their seals. */
async function writeRecords(h: Harness, count: number, at = new Date().toISOString(), orderId?: string) {
  const accountId = (await h.services.store.keys.ensureAccount("audit-test")).id;
  const entries = Array.from({ length: count }, (_, i) =>
    sealRecord({
      kind: "quote.issued",
      at,
      accountId,
      livemode: false,
      orderId: orderId ?? null,
      actor: "key:key_test",
      data: { n: i, note: "x".repeat(i % 7) },
    }),
  );
  await Promise.all(entries.map((e) => h.services.store.write(async (tx) => tx.appendAudit(e))));
  return entries.map((e) => e.seal);
}

/** Builds a log of about 1,000 records over 20 sequencing rounds; returns seals and checkpoint sizes. */
async function buildLog(h: Harness) {
  const seals: string[] = [];
  const sizes: number[] = [];
  for (let round = 0; round < 20; round++) {
    seals.push(...(await writeRecords(h, 30 + Math.floor(Math.random() * 40))));
    await h.services.audit.sequence(true);
    const cp = (await h.get("/api/attest/checkpoint")).json() as Checkpoint;
    sizes.push(cp.tree_size);
  }
  return { seals, sizes };
}

function pick<T>(list: T[]): T {
  return list[Math.floor(Math.random() * list.length)] as T;
}

function note(c: Checkpoint): string {
  return `${c.origin}\n${c.tree_size}\n${Buffer.from(c.root_hash, "hex").toString("base64")}\n${c.timestamp}\n`;
}

describe("audit log", () => {
  let h: Harness;
  let seals: string[];
  let sizes: number[];

  beforeAll(async () => {
    h = await createHarness(OPEN_LIMITS);
    ({ seals, sizes } = await buildLog(h));
  }, 120_000);
  afterAll(async () => {
    await h.close();
  });

  it("seals quotes and orders; the seal verifies and the order lists its decisions", async () => {
    const quote = await h.post("/api/dispatch/v1/quote", QUOTE, { "x-api-key": h.sandboxKey });
    expect(quote.statusCode).toBe(200);
    const qSeal = quote.json().seal as string;
    expect(qSeal).toMatch(/^seal_/);
    const verified = await h.get(`/api/attest/verify/${qSeal}`);
    expect(verified.statusCode).toBe(200);
    expect(verified.json()).toMatchObject({ seal: qSeal, status: "verified", reason: null });
    expect(JSON.stringify(verified.json())).not.toContain("78701"); // never the payload

    const order = await h.post(
      "/api/dispatch/v1/order",
      { ...QUOTE, description: "Leaking pipe under the sink" },
      { "x-api-key": h.sandboxKey },
    );
    expect(order.statusCode).toBe(200);
    const created = order.json();
    expect(created.seals.map((s: { kind: string }) => s.kind)).toEqual(["order.created", "order.matched"]);
    expect(created.seal).toBe(created.seals[1].seal);
    const read = await h.get(`/api/dispatch/v1/orders/${created.order_id}`, { "x-api-key": h.sandboxKey });
    expect(read.json().seals.map((s: { seal: string }) => s.seal)).toEqual(
      created.seals.map((s: { seal: string }) => s.seal),
    );
    for (const s of created.seals) {
      expect((await h.get(`/api/attest/verify/${s.seal}`)).json().status).toBe("verified");
    }
  });

  it("verifies 100 random inclusion proofs with an independent RFC 9162 verifier", async () => {
    for (let i = 0; i < 100; i++) {
      const seal = pick(seals);
      const v = (await h.get(`/api/attest/verify/${seal}`)).json();
      expect(v.status).toBe("verified");
      const ok = rfcVerifyInclusion(
        Buffer.from(v.leaf_hash, "hex"),
        v.leaf_index,
        v.inclusion_proof.tree_size,
        v.inclusion_proof.hashes.map((x: string) => Buffer.from(x, "hex")),
        Buffer.from(v.checkpoint.root_hash, "hex"),
      );
      expect(ok, seal).toBe(true);
      expect(v.inclusion_proof.tree_size).toBe(v.checkpoint.tree_size);
    }
  });

  it("verifies 100 random consistency proofs between signed checkpoints", async () => {
    for (let i = 0; i < 100; i++) {
      const a = pick(sizes);
      const b = pick(sizes);
      const [first, second] = a <= b ? [a, b] : [b, a];
      const res = await h.get(`/api/attest/consistency?first=${first}&second=${second}`);
      expect(res.statusCode).toBe(200);
      const proof = res.json();
      const firstCp = (await h.get(`/api/attest/checkpoints/${first}`)).json() as Checkpoint;
      const secondCp = (await h.get(`/api/attest/checkpoints/${second}`)).json() as Checkpoint;
      expect(proof.second_checkpoint).toEqual(secondCp);
      const ok = rfcVerifyConsistency(
        first,
        second,
        Buffer.from(firstCp.root_hash, "hex"),
        Buffer.from(secondCp.root_hash, "hex"),
        proof.hashes.map((x: string) => Buffer.from(x, "hex")),
      );
      expect(ok, `${first} -> ${second}`).toBe(true);
    }
  });

  it("every checkpoint extends the previous one", async () => {
    for (let i = 1; i < sizes.length; i++) {
      const [first, second] = [sizes[i - 1] as number, sizes[i] as number];
      const proof = (await h.get(`/api/attest/consistency?first=${first}&second=${second}`)).json();
      const roots = await Promise.all(
        [first, second].map(
          async (s) => (await h.get(`/api/attest/checkpoints/${s}`)).json().root_hash as string,
        ),
      );
      expect(
        rfcVerifyConsistency(
          first,
          second,
          Buffer.from(roots[0] as string, "hex"),
          Buffer.from(roots[1] as string, "hex"),
          proof.hashes.map((x: string) => Buffer.from(x, "hex")),
        ),
      ).toBe(true);
    }
  });

  it("signs checkpoints so that only the published public key is needed to check them", async () => {
    const keys = (await h.get("/api/attest/keys")).json();
    expect(keys.keys).toHaveLength(1);
    const published = keys.keys[0];
    const pem = createPublicKey(published.public_key_pem);
    // The raw key and the PEM are the same key.
    expect(pem.export({ format: "der", type: "spki" }).subarray(12).toString("base64")).toBe(
      published.public_key,
    );
    for (const size of [sizes[0], sizes[7], sizes[19]]) {
      const cp = (await h.get(`/api/attest/checkpoints/${size}`)).json() as Checkpoint;
      expect(cp.key_id).toBe(published.key_id);
      expect(verifySignature(null, Buffer.from(note(cp)), pem, Buffer.from(cp.signature, "base64"))).toBe(
        true,
      );
      const forged = { ...cp, tree_size: cp.tree_size + 1 };
      expect(verifySignature(null, Buffer.from(note(forged)), pem, Buffer.from(cp.signature, "base64"))).toBe(
        false,
      );
    }
  });

  it("answers 404 for unknown and malformed seals, and 422 for impossible proofs", async () => {
    for (const seal of ["seal_0000000000000000000000", "nope", "seal_%2F..%2F", "x".repeat(90)]) {
      const res = await h.get(`/api/attest/verify/${seal}`);
      expect(res.statusCode, seal).toBe(404);
      expect(res.json().code).toBe("not_found");
    }
    expect((await h.get("/api/attest/checkpoints/3")).statusCode).toBe(404); // never signed at 3
    const tooBig = await h.get("/api/attest/consistency?first=1&second=999999999");
    expect(tooBig.statusCode).toBe(422);
    expect(tooBig.json().errors[0].field).toBe("second");
    const reversed = await h.get(`/api/attest/consistency?first=${sizes[5]}&second=${sizes[2]}`);
    expect(reversed.json().errors[0].field).toBe("first");
    expect((await h.get("/api/attest/consistency?first=0")).json().errors[0].field).toBe("first");
  });

  it("verifies a record written a moment ago, before the sequencer's turn", async () => {
    const [seal] = await writeRecords(h, 1);
    const v = (await h.get(`/api/attest/verify/${seal}`)).json();
    expect(v.status).toBe("verified");
    expect(v.leaf_index).toBe(v.checkpoint.tree_size - 1);
  });

  it("lists the caller's own records with their contents, filtered and paginated", async () => {
    const other = await h.key("someone-else", "test");
    const mine = await h.post("/api/dispatch/v1/quote", QUOTE, { "x-api-key": h.sandboxKey });
    const theirs = await h.post("/api/dispatch/v1/quote", QUOTE, { "x-api-key": other });
    const list = async (key: string, query = "") =>
      (await h.get(`/api/audit${query}`, { "x-api-key": key })).json();

    const theirRecords = (await list(other, "?limit=200")).records;
    const theirSeals = theirRecords.map((r: { seal: string }) => r.seal);
    expect(theirSeals).toContain(theirs.json().seal);
    expect(theirSeals).not.toContain(mine.json().seal);
    expect(
      theirRecords.every(
        (r: { record: { account_id: string } }) => r.record.account_id === theirRecords[0].record.account_id,
      ),
    ).toBe(true);

    // The record hashes to the leaf that verify proves.
    const record = theirRecords.find((r: { seal: string }) => r.seal === theirs.json().seal);
    const v = (await h.get(`/api/attest/verify/${record.seal}`)).json();
    expect(rfcLeafHash(Buffer.from(canonicalize(record.record) as string)).toString("hex")).toBe(v.leaf_hash);

    // Pages of 1 walk every quote record once, oldest first.
    const all = (await list(h.sandboxKey, "?kind=quote.issued&limit=200")).records;
    const walked: string[] = [];
    let cursor: string | null = null;
    do {
      const page = await list(h.sandboxKey, `?kind=quote.issued&limit=1${cursor ? `&cursor=${cursor}` : ""}`);
      walked.push(...page.records.map((r: { seal: string }) => r.seal));
      cursor = page.next_cursor;
    } while (cursor);
    expect(walked).toEqual(all.map((r: { seal: string }) => r.seal));

    const bad = await h.get("/api/audit?cursor=not-a-cursor", { "x-api-key": h.sandboxKey });
    expect(bad.statusCode).toBe(422);
    expect(bad.json().errors[0].field).toBe("cursor");
    const kind = await h.get("/api/audit?kind=everything", { "x-api-key": h.sandboxKey });
    expect(kind.json().errors[0].field).toBe("kind");
    expect((await h.get("/api/audit")).statusCode).toBe(401);
  });

  it("records key issue and revocation", async () => {
    const issued = await h.services.keys.issue({
      accountName: "keyed",
      mode: "test",
      actor: "operator:test",
    });
    await h.services.keys.revoke(issued.id, "operator:test");
    const other = await h.key("keyed", "test");
    const records = (await h.get("/api/audit?limit=200", { "x-api-key": other })).json().records;
    const kinds = records
      .filter((r: { record: { data: { key_id: string } } }) => r.record.data.key_id === issued.id)
      .map((r: { kind: string }) => r.kind);
    expect(kinds).toEqual(["key.issued", "key.revoked"]);
    expect(JSON.stringify(records)).not.toContain(issued.key);
  });

  it("refuses UPDATE and DELETE on the log tables (and TRUNCATE on PostgreSQL), changing no row", async () => {
    const db = dbOf(h);
    const snapshot = async () =>
      Promise.all(AUDIT_LOG_TABLES.map((t) => sql.raw(`SELECT * FROM ${t} ORDER BY 1, 2`).execute(db)));
    const before = await snapshot();
    const attempts = [
      "UPDATE audit_records SET kind = 'forged'",
      "DELETE FROM audit_records",
      "UPDATE audit_leaves SET leaf_hash = 'ff'",
      "DELETE FROM audit_leaves WHERE leaf_index = 0",
      "UPDATE audit_nodes SET hash = 'ff'",
      "DELETE FROM audit_nodes",
      "UPDATE audit_checkpoints SET root_hash = 'ff'",
      "DELETE FROM audit_checkpoints",
    ];
    if (h.services.store.dialect === "postgres") {
      attempts.push(...AUDIT_LOG_TABLES.map((t) => `TRUNCATE ${t} CASCADE`));
    }
    for (const statement of attempts) {
      await expect(sql.raw(statement).execute(db), statement).rejects.toThrow(
        /append-only|kept 7 years|not allowed/,
      );
    }
    expect(await snapshot()).toEqual(before);
  });
});

describe("audit log tampering", () => {
  it("reports a tile node that differs from the one its leaves give as a mismatch (audit check)", async () => {
    const h = await createHarness(OPEN_LIMITS, {}, { now: clock.now });
    const { store, audit } = h.services;
    await writeRecords(h, 300);
    await audit.sequence(true);
    expect((await checkLog(store.audit, audit.signer.publicKey)).ok).toBe(true);
    const outsider = outsiderDb(h);
    await sql
      .raw(
        store.dialect === "sqlite"
          ? "DROP TRIGGER audit_tiles_no_update"
          : "DROP TRIGGER audit_tiles_append_only ON audit_tiles",
      )
      .execute(outsider.db);
    const tile = await outsider.db
      .selectFrom("audit_tiles")
      .select("hashes")
      .where("idx", "=", 0)
      .executeTakeFirstOrThrow();
    // Level 3's node 5 (leaves 40 to 47): after the tile's 256 leaves, 128 level-1 and 64 level-2 nodes.
    const bytes = Buffer.from(tile.hashes);
    const at = (256 + 128 + 64 + 5) * 32;
    bytes.writeUInt8((bytes.readUInt8(at) ^ 1) & 0xff, at);
    await outsider.db.updateTable("audit_tiles").set({ hashes: bytes }).where("idx", "=", 0).execute();
    const report = await checkLog(store.audit, audit.signer.publicKey);
    expect(report.ok).toBe(false);
    expect(report.mismatch).toMatch(/tree node as its tile holds it, 3\/5 \(leaves 40 to 47\)/);
    expect(report.failedAtLeaf).toBe(40);
    await outsider.close();
    await h.close();
  }, 60_000);

  it("reports a record whose stored bytes were changed as a mismatch, and every other as verified", async () => {
    const h = await createHarness(OPEN_LIMITS, {}, { now: clock.now });
    const seals = await writeRecords(h, 1_000);
    await h.services.audit.sequence(true);
    // Every record verified once first: what the service proved and kept must not hide a later change.
    for (const seal of seals)
      expect((await h.get(`/api/attest/verify/${seal}`)).json().status).toBe("verified");
    const outsider = outsiderDb(h);
    const db = outsider.db;
    for (const t of auditTriggerNames(h.services.store.dialect)) {
      const drop =
        h.services.store.dialect === "sqlite"
          ? `DROP TRIGGER ${t.name}`
          : `DROP TRIGGER ${t.name} ON ${t.table}`;
      await sql.raw(drop).execute(db);
    }
    for (let round = 0; round < 2; round++) {
      const target = pick(seals);
      const row = await db
        .selectFrom("audit_records")
        .select("record")
        .where("seal", "=", target)
        .executeTakeFirstOrThrow();
      const at = Math.floor(Math.random() * row.record.length);
      const flipped =
        row.record.slice(0, at) +
        String.fromCharCode(row.record.charCodeAt(at) ^ 1) +
        row.record.slice(at + 1);
      await db.updateTable("audit_records").set({ record: flipped }).where("seal", "=", target).execute();
      settle();

      const statuses: Array<readonly [string, { status: string }]> = [];
      for (let i = 0; i < seals.length; i += 50) {
        statuses.push(
          ...(await Promise.all(
            seals
              .slice(i, i + 50)
              .map(async (seal) => [seal, (await h.get(`/api/attest/verify/${seal}`)).json()] as const),
          )),
        );
      }
      for (const [seal, v] of statuses) {
        if (seal === target) expect(v).toMatchObject({ status: "mismatch", reason: "record_altered" });
        else expect(v.status, seal).toBe("verified");
      }
      await db.updateTable("audit_records").set({ record: row.record }).where("seal", "=", target).execute();
      settle();
      expect((await h.get(`/api/attest/verify/${target}`)).json().status).toBe("verified");
    }

    // A record moved to another account is caught too, though its text is intact.
    const moved = pick(seals);
    await db
      .updateTable("audit_records")
      .set({ account_id: "acct_other" })
      .where("seal", "=", moved)
      .execute();
    settle();
    expect((await h.get(`/api/attest/verify/${moved}`)).json().reason).toBe("record_altered");

    // A forged leaf no longer leads to the signed root.
    const leafSeal = pick(seals.filter((s) => s !== moved));
    await db
      .updateTable("audit_leaves")
      .set({ leaf_hash: "00".repeat(32) })
      .where("seal", "=", leafSeal)
      .execute();
    settle();
    expect((await h.get(`/api/attest/verify/${leafSeal}`)).json()).toMatchObject({
      status: "mismatch",
      reason: "proof_invalid",
    });
    await outsider.close();
    await h.close();
  }, 180_000);
});

describe("audit retention", () => {
  it("purges only records older than 7 years and not under legal hold; their leaves stay provable", async () => {
    const years = (n: number) => n * 365.25 * 86_400_000;
    const past = testClock();
    const h = await createHarness(OPEN_LIMITS, {}, { now: past.now });
    const { store, audit } = h.services;
    const eightYearsAgo = new Date(Date.now() - years(8)).toISOString();
    const sixYearsAgo = new Date(Date.now() - years(6)).toISOString();
    // The old records were signed into the log when they were written, eight years ago.
    past.advance(-years(8));
    const old = await writeRecords(h, 5, eightYearsAgo);
    const held = await writeRecords(h, 3, eightYearsAgo, "ord_held");
    await audit.sequence(true);
    past.advance(years(2));
    const young = await writeRecords(h, 4, sixYearsAgo);
    await audit.sequence(true);
    past.advance(years(6));
    await store.audit.addLegalHold({
      id: "hold_1",
      account_id: null,
      order_id: "ord_held",
      reason: "litigation",
      created_at: new Date().toISOString(),
      released_at: null,
    });
    const db = dbOf(h);
    const count = async () =>
      Number(
        (
          await db
            .selectFrom("audit_records")
            .select((eb) => eb.fn.countAll().as("n"))
            .executeTakeFirstOrThrow()
        ).n,
      );
    const total = await count();

    // Before 7 years nothing goes, whatever the application asks.
    await expect(sql`DELETE FROM audit_records WHERE seal = ${young[0]}`.execute(db)).rejects.toThrow(
      /kept 7 years/,
    );
    await expect(sql`DELETE FROM audit_records WHERE seal = ${held[0]}`.execute(db)).rejects.toThrow(
      /kept 7 years/,
    );
    await expect(store.audit.purgeAudit(new Date().toISOString())).rejects.toThrow(/kept 7 years/);
    expect(await count()).toBe(total);

    // An attachment of each kind of record: the file follows its sealed record (issue 32).
    const fileOf = (seal: string, createdAt: string) => ({
      id: `att_${seal.slice(-12)}`,
      orderId: "ord_files",
      livemode: false,
      sha256: "ab".repeat(32),
      size: 10,
      mediaType: "image/png",
      kind: "photo" as const,
      caption: null,
      filename: null,
      uploader: "key:key_test",
      createdAt,
      thumbnailSha256: null,
      signerName: null,
      seal,
    });
    const files = [
      fileOf(old[0] as string, eightYearsAgo),
      fileOf(held[0] as string, eightYearsAgo),
      fileOf(young[0] as string, sixYearsAgo),
    ];
    await store.write(async (tx) => {
      for (const f of files) await store.attachments.insert(f, tx);
    });

    const cutoff = new Date(Date.now() - 7 * 365.25 * 86_400_000 - 86_400_000).toISOString();
    expect(await store.audit.purgeAudit(cutoff)).toBe(old.length);
    expect(await count()).toBe(total - old.length);
    expect(await store.attachments.purgeUnsealed(cutoff)).toBe(1);
    expect(await store.attachments.byId(files[0]?.id as string)).toBeUndefined();
    expect((await store.attachments.ofOrder("ord_files")).map((f) => f.seal)).toEqual([held[0], young[0]]);
    for (const seal of held)
      expect((await h.get(`/api/attest/verify/${seal}`)).json().status).toBe("verified");
    for (const seal of young)
      expect((await h.get(`/api/attest/verify/${seal}`)).json().status).toBe("verified");
    for (const seal of old) {
      const v = (await h.get(`/api/attest/verify/${seal}`)).json();
      expect(v.status).toBe("purged");
      expect(
        rfcVerifyInclusion(
          Buffer.from(v.leaf_hash, "hex"),
          v.leaf_index,
          v.inclusion_proof.tree_size,
          v.inclusion_proof.hashes.map((x: string) => Buffer.from(x, "hex")),
          Buffer.from(v.checkpoint.root_hash, "hex"),
        ),
      ).toBe(true);
    }

    // The whole log checks out: the missing records' leaves are past retention.
    const report = await checkLog(store.audit, audit.signer.publicKey);
    expect(report).toMatchObject({ ok: true, purged: old.length });

    // Released, the hold no longer protects the records.
    expect(await store.audit.releaseLegalHold("hold_1", new Date().toISOString())).toBe(true);
    expect(await store.audit.purgeAudit(cutoff)).toBe(held.length);
    expect(await store.attachments.purgeUnsealed(cutoff)).toBe(1);
    await h.close();
  }, 60_000);

  it("reports a record deleted before its retention ended as tampering, not as purged (issue 28, item 21)", async () => {
    const h = await createHarness(OPEN_LIMITS, {}, { now: clock.now });
    const { store, audit } = h.services;
    const seals = await writeRecords(h, 6);
    await audit.sequence(true);
    const target = seals[3] as string;
    expect((await h.get(`/api/attest/verify/${target}`)).json().status).toBe("verified");
    // An outsider drops the delete trigger and removes a seconds-old record.
    const outsider = outsiderDb(h);
    const trigger = auditTriggerNames(store.dialect).find(
      (t) => t.table === "audit_records" && /no_delete|append_only/.test(t.name),
    );
    await sql
      .raw(
        store.dialect === "sqlite"
          ? `DROP TRIGGER ${trigger?.name}`
          : `DROP TRIGGER ${trigger?.name} ON ${trigger?.table}`,
      )
      .execute(outsider.db);
    await outsider.db.deleteFrom("audit_records").where("seal", "=", target).execute();
    settle();
    expect((await h.get(`/api/attest/verify/${target}`)).json()).toMatchObject({
      status: "mismatch",
      reason: "record_missing",
    });
    const report = await checkLog(store.audit, audit.signer.publicKey);
    expect(report.ok).toBe(false);
    expect(report.purged).toBe(0);
    expect(report.mismatch).toMatch(
      new RegExp(`${target}\\): its record is missing, but the leaf was signed at`),
    );
    const leaf = (await store.audit.findAudit(seals[3] as string)).leaf;
    expect(report.failedAtLeaf).toBe(leaf?.leaf_index);
    await outsider.close();
    await h.close();
  }, 60_000);
});

describe("audit disclosures altered where they are stored (issue 28, item 22)", () => {
  it("fail audit check, and the listings show the record's disclosures as failed, never a 500", async () => {
    const h = await createHarness(OPEN_LIMITS, {}, { now: clock.now });
    const { store, audit } = h.services;
    const key = await h.key("disclosing", "test");
    const ops = await h.dispatcherKey("test");
    const accountId = (await store.keys.ensureAccount("disclosing")).id;
    const entry = sealRecord({
      kind: "order.matched",
      at: new Date().toISOString(),
      accountId,
      livemode: false,
      orderId: "ord_disclosed",
      actor: "system:test",
      data: { chosen: "ctr_disclosed", candidates: [{ contractor_id: "ctr_disclosed", price_cents: 100 }] },
      refOf: () => "cref_mine",
    });
    await store.write(async (tx) => tx.appendAudit(entry));
    await audit.sequence(true);
    expect((await checkLog(store.audit, audit.signer.publicKey)).ok).toBe(true);
    const list = (url: string, apiKey: string) => h.get(url, { "x-api-key": apiKey });
    const mine = await list("/api/audit?order_id=ord_disclosed", key);
    expect(mine.json().records[0]).toMatchObject({
      disclosure_status: "verified",
      disclosure_error: null,
      disclosed: { chosen_ref: "cref_mine" },
    });

    // The caller's handle, rewritten in the stored disclosures: the sealed record itself is untouched.
    const outsider = outsiderDb(h);
    const trigger = auditTriggerNames(store.dialect).find(
      (t) => t.table === "audit_records" && /no_update|append_only/.test(t.name),
    );
    await sql
      .raw(
        store.dialect === "sqlite"
          ? `DROP TRIGGER ${trigger?.name}`
          : `DROP TRIGGER ${trigger?.name} ON ${trigger?.table}`,
      )
      .execute(outsider.db);
    await outsider.db
      .updateTable("audit_records")
      .set({ disclosures: (entry.disclosures as string).replace("cref_mine", "cref_theirs") })
      .where("seal", "=", entry.seal)
      .execute();
    settle();

    const report = await checkLog(store.audit, audit.signer.publicKey);
    expect(report.ok).toBe(false);
    expect(report.mismatch).toMatch(
      new RegExp(`\\(${entry.seal}\\): disclosure \\S+ is not committed in the record`),
    );
    // Verification proves the sealed record, which is intact.
    expect((await h.get(`/api/attest/verify/${entry.seal}`)).json().status).toBe("verified");
    for (const [url, apiKey] of [
      ["/api/audit?order_id=ord_disclosed", key],
      ["/api/dispatcher/v1/audit?order_id=ord_disclosed", ops],
    ] as const) {
      const res = await list(url, apiKey);
      expect(res.statusCode, res.body).toBe(200);
      const [record] = res.json().records;
      expect(record).toMatchObject({ seal: entry.seal, disclosure_status: "failed" });
      expect(record.disclosure_error).toMatch(/is not committed in the record/);
      // None of the stored disclosures is applied: the altered handle is not shown as the record's.
      expect(record.disclosed).toEqual({});
    }
    await outsider.close();
    await h.close();
  }, 60_000);
});
