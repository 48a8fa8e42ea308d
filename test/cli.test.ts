// The operator CLI, run as a real process: keys create/list/revoke, contractors import, and audit.

import { execFile } from "node:child_process";
import { generateKeyPairSync } from "node:crypto";
import { once } from "node:events";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { type AddressInfo, createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { promisify } from "node:util";
import Database from "better-sqlite3";
import sharp from "sharp";
import { afterAll, describe, expect, it } from "vitest";
import { parseApiKey } from "../src/auth/api-key.js";
import type { KyselyStore } from "../src/storage/kysely-store.js";
import { openSqliteStore } from "../src/storage/sqlite.js";
import { startChildServer } from "./helpers/child-server.js";

const run = promisify(execFile);
const ROOT = fileURLToPath(new URL("..", import.meta.url));
const dir = mkdtempSync(join(tmpdir(), "fd-cli-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

async function cli(...args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  try {
    const { stdout, stderr } = await run(process.execPath, ["--import", "tsx", "src/cli/index.ts", ...args], {
      cwd: ROOT,
      env: { ...process.env, ENV_FILE: "", DATA_DIR: dir },
    });
    return { code: 0, stdout, stderr };
  } catch (error) {
    const e = error as { code: number; stdout: string; stderr: string };
    return { code: e.code, stdout: e.stdout, stderr: e.stderr };
  }
}

async function liveContractorsInStore() {
  const store = openSqliteStore(join(dir, "field-dispatch.sqlite"));
  try {
    return (await store.contractors.load()).filter((c) => c.pool === "live");
  } finally {
    await store.close();
  }
}

describe("operator CLI", () => {
  it("creates a key and prints it alone on the last stdout line", async () => {
    const res = await cli(
      "keys",
      "create",
      "--account",
      "acme",
      "--mode",
      "live",
      "--rate-limit-per-minute",
      "600",
    );
    expect(res.code).toBe(0);
    const lines = res.stdout.trim().split("\n");
    const key = lines[lines.length - 1] ?? "";
    expect(parseApiKey(key)).toEqual({ ok: true, mode: "live" });

    const list = await cli("keys", "list", "--account", "acme");
    expect(list.stdout).toContain(`fsd_live_...${key.slice(-4)}`);
    expect(list.stdout).toContain("limit=600/min");
    expect(list.stdout).not.toContain(key);

    const id = list.stdout.split("\t")[0] ?? "";
    expect((await cli("keys", "revoke", id)).stdout).toContain(`revoked ${id}`);
    expect((await cli("keys", "list", "--account", "acme")).stdout).toMatch(/revoked 20/);
    expect((await cli("keys", "revoke", "key_nope")).code).toBe(1);
  }, 180_000);

  it("issues contractor keys for a known contractor only, and dispatcher keys, listed with their kind", async () => {
    expect((await cli("migrate")).code).toBe(0); // seeds the sandbox pool
    const store = openSqliteStore(join(dir, "field-dispatch.sqlite"));
    const contractor = (await store.contractors.load())[0]?.id ?? "";
    await store.close();
    expect(contractor).toMatch(/^ctr_/);
    const unknown = await cli(
      "keys",
      "create",
      "--account",
      "crew",
      "--mode",
      "test",
      "--contractor",
      "ctr_nobody",
    );
    expect(unknown.code).toBe(1);
    expect(unknown.stderr).toMatch(/no contractor ctr_nobody/);
    const both = await cli(
      "keys",
      "create",
      "--account",
      "crew",
      "--mode",
      "test",
      "--contractor",
      contractor,
      "--dispatcher",
    );
    expect(both.code).toBe(2);
    expect(
      (await cli("keys", "create", "--account", "crew", "--mode", "test", "--contractor", contractor)).code,
    ).toBe(0);
    expect((await cli("keys", "create", "--account", "ops", "--mode", "live", "--dispatcher")).code).toBe(0);
    const list = await cli("keys", "list");
    expect(list.stdout).toContain(`crew\ttest\tcontractor:${contractor}\t`);
    expect(list.stdout).toContain("ops\tlive\tdispatcher\t");
  }, 180_000);

  it("refuses a contractor key whose mode is not its pool's", async () => {
    expect((await cli("migrate")).code).toBe(0);
    const store = openSqliteStore(join(dir, "field-dispatch.sqlite"));
    const sandbox = (await store.contractors.load()).find((c) => c.pool === "sandbox")?.id ?? "";
    await store.close();
    const live = await cli("keys", "create", "--account", "crew", "--mode", "live", "--contractor", sandbox);
    expect(live.code).toBe(1);
    expect(live.stderr).toMatch(/sandbox pool: its key must be --mode test/);
  }, 180_000);

  it("checks every contractor's capacity against its open offers and jobs, and reports drift", async () => {
    expect((await cli("migrate")).code).toBe(0);
    const ok = await cli("pool", "check");
    expect(ok.code, ok.stderr).toBe(0);
    expect(ok.stdout).toMatch(/capacity ok/);
    const store = openSqliteStore(join(dir, "field-dispatch.sqlite"));
    const [first] = await store.contractors.load();
    await (store as KyselyStore).db
      .updateTable("contractors")
      .set({ active_jobs: 2 })
      .where("id", "=", first?.id ?? "")
      .execute();
    await store.close();
    const drift = await cli("pool", "check");
    expect(drift.code).toBe(1);
    expect(drift.stdout).toContain(`${first?.id}: counter 2, ledger 0, open offers and jobs 0`);
  }, 180_000);

  it("migrate prepares a fresh store and prints its two one-time keys, the sandbox and the dispatch team's, once", async () => {
    const fresh = mkdtempSync(join(tmpdir(), "fd-cli-migrate-"));
    const migrate = async () => {
      const { stdout } = await run(process.execPath, ["--import", "tsx", "src/cli/index.ts", "migrate"], {
        cwd: ROOT,
        env: { ...process.env, ENV_FILE: "", DATA_DIR: fresh },
      });
      return stdout;
    };
    try {
      const first = await migrate();
      const key = /^sandbox key \(shown once\): (fsd_test_\w{36})$/m.exec(first)?.[1];
      const opsKey = /^sandbox dispatch-team key \(shown once\): (fsd_test_\w{36})$/m.exec(first)?.[1];
      expect(key && opsKey, first).toBeTruthy();
      expect(first.match(/fsd_test_/g)).toHaveLength(2);
      const again = await migrate();
      expect(again).toMatch(/^schema up to date$/m);
      expect(again).not.toMatch(/fsd_test_/);
      const store = openSqliteStore(join(fresh, "field-dispatch.sqlite"));
      try {
        const keys = await store.keys.list();
        expect(keys.map((k) => [k.account_name, k.mode, k.kind]).sort()).toEqual([
          ["sandbox", "test", "account"],
          ["sandbox-dispatch", "test", "dispatcher"],
        ]);
        expect(keys.map((k) => k.key_hint).sort()).toEqual(
          [`fsd_test_...${key?.slice(-4)}`, `fsd_test_...${opsKey?.slice(-4)}`].sort(),
        );
      } finally {
        await store.close();
      }
    } finally {
      rmSync(fresh, { recursive: true, force: true });
    }
  }, 180_000);

  it("refuses bad usage with exit code 2", async () => {
    expect((await cli("keys", "create", "--account", "acme", "--mode", "prod")).code).toBe(2);
    expect((await cli("frobnicate")).code).toBe(2);
  }, 180_000);

  it("imports a live pool from CSV and JSON, updating by external_ref", async () => {
    const csv = join(dir, "pool.csv");
    writeFileSync(
      csv,
      [
        "external_ref,name,email,trades,states,zip,service_radius_miles,hourly_rate_cents,emergency_capable,rating",
        "A-1,Alpha Plumbing,a@example.com,plumbing;hvac,TX,78701,40,11000,true,4.8",
        "A-2,Beta Electric,,electrical,tx;ok,,,9500,false,",
      ].join("\n"),
    );
    const res = await cli("contractors", "import", csv, "--mode", "live");
    expect(res.code, res.stderr).toBe(0);
    expect(res.stdout).toContain("imported 2 contractors into the live pool (--mode live; 2 new, 0 updated)");

    const json = join(dir, "pool.json");
    writeFileSync(
      json,
      JSON.stringify([
        {
          external_ref: "A-1",
          name: "Alpha Plumbing",
          trades: ["plumbing"],
          states: ["TX"],
          hourly_rate_cents: 12000,
        },
      ]),
    );
    expect((await cli("contractors", "import", "--mode", "live", json)).stdout).toContain(
      "0 new, 1 updated)",
    );
    const live = await liveContractorsInStore();
    expect(live).toHaveLength(2);
    const beta = live.find((c) => c.trades.includes("electrical"));
    expect(beta).toMatchObject({
      states: ["TX", "OK"],
      serviceRadiusMiles: null,
      emergencyCapable: false,
      rating: 4,
    });
  }, 180_000);

  it("imports only with --mode, into the pool of that mode: --mode test into the sandbox pool", async () => {
    const csv = join(dir, "sandbox-pool.csv");
    writeFileSync(
      csv,
      [
        "external_ref,name,trades,states,zip,hourly_rate_cents",
        "S-1,Sandbox Roofing,roofing,OR,97201,9000",
      ].join("\n"),
    );
    const unsaid = await cli("contractors", "import", csv);
    expect(unsaid.code).toBe(2);
    expect(unsaid.stderr).toMatch(/needs --mode live \(the live pool.*or --mode test \(the sandbox pool/);
    expect((await cli("contractors", "import", csv, "--mode", "prod")).code).toBe(2);
    expect((await cli("migrate")).code).toBe(0); // the sandbox pool is seeded before anything is added to it
    const res = await cli("contractors", "import", csv, "--mode", "test");
    expect(res.code, res.stderr).toBe(0);
    expect(res.stdout).toContain(
      "imported 1 contractors into the sandbox pool (--mode test; 1 new, 0 updated)",
    );
    const store = openSqliteStore(join(dir, "field-dispatch.sqlite"));
    try {
      const imported = (await store.contractors.load()).filter(
        (c) => c.trades.includes("roofing") && c.states.includes("OR") && c.hourlyRateCents === 9000,
      );
      expect(imported.map((c) => c.pool)).toEqual(["sandbox"]);
    } finally {
      await store.close();
    }
    expect((await liveContractorsInStore()).some((c) => c.hourlyRateCents === 9000)).toBe(false);
  }, 180_000);

  it("refuses an import into the sandbox pool before the sandbox is seeded", async () => {
    const empty = mkdtempSync(join(tmpdir(), "fd-cli-empty-"));
    try {
      const csv = join(empty, "pool.csv");
      writeFileSync(csv, "external_ref,name,trades,states,hourly_rate_cents\nS-1,Early,plumbing,TX,9000\n");
      const { stdout, stderr } = await run(
        process.execPath,
        ["--import", "tsx", "src/cli/index.ts", "contractors", "import", csv, "--mode", "test"],
        { cwd: ROOT, env: { ...process.env, ENV_FILE: "", DATA_DIR: empty } },
      ).catch((e: { stdout: string; stderr: string; code: number }) => {
        expect(e.code).toBe(1);
        return e;
      });
      expect(stdout).toBe("");
      expect(stderr).toMatch(/sandbox pool is not seeded yet: run `npm run cli -- migrate`/);
    } finally {
      rmSync(empty, { recursive: true, force: true });
    }
  }, 180_000);

  it("imports nothing from a file with a bad row and lists every problem", async () => {
    const bad = join(dir, "bad.csv");
    writeFileSync(
      bad,
      [
        "external_ref,name,trades,states,hourly_rate_cents",
        "B-1,Good Co,plumbing,TX,10000",
        "B-2,Bad Co,carpentry,ZZ,-5",
      ].join("\n"),
    );
    const res = await cli("contractors", "import", bad, "--mode", "live");
    expect(res.code).toBe(1);
    expect(res.stderr).toContain("nothing imported");
    expect(res.stderr).toMatch(/line 3: trades/);
    expect(res.stderr).toMatch(/line 3: states/);
    expect(res.stderr).toMatch(/line 3: hourly_rate_cents/);
    expect((await liveContractorsInStore()).some((c) => c.id.includes("B-1"))).toBe(false);
    expect(await liveContractorsInStore()).toHaveLength(2);
  }, 180_000);
});

describe("audit CLI", () => {
  const auditDir = mkdtempSync(join(tmpdir(), "fd-cli-audit-"));
  afterAll(() => rmSync(auditDir, { recursive: true, force: true }));
  const auditCli = async (...args: string[]) => {
    try {
      const { stdout, stderr } = await run(
        process.execPath,
        ["--import", "tsx", "src/cli/index.ts", ...args],
        {
          cwd: ROOT,
          env: { ...process.env, ENV_FILE: "", DATA_DIR: auditDir },
        },
      );
      return { code: 0, stdout, stderr };
    } catch (error) {
      const e = error as { code: number; stdout: string; stderr: string };
      return { code: e.code, stdout: e.stdout, stderr: e.stderr };
    }
  };

  it("verifies a seal offline against the published key, checks the whole log, and catches tampering", async () => {
    const server = await startChildServer({ DATA_DIR: auditDir });
    try {
      const key = (await server.waitFor(/(fsd_test_[0-9A-Za-z]{36})/))[1] ?? "";
      const res = await fetch(`${server.baseUrl}/api/dispatch/v1/quote`, {
        method: "POST",
        headers: { "content-type": "application/json", "x-api-key": key },
        body: JSON.stringify({ trade: "hvac", location: { state: "NY", zip: "10001" }, urgency: "routine" }),
      });
      const { seal } = (await res.json()) as { seal: string };

      const verified = await auditCli("audit", "verify", seal, "--url", server.baseUrl);
      expect(verified.code, verified.stdout + verified.stderr).toBe(0);
      const leaf = Number(/leaf: +#(\d+) /.exec(verified.stdout)?.[1]);
      expect(leaf).toBeGreaterThan(0); // the sandbox's own records come first
      expect(verified.stdout).toMatch(/signature: +valid/);
      expect(verified.stdout).toMatch(/inclusion: +proven/);
      expect(verified.stdout).toContain("VERIFIED");
      // Pinned to a key that is not the log's, the same proof fails.
      const other = join(auditDir, "other.pem");
      writeFileSync(
        other,
        generateKeyPairSync("ed25519").publicKey.export({ type: "spki", format: "pem" }).toString(),
      );
      const pinned = await auditCli("audit", "verify", seal, "--url", server.baseUrl, "--key", other);
      expect(pinned.code).toBe(1);
      expect(pinned.stdout).toMatch(/signature: +INVALID/);
      expect(
        (await auditCli("audit", "verify", "seal_0000000000000000000000", "--url", server.baseUrl)).code,
      ).toBe(1);

      // A record as the caller's list shows it: it hashes to the proven leaf and its disclosure is committed.
      const listed = (await (
        await fetch(`${server.baseUrl}/api/audit?kind=quote.issued`, { headers: { "x-api-key": key } })
      ).json()) as { records: Array<{ seal: string; disclosures: string[] }> };
      const shown = listed.records.find((r) => r.seal === seal);
      expect(shown?.disclosures.length).toBeGreaterThan(0);
      const shownFile = join(auditDir, "shown.json");
      writeFileSync(shownFile, JSON.stringify(shown));
      const withRecord = await auditCli(
        "audit",
        "verify",
        seal,
        "--url",
        server.baseUrl,
        "--record",
        shownFile,
      );
      expect(withRecord.code, withRecord.stdout + withRecord.stderr).toBe(0);
      expect(withRecord.stdout).toMatch(/record: +hashes to the leaf; 1 disclosure committed in it/);
      const forged = Buffer.from(JSON.stringify(["AAAAAAAAAAAAAAAAAAAAAA", "chosen_ref", "cref-x"])).toString(
        "base64url",
      );
      writeFileSync(shownFile, JSON.stringify({ ...shown, disclosures: [forged] }));
      const doctored = await auditCli(
        "audit",
        "verify",
        seal,
        "--url",
        server.baseUrl,
        "--record",
        shownFile,
      );
      expect(doctored.code).toBe(1);
      expect(doctored.stdout).toMatch(/record: +disclosure .* is not committed in the record/);

      // An attachment's bytes against the digest its record seals (issue 32): the account adds a photo to
      // its order, then checks the file it downloads, and a file that is not it.
      const placed = await fetch(`${server.baseUrl}/api/dispatch/v1/order`, {
        method: "POST",
        headers: { "content-type": "application/json", "x-api-key": key },
        body: JSON.stringify({
          trade: "hvac",
          location: { state: "NY", zip: "10001" },
          description: "No heat",
        }),
      });
      const orderId = ((await placed.json()) as { order_id: string }).order_id;
      const form = new FormData();
      const png = await sharp({ create: { width: 40, height: 30, channels: 3, background: "#c33" } })
        .png()
        .toBuffer();
      form.append("file", new Blob([new Uint8Array(png)]), "unit.png");
      const added = await fetch(`${server.baseUrl}/api/orders/${orderId}/attachments`, {
        method: "POST",
        headers: { "x-api-key": key },
        body: form,
      });
      expect(added.status).toBe(200);
      const attachment = (await added.json()) as { content_url: string; record: { seal: string } };
      const served = Buffer.from(
        await (await fetch(attachment.content_url, { headers: { "x-api-key": key } })).arrayBuffer(),
      );
      const records = (await (
        await fetch(`${server.baseUrl}/api/audit?kind=order.attachment_added&order_id=${orderId}`, {
          headers: { "x-api-key": key },
        })
      ).json()) as { records: Array<{ seal: string }> };
      writeFileSync(
        shownFile,
        JSON.stringify(records.records.find((r) => r.seal === attachment.record.seal)),
      );
      const servedFile = join(auditDir, "served.png");
      writeFileSync(servedFile, served);
      const fileArgs = [
        "audit",
        "verify",
        attachment.record.seal,
        "--url",
        server.baseUrl,
        "--record",
        shownFile,
      ];
      const bytesOk = await auditCli(...fileArgs, "--file", servedFile);
      expect(bytesOk.code, bytesOk.stdout + bytesOk.stderr).toBe(0);
      expect(bytesOk.stdout).toMatch(/file: +sha256 [0-9a-f]{64} is the sealed sha256 \(the stored file\)/);
      writeFileSync(servedFile, Buffer.concat([served, Buffer.from([0])]));
      const bytesSwapped = await auditCli(...fileArgs, "--file", servedFile);
      expect(bytesSwapped.code).toBe(1);
      expect(bytesSwapped.stdout).toMatch(/file: +sha256 [0-9a-f]{64} MATCHES NO SEALED DIGEST/);
      expect(bytesSwapped.stdout).toContain("NOT VERIFIED");

      const check = await auditCli("audit", "check");
      expect(check.code, check.stdout + check.stderr).toBe(0);
      expect(check.stdout).toContain("log consistent");

      // Tamper below the application: drop the guard, change one record.
      const db = new Database(join(auditDir, "field-dispatch.sqlite"));
      const original = db.prepare("SELECT record FROM audit_records WHERE seal = ?").get(seal) as {
        record: string;
      };
      db.exec("DROP TRIGGER audit_records_no_update");
      db.prepare(
        "UPDATE audit_records SET record = replace(record, '\"hvac\"', '\"roof\"') WHERE seal = ?",
      ).run(seal);
      db.close();
      const tampered = await auditCli("audit", "check");
      expect(tampered.code).toBe(1);
      expect(tampered.stdout).toContain(`MISMATCH: leaf ${leaf} `);
      // Every leaf before the altered one was checked, and the report says where it stopped.
      expect(tampered.stdout).toContain(
        `${leaf} leaves checked (0 purged records) before the first mismatch, at leaf ${leaf},`,
      );
      expect(tampered.stdout).toContain(seal);
      const failed = await auditCli("audit", "verify", seal, "--url", server.baseUrl);
      expect(failed.code).toBe(1);
      expect(failed.stdout).toContain("mismatch (record_altered)");

      // A seconds-old record deleted is tampering too, not a purge (issue 28, item 21).
      const again = new Database(join(auditDir, "field-dispatch.sqlite"));
      again.prepare("UPDATE audit_records SET record = ? WHERE seal = ?").run(original.record, seal);
      again.exec("DROP TRIGGER audit_records_no_delete");
      again.prepare("DELETE FROM audit_records WHERE seal = ?").run(seal);
      again.close();
      const deleted = await auditCli("audit", "check");
      expect(deleted.code, deleted.stdout).toBe(1);
      expect(deleted.stdout).toContain(`(0 purged records) before the first mismatch, at leaf ${leaf},`);
      expect(deleted.stdout).toContain(
        `MISMATCH: leaf ${leaf} (${seal}): its record is missing, but the leaf`,
      );
      const gone = await auditCli("audit", "verify", seal, "--url", server.baseUrl);
      expect(gone.code).toBe(1);
      expect(gone.stdout).toContain("mismatch (record_missing)");
    } finally {
      await server.kill();
    }
  }, 180_000);

  it("purges nothing younger than 7 years and manages legal holds", async () => {
    const early = await auditCli("audit", "purge", "--before", new Date().toISOString());
    expect(early.code).toBe(2);
    expect(early.stderr).toContain("records are kept 7 years");
    const purge = await auditCli("audit", "purge");
    expect(purge.code).toBe(0);
    expect(purge.stdout).toMatch(/^purged 0 audit records/);

    const add = await auditCli("audit", "hold", "add", "--order", "ord_123", "--reason", "litigation");
    expect(add.code).toBe(0);
    const id = add.stdout.trim();
    expect(id).toMatch(/^hold_/);
    expect((await auditCli("audit", "hold", "list")).stdout).toMatch(
      new RegExp(`${id}\\torder ord_123\\tactive`),
    );
    expect((await auditCli("audit", "hold", "release", id)).code).toBe(0);
    expect((await auditCli("audit", "hold", "list")).stdout).toContain("released");
    expect((await auditCli("audit", "hold", "release", id)).code).toBe(1);
    expect((await auditCli("audit", "hold", "add", "--reason", "x")).code).toBe(2);
  }, 180_000);
});

describe("settings from .env", () => {
  /** A loopback port nothing listens on (taken, then given back). */
  async function closedPort(): Promise<number> {
    const server = createServer().listen(0, "127.0.0.1");
    await once(server, "listening");
    const { port } = server.address() as AddressInfo;
    server.close();
    await once(server, "close");
    return port;
  }

  /** The CLI run from `cwd`, with the server settings of the test's own environment removed. */
  async function cliIn(cwd: string, env: Record<string, string>, ...args: string[]) {
    const base: Record<string, string | undefined> = { ...process.env };
    for (const name of ["PORT", "HOST", "PUBLIC_BASE_URL", "ENV_FILE", "DATA_DIR"]) delete base[name];
    const tsx = pathToFileURL(join(ROOT, "node_modules/tsx/dist/loader.mjs")).href;
    try {
      const { stdout, stderr } = await run(
        process.execPath,
        ["--import", tsx, join(ROOT, "src/cli/index.ts"), ...args],
        { cwd, env: { ...base, ...env } },
      );
      return { code: 0, stdout, stderr };
    } catch (error) {
      const e = error as { code: number; stdout: string; stderr: string };
      return { code: e.code, stdout: e.stdout, stderr: e.stderr };
    }
  }

  it("reads .env in the working directory, the environment's own variables winning, and audit verify names the URL it could not reach", async () => {
    const work = mkdtempSync(join(tmpdir(), "fd-cli-env-"));
    try {
      const [filePort, envPort] = [await closedPort(), await closedPort()];
      writeFileSync(join(work, ".env"), `# settings\nPORT=${filePort}\nHOST=0.0.0.0\n`);
      const fromFile = await cliIn(work, {}, "audit", "verify", "seal_x");
      expect(fromFile.code).toBe(1);
      // HOST 0.0.0.0 is every address: the CLI reaches it on loopback.
      expect(fromFile.stderr).toContain(
        `could not reach http://127.0.0.1:${filePort}/api/attest/verify/seal_x: ECONNREFUSED`,
      );
      const fromEnv = await cliIn(work, { PORT: String(envPort) }, "audit", "verify", "seal_x");
      expect(fromEnv.stderr).toContain(
        `could not reach http://127.0.0.1:${envPort}/api/attest/verify/seal_x`,
      );
      const named = await cliIn(work, { ENV_FILE: "missing.env" }, "audit", "verify", "seal_x");
      expect(named.code).toBe(1);
      expect(named.stderr).toContain("ENV_FILE missing.env does not exist");
    } finally {
      rmSync(work, { recursive: true, force: true });
    }
  }, 180_000);
});

describe("webhooks CLI", () => {
  it("shows an endpoint's delivery log and redelivers, refusing a disabled endpoint unless told to enable it", async () => {
    const migrated = await cli("migrate");
    expect(migrated.code, migrated.stderr).toBe(0);
    const store = openSqliteStore(join(dir, "field-dispatch.sqlite"));
    const now = new Date().toISOString();
    let endpointId = "";
    let deliveryId = "";
    try {
      const endpoint = await store.webhooks.setDefaultEndpoint(
        "acct_cli",
        false,
        "https://hooks.example.com/x",
        now,
      );
      endpointId = endpoint?.id ?? "";
      await store.write(async (tx) => {
        tx.enqueueWebhook({
          id: "msg_cli0000000000000001",
          account_id: "acct_cli",
          livemode: 0,
          order_id: "ord_cli",
          type: "order.offered",
          created_at: now,
          callback_url: null,
          payload: "{}",
          fanned_out: 0,
        });
      });
      expect(await store.webhooks.fanOut(10, now)).toBe(1);
      const [claimed] = await store.webhooks.claimDue(now, new Date(Date.now() + 60_000).toISOString(), 10);
      if (!claimed) throw new Error("nothing claimed");
      deliveryId = claimed.delivery.id;
      await store.webhooks.recordAttempt(claimed.delivery, 1, {
        startedAt: now,
        durationMs: 12,
        statusCode: 410,
        error: "410 Gone: the endpoint is disabled",
        outcome: "failed",
        nextAttemptAt: null,
        disableEndpoint: "the endpoint answered 410 Gone",
      });
    } finally {
      await store.close();
    }
    const log = await cli("webhooks", "deliveries", "--endpoint", endpointId);
    expect(log.code, log.stderr).toBe(0);
    expect(log.stdout).toContain("disabled (the endpoint answered 410 Gone)");
    expect(log.stdout).toMatch(new RegExp(`${deliveryId}\\s+order.offered\\s+ord_cli\\s+failed`));
    expect(log.stdout).toMatch(/#1 .* 12ms 410 failed/);

    const refused = await cli("webhooks", "redeliver", deliveryId);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toMatch(/disabled/);
    const since = new Date(Date.now() - 3_600_000).toISOString();
    const again = await cli("webhooks", "redeliver", "--endpoint", endpointId, "--since", since, "--enable");
    expect(again.code, again.stderr).toBe(0);
    expect(again.stdout).toContain("1 deliveries queued again");
    const after = openSqliteStore(join(dir, "field-dispatch.sqlite"));
    try {
      expect(await after.webhooks.deliveryById(deliveryId)).toMatchObject({ status: "pending", attempts: 0 });
      expect((await after.webhooks.endpointById(endpointId))?.status).toBe("enabled");
    } finally {
      await after.close();
    }
    expect((await cli("webhooks", "redeliver")).code).toBe(2);
  }, 180_000);
});

describe("the CLI's read-only commands beside a running server (issue 28, item 23)", () => {
  const sharedDir = mkdtempSync(join(tmpdir(), "fd-cli-beside-"));
  afterAll(() => rmSync(sharedDir, { recursive: true, force: true }));
  const sharedCli = async (...args: string[]) => {
    try {
      const { stdout, stderr } = await run(
        process.execPath,
        ["--import", "tsx", "src/cli/index.ts", ...args],
        {
          cwd: ROOT,
          env: { ...process.env, ENV_FILE: "", DATA_DIR: sharedDir },
        },
      );
      return { code: 0, stdout, stderr };
    } catch (error) {
      const e = error as { code: number; stdout: string; stderr: string };
      return { code: e.code, stdout: e.stdout, stderr: e.stderr };
    }
  };

  it("check the pool and the log and list keys and holds beside the server while a write holds the lock, writing nothing", async () => {
    // The server's own sequencer off: the records it writes stay past the latest checkpoint, for whoever
    // signs the log next to seal.
    const server = await startChildServer({ DATA_DIR: sharedDir, AUDIT_SEQUENCE_INTERVAL_MS: "0" });
    const db = new Database(join(sharedDir, "field-dispatch.sqlite"));
    try {
      const key = (await server.waitFor(/(fsd_test_[0-9A-Za-z]{36})/))[1] ?? "";
      const quote = await fetch(`${server.baseUrl}/api/dispatch/v1/quote`, {
        method: "POST",
        headers: { "content-type": "application/json", "x-api-key": key },
        body: JSON.stringify({ trade: "hvac", location: { state: "NY", zip: "10001" }, urgency: "routine" }),
      });
      expect(quote.status).toBe(200);
      const signed = () =>
        (db.prepare("SELECT coalesce(max(tree_size), 0) AS n FROM audit_checkpoints").get() as { n: number })
          .n;
      const leaves = () => (db.prepare("SELECT count(*) AS n FROM audit_leaves").get() as { n: number }).n;
      const before = signed();
      expect(leaves()).toBeGreaterThan(before); // the quote's record waits to be signed
      // The write lock, held as a long write of a busy server's holds it (here by the test's connection).
      db.exec("BEGIN IMMEDIATE");
      try {
        for (const args of [
          ["pool", "check"],
          ["audit", "check"],
          ["keys", "list"],
          ["audit", "hold", "list"],
        ]) {
          const res = await sharedCli(...args);
          expect(res.code, `${args.join(" ")}: ${res.stdout}${res.stderr}`).toBe(0);
          expect(res.stderr).not.toMatch(/locked/);
        }
      } finally {
        db.exec("ROLLBACK");
      }
      // Nothing was signed (or written) by the checks.
      expect(signed()).toBe(before);
    } finally {
      db.close();
      await server.kill();
    }
  }, 240_000);
});
