// Operator CLI commands: `npm run cli -- <command>`. Commands: serve, migrate, keys create|list|revoke,
// contractors import <file>. Exit code 0 on success, 1 on failure, 2 on a usage error.

import { createHash } from "node:crypto";
import { readFileSync } from "node:fs";
import { basename, extname } from "node:path";
import { parseArgs } from "node:util";
import { type Actor, sealRecord } from "../audit/record.js";
import { ApiKeyService } from "../auth/api-key-service.js";
import { bootstrap } from "../bootstrap.js";
import { loadConfig } from "../config.js";
import { openStore } from "../services/create-services.js";
import type { Store } from "../storage/store.js";
import { parseContractorFile } from "./contractor-import.js";

const USAGE = `usage: npm run cli -- <command>

  serve                                   start the service (same as npm start)
  migrate                                 create or upgrade the schema (and seed the sandbox pool)
  keys create --account <name> --mode test|live [--label <text>]
              [--rate-limit-per-minute <n>] [--rate-limit-burst <n>]
                                          issue a key; the key alone is printed on the last line
  keys list [--account <name>]            list keys (hints only, never the key)
  keys revoke <key-id>                    revoke a key at once
  contractors import <file.csv|file.json> load or update the live contractor pool
`;

class UsageError extends Error {}

/** The actor the audit log records for decisions taken from this CLI. */
const OPERATOR: Actor = "operator:cli";

function positiveInt(value: string | undefined, name: string): number | null {
  if (value === undefined) return null;
  if (!/^\d+$/.test(value) || Number(value) <= 0) throw new UsageError(`${name} must be a positive integer`);
  return Number(value);
}

async function withStore<T>(fn: (store: Store) => Promise<T>): Promise<T> {
  const config = loadConfig();
  const store = openStore(config);
  try {
    await store.migrate();
    return await fn(store);
  } finally {
    await store.close();
  }
}

async function keys(args: string[]): Promise<void> {
  const [sub, ...rest] = args;
  const { values, positionals } = parseArgs({
    args: rest,
    allowPositionals: true,
    options: {
      account: { type: "string" },
      mode: { type: "string" },
      label: { type: "string" },
      "rate-limit-per-minute": { type: "string" },
      "rate-limit-burst": { type: "string" },
    },
  });
  if (sub === "create") {
    if (!values.account) throw new UsageError("keys create needs --account <name>");
    if (values.mode !== "test" && values.mode !== "live")
      throw new UsageError("keys create needs --mode test|live");
    const mode = values.mode;
    const account = values.account;
    const ratePerMinute = positiveInt(values["rate-limit-per-minute"], "--rate-limit-per-minute");
    const burst = positiveInt(values["rate-limit-burst"], "--rate-limit-burst");
    await withStore(async (store) => {
      const service = new ApiKeyService(store, 0);
      const issued = await service.issue({
        accountName: account,
        mode,
        label: values.label ?? null,
        ratePerMinute,
        burst,
        actor: OPERATOR,
      });
      process.stderr.write(
        `issued key ${issued.id} (${mode}) for account ${account}; store it now, it is not shown again\n`,
      );
      process.stdout.write(`${issued.key}\n`);
    });
    return;
  }
  if (sub === "list") {
    await withStore(async (store) => {
      const rows = await store.listApiKeys(values.account);
      for (const r of rows) {
        const limits =
          r.rate_limit_per_minute || r.rate_limit_burst
            ? ` limit=${r.rate_limit_per_minute ?? "default"}/min burst=${r.rate_limit_burst ?? "default"}`
            : "";
        process.stdout.write(
          `${r.id}\t${r.account_name}\t${r.mode}\t${r.key_hint}\t${r.revoked_at ? `revoked ${r.revoked_at}` : "active"}\t${r.created_at}${limits}\n`,
        );
      }
      if (rows.length === 0) process.stderr.write("no keys\n");
    });
    return;
  }
  if (sub === "revoke") {
    const id = positionals[0];
    if (!id) throw new UsageError("keys revoke needs a key id (see keys list)");
    await withStore(async (store) => {
      const result = await new ApiKeyService(store, 0).revoke(id, OPERATOR);
      if (result === "not_found") throw new Error(`no key ${id}`);
      process.stdout.write(result === "revoked" ? `revoked ${id}\n` : `${id} was already revoked\n`);
    });
    return;
  }
  throw new UsageError(`unknown keys command ${sub ?? ""}`);
}

async function contractors(args: string[]): Promise<void> {
  const [sub, file] = args;
  if (sub !== "import" || !file) throw new UsageError("contractors import <file.csv|file.json>");
  const format = extname(file).toLowerCase() === ".json" ? "json" : "csv";
  const { contractors: rows, errors } = parseContractorFile(readFileSync(file, "utf8"), format);
  if (errors.length > 0) {
    throw new Error(`nothing imported; ${errors.length} problem(s) in ${file}:\n  ${errors.join("\n  ")}`);
  }
  await withStore(async (store) => {
    const digest = createHash("sha256").update(readFileSync(file)).digest("hex");
    const { inserted, updated } = await store.upsertLiveContractors(rows, (counts) =>
      sealRecord({
        kind: "pool.imported",
        at: new Date().toISOString(),
        accountId: null,
        livemode: true,
        actor: OPERATOR,
        data: {
          file: basename(file),
          file_sha256: digest,
          ...counts,
          external_refs: rows.map((c) => c.externalRef),
        },
      }),
    );
    process.stdout.write(
      `imported ${rows.length} live contractors (${inserted} new, ${updated} updated); running servers pick them up within POOL_REFRESH_MS\n`,
    );
  });
}

export async function runCli(argv: string[]): Promise<number> {
  const [command, ...rest] = argv;
  try {
    switch (command) {
      case "serve":
        await import("../main.js");
        return 0;
      case "migrate":
        await withStore(async (store) => {
          const result = await bootstrap(store, new ApiKeyService(store, 0));
          process.stdout.write(
            `schema up to date${result.seededContractors ? `; seeded ${result.seededContractors} sandbox contractors` : ""}\n`,
          );
          if (result.sandboxKey) process.stdout.write(`sandbox key: ${result.sandboxKey}\n`);
        });
        return 0;
      case "keys":
        await keys(rest);
        return 0;
      case "contractors":
        await contractors(rest);
        return 0;
      case undefined:
      case "help":
      case "--help":
        process.stdout.write(USAGE);
        return command === undefined ? 2 : 0;
      default:
        throw new UsageError(`unknown command ${command}`);
    }
  } catch (error) {
    if (error instanceof UsageError) {
      process.stderr.write(`${error.message}\n\n${USAGE}`);
      return 2;
    }
    process.stderr.write(`error: ${error instanceof Error ? error.message : String(error)}\n`);
    return 1;
  }
}
