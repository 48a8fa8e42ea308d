// Operator CLI commands: `npm run cli -- <command>`. Commands: serve, migrate, keys create|list|revoke,
// contractors import <file>, audit verify|check|purge|hold, webhooks deliveries|redeliver,
// simulate. Exit code 0 on success, 1 on failure, 2 on a usage error.

import { createHash, createPublicKey } from "node:crypto";
import { existsSync, readFileSync } from "node:fs";
import { basename, extname, join } from "node:path";
import { parseArgs } from "node:util";
import { AuditLog } from "../audit/audit-log.js";
import { checkLog } from "../audit/log-check.js";
import { type Actor, sealRecord } from "../audit/record.js";
import { type ShownRecord, UnreachableError, verifyRemote } from "../audit/remote-verify.js";
import { RETENTION_YEARS, retentionCutoff } from "../audit/retention.js";
import { loadSigningKey, SIGNING_KEY_FILE } from "../audit/signing.js";
import { ApiKeyService } from "../auth/api-key-service.js";
import { bootstrap, issueSandboxDispatchKey } from "../bootstrap.js";
import { type Config, loadConfig, serverBaseUrl } from "../config.js";
import { DEFAULT_KEY_ROLE, KEY_ROLES, type KeyRole } from "../domain/key-roles.js";
import { newId } from "../ids.js";
import { parseContractorFile } from "../operations/pool/contractor-file.js";
import { openStore } from "../services/create-services.js";
import type { Store } from "../storage/store.js";
import { parseSimulateArgs, SIMULATE_USAGE, simulateCommand } from "./simulate.js";
import { WEBHOOKS_USAGE, webhooksCommand } from "./webhooks-command.js";

const USAGE = `usage: npm run cli -- <command>

  serve                                   start the service (same as npm start)
  migrate                                 create or upgrade the schema (and seed the sandbox pool)
  keys create --account <name> --mode test|live [--label <text>]
              [--rate-limit-per-minute <n>] [--rate-limit-burst <n>]
              [--contractor <contractor-id> | --dispatcher]
                                          issue a key; the key alone is printed on the last line. A
                                          caller's key by default; --contractor: that contractor's own
                                          credentials; --dispatcher: the dispatch team's operator role
              [--role requester|approver|admin] [--approval-limit <cents>]
                                          an account key's role (none: admin); an approver's limit
  keys role <key-id> --role requester|approver|admin [--approval-limit <cents>]
                                          set an account key's role (and an approver's limit)
  keys list [--account <name>]            list keys (hints only, never the key)
  keys revoke <key-id>                    revoke a key at once
  contractors import <file.csv|file.json> --mode live|test
                                          load or update the live pool (--mode live) or the
                                          sandbox pool (--mode test), by external_ref
  pool check                              recompute every contractor's capacity from its open offers
                                          and jobs, and report any drift from the counter or the
                                          capacity ledger; exit 1 on any
  audit verify <seal> [--url <base-url>] [--key <public-key.pem>] [--record <file|->]
              [--file <artifact>]
                                          fetch a record's proof and check it offline (node:crypto):
                                          checkpoint signature and inclusion; with --record, one item
                                          of an audit list (JSON): that the record hashes to the leaf
                                          and its disclosures are committed in it; with --file, that
                                          the bytes of an attachment (a photo, a PDF, its thumbnail)
                                          are the ones the record seals; exit 1 unless verified
  audit check                             recompute every leaf, node and the root from the store and
                                          report the first mismatch; exit 1 on any
  audit purge [--before <ISO time>]       delete records older than 7 years (default cutoff) that no
                                          legal hold covers; their leaves stay in the tree
  audit hold add (--order <id> | --account <name>) --reason <text>
  audit hold release <hold-id>
  audit hold list                         legal holds: held records are never purged
${WEBHOOKS_USAGE}${SIMULATE_USAGE}`;

class UsageError extends Error {}

/** The actor the audit log records for decisions taken from this CLI. */
const OPERATOR: Actor = "operator:cli";

function positiveInt(value: string | undefined, name: string): number | null {
  if (value === undefined) return null;
  if (!/^\d+$/.test(value) || Number(value) <= 0) throw new UsageError(`${name} must be a positive integer`);
  return Number(value);
}

/**
 * Runs a command on the store the settings name, migrated first (which writes nothing to a store that is
 * up to date). `writes`: the command may record decisions, which are sealed into the log's tree after it
 * (sequenceOwnRecords). `reads`: it only reads, and writes nothing at all, so that it runs beside a server
 * without waiting for (or failing on) the server's writes.
 */
async function withStore<T>(
  fn: (store: Store, config: Config) => Promise<T>,
  access: "reads" | "writes" = "writes",
): Promise<T> {
  const config = loadConfig();
  const store = openStore(config);
  try {
    await store.migrate();
    const result = await fn(store, config);
    if (access === "writes") await sequenceOwnRecords(store, config);
    return result;
  } finally {
    await store.close();
  }
}

/**
 * Seals what this command recorded into the tree at once, when this machine holds the log's key (the
 * configured one, or the key file of the embedded store). Otherwise the servers' sequencers do it
 * within AUDIT_SEQUENCE_INTERVAL_MS: the CLI never creates a second signing key for a shared store.
 */
async function sequenceOwnRecords(store: Store, config: Config): Promise<void> {
  const hasKey =
    config.AUDIT_SIGNING_KEY !== undefined ||
    existsSync(join(config.DATA_DIR, SIGNING_KEY_FILE)) ||
    config.DATABASE_URL === undefined;
  if (!hasKey) return;
  try {
    await new AuditLog(store.audit, loadSigningKey(config.AUDIT_SIGNING_KEY, config.DATA_DIR)).sequence(true);
  } catch (error) {
    // The command's own write is committed; sealing it now is a courtesy. A serving server busy with its
    // own writes (SQLite's lock not had within its busy timeout) seals it within AUDIT_SEQUENCE_INTERVAL_MS.
    // SQLITE_BUSY, or SQLITE_BUSY_SNAPSHOT: the sequencer's read turned write after the server committed
    // (WAL answers that at once, without the busy timeout).
    if (!/^SQLITE_(BUSY|LOCKED)/.test(String((error as { code?: unknown }).code))) throw error;
    process.stderr.write("the store is busy: a running server's sequencer seals this command's records\n");
  }
}

type AuditValues = ReturnType<typeof parseAuditArgs>["values"];

function parseAuditArgs(rest: string[]) {
  return parseArgs({
    args: rest,
    allowPositionals: true,
    options: {
      url: { type: "string" },
      key: { type: "string" },
      record: { type: "string" },
      file: { type: "string" },
      before: { type: "string" },
      order: { type: "string" },
      account: { type: "string" },
      reason: { type: "string" },
    },
  });
}

async function audit(args: string[]): Promise<number> {
  const [sub, ...rest] = args;
  const { values, positionals } = parseAuditArgs(rest);
  if (sub === "verify") return auditVerify(positionals[0], values);
  if (sub === "check") return auditCheck();
  if (sub === "purge") return auditPurge(values);
  if (sub === "hold") return auditHold(positionals, values);
  throw new UsageError(`unknown audit command ${sub ?? ""}`);
}

/** `audit verify <seal>`: a record's proof fetched from a server and checked offline. */
async function auditVerify(seal: string | undefined, values: AuditValues): Promise<number> {
  if (!seal) throw new UsageError("audit verify needs a seal");
  const base = values.url ?? serverBaseUrl(loadConfig());
  if (!base) throw new UsageError("PORT is 0 (a free port chosen at start): pass --url <base-url>");
  const pinned = values.key ? createPublicKey(readFileSync(values.key, "utf8")) : undefined;
  const shown = values.record
    ? (JSON.parse(readFileSync(values.record === "-" ? 0 : values.record, "utf8")) as ShownRecord)
    : undefined;
  if (values.file !== undefined && shown === undefined)
    throw new UsageError("--file needs --record: the record's disclosures say which digest it seals");
  const artifact = values.file === undefined ? undefined : readFileSync(values.file);
  const result = await verifyRemote(base, seal, pinned, shown, artifact).catch((error: unknown) => {
    if (!(error instanceof UnreachableError)) throw error;
    const from = values.url
      ? "--url"
      : "PUBLIC_BASE_URL, else HOST and PORT, as the server reads them (environment, then .env)";
    throw new Error(`${error.message}\nIs the service running there? The URL came from ${from}.`);
  });
  process.stdout.write(`${result.lines.join("\n")}\n${result.ok ? "VERIFIED" : "NOT VERIFIED"}\n`);
  return result.ok ? 0 : 1;
}

/** `audit check`: the whole log recomputed from the store. */
function auditCheck(): Promise<number> {
  return withStore(async (store, config) => {
    const signer = loadSigningKey(config.AUDIT_SIGNING_KEY, config.DATA_DIR);
    const report = await checkLog(store.audit, signer.publicKey);
    const checked = `${report.leaves} leaves checked (${report.purged} purged records)`;
    const where =
      report.ok || report.failedAtLeaf === null
        ? ""
        : ` before the first mismatch, at leaf ${report.failedAtLeaf}`;
    process.stdout.write(
      `${checked}${where}, ${report.pending} waiting to be sequenced, checkpoint size ${report.checkpointSize ?? "none"}\n`,
    );
    if (report.ok) {
      process.stdout.write("log consistent: every record, node and the root match the signed checkpoint\n");
      return 0;
    }
    process.stdout.write(`MISMATCH: ${report.mismatch}\n`);
    return 1;
  }, "reads");
}

/** `audit purge [--before <time>]`: records past retention, not under a hold. */
async function auditPurge(values: AuditValues): Promise<number> {
  const now = new Date();
  const cutoff = retentionCutoff(now);
  let before = cutoff;
  if (values.before !== undefined) {
    before = new Date(values.before);
    if (Number.isNaN(before.getTime())) throw new UsageError("--before must be an ISO 8601 time");
    if (before > cutoff) {
      throw new UsageError(
        `--before must be at most ${cutoff.toISOString()}: records are kept ${RETENTION_YEARS} years`,
      );
    }
  }
  await withStore(async (store) => {
    const purged = await store.audit.purgeAudit(before.toISOString());
    process.stdout.write(`purged ${purged} audit records created before ${before.toISOString()}\n`);
    // An attachment's file follows the record that seals it; its bytes go with the next orphan pass.
    const files = await store.attachments.purgeUnsealed(before.toISOString());
    process.stdout.write(`removed ${files} attachments whose sealed record was purged\n`);
  });
  return 0;
}

/** `audit hold add|release|list`: legal holds. */
async function auditHold(positionals: string[], values: AuditValues): Promise<number> {
  const [action, id] = positionals;
  if (action === "add") return holdAdd(values);
  if (action === "release") {
    if (!id) throw new UsageError("audit hold release needs a hold id (see audit hold list)");
    await withStore(async (store) => {
      if (!(await store.audit.releaseLegalHold(id, new Date().toISOString())))
        throw new Error(`no active hold ${id}`);
      process.stdout.write(`released ${id}\n`);
    });
    return 0;
  }
  if (action === "list") {
    await withStore(async (store) => {
      for (const h of await store.audit.listLegalHolds()) {
        const scope = h.order_id ? `order ${h.order_id}` : `account ${h.account_id}`;
        process.stdout.write(
          `${h.id}\t${scope}\t${h.released_at ? `released ${h.released_at}` : "active"}\t${h.created_at}\t${h.reason}\n`,
        );
      }
    }, "reads");
    return 0;
  }
  throw new UsageError("audit hold add|release|list");
}

async function holdAdd(values: AuditValues): Promise<number> {
  if (!values.reason) throw new UsageError("audit hold add needs --reason <text>");
  if ((values.order === undefined) === (values.account === undefined))
    throw new UsageError("audit hold add needs exactly one of --order <id> or --account <name>");
  const reason = values.reason;
  await withStore(async (store) => {
    let accountId: string | null = null;
    if (values.account !== undefined) {
      const account = await store.keys.findAccountByName(values.account);
      if (!account) throw new Error(`no account ${values.account}`);
      accountId = account.id;
    }
    const hold = {
      id: newId("hold"),
      account_id: accountId,
      order_id: values.order ?? null,
      reason,
      created_at: new Date().toISOString(),
      released_at: null,
    };
    await store.audit.addLegalHold(hold);
    process.stdout.write(`${hold.id}\n`);
  });
  return 0;
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
      contractor: { type: "string" },
      dispatcher: { type: "boolean" },
      role: { type: "string" },
      "approval-limit": { type: "string" },
    },
  });
  if (sub === "create") {
    await keysCreate(values);
    return;
  }
  if (sub === "role") {
    const id = positionals[0];
    if (!id) throw new UsageError("keys role needs a key id (see keys list)");
    const { role, limit } = roleOf(values, true);
    await withStore(async (store) => {
      const result = await new ApiKeyService(store, 0).setRole(id, null, role ?? "admin", limit, OPERATOR);
      if (result === "not_found") throw new Error(`no account key ${id}`);
      process.stdout.write(`${id}: ${role}${limit === null ? "" : ` (approval limit ${limit} cents)`}\n`);
    });
    return;
  }
  if (sub === "list") {
    await keysList(values.account);
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

type KeyOptions = {
  account?: string | undefined;
  mode?: string | undefined;
  label?: string | undefined;
  "rate-limit-per-minute"?: string | undefined;
  "rate-limit-burst"?: string | undefined;
  contractor?: string | undefined;
  dispatcher?: boolean | undefined;
  role?: string | undefined;
  "approval-limit"?: string | undefined;
};

/** --role and --approval-limit, checked. */
function roleOf(values: KeyOptions, required: boolean): { role: KeyRole | null; limit: number | null } {
  const role = values.role;
  if (role === undefined && required) throw new UsageError("keys role needs --role requester|approver|admin");
  if (role !== undefined && !(KEY_ROLES as readonly string[]).includes(role)) {
    throw new UsageError("--role must be requester, approver or admin");
  }
  const raw = values["approval-limit"];
  if (raw !== undefined && !/^\d+$/.test(raw))
    throw new UsageError("--approval-limit must be whole cents, 0 or more");
  const limit = raw === undefined ? null : Number(raw);
  if (limit !== null && role !== "approver")
    throw new UsageError("--approval-limit goes only with --role approver");
  return { role: (role as KeyRole | undefined) ?? null, limit };
}

async function keysCreate(values: KeyOptions): Promise<void> {
  if (values.contractor && values.dispatcher) {
    throw new UsageError("keys create takes --contractor <id> or --dispatcher, not both");
  }
  const kind = values.contractor ? "contractor" : values.dispatcher ? "dispatcher" : "account";
  if (!values.account) throw new UsageError("keys create needs --account <name>");
  if (values.mode !== "test" && values.mode !== "live")
    throw new UsageError("keys create needs --mode test|live");
  const mode = values.mode;
  const account = values.account;
  const ratePerMinute = positiveInt(values["rate-limit-per-minute"], "--rate-limit-per-minute");
  const burst = positiveInt(values["rate-limit-burst"], "--rate-limit-burst");
  const { role, limit } = roleOf(values, false);
  if (role !== null && kind !== "account") throw new UsageError("--role is for an account's key");
  await withStore(async (store) => {
    const service = new ApiKeyService(store, 0);
    const issued = await service.issue({
      accountName: account,
      mode,
      label: values.label ?? null,
      ratePerMinute,
      burst,
      actor: OPERATOR,
      kind,
      contractorId: values.contractor ?? null,
      role,
      approvalLimitCents: limit,
    });
    const whose =
      kind === "account" ? "" : kind === "contractor" ? ` contractor ${values.contractor},` : " dispatcher,";
    process.stderr.write(
      `issued${whose} key ${issued.id} (${mode}) for account ${account}; store it now, it is not shown again\n`,
    );
    process.stdout.write(`${issued.key}\n`);
  });
}

async function keysList(account: string | undefined): Promise<void> {
  await withStore(async (store) => {
    const rows = await store.keys.list(account);
    for (const r of rows) {
      const limits =
        r.rate_limit_per_minute || r.rate_limit_burst
          ? ` limit=${r.rate_limit_per_minute ?? "default"}/min burst=${r.rate_limit_burst ?? "default"}`
          : "";
      const role =
        r.kind === "account"
          ? `\t${r.role ?? DEFAULT_KEY_ROLE}${r.approval_limit_cents === null ? "" : `<=${r.approval_limit_cents}`}`
          : "";
      process.stdout.write(
        `${r.id}\t${r.account_name}\t${r.mode}\t${r.kind}${r.contractor_id ? `:${r.contractor_id}` : ""}${role}\t${r.key_hint}\t${r.revoked_at ? `revoked ${r.revoked_at}` : "active"}\t${r.created_at}${limits}\n`,
      );
    }
    if (rows.length === 0) process.stderr.write("no keys\n");
  }, "reads");
}

const IMPORT_USAGE = "contractors import <file.csv|file.json> --mode live|test";

/**
 * `contractors import <file> --mode live|test`: upserts the file's contractors into the pool a key of that
 * mode reaches, the live pool or the sandbox pool. The mode is required: a pool file meant for one pool
 * must never land in the other unasked (a sandbox dispatcher does not see live contractors).
 */
async function contractors(args: string[]): Promise<void> {
  const [sub, ...rest] = args;
  const { values, positionals } = parseArgs({
    args: rest,
    allowPositionals: true,
    options: { mode: { type: "string" } },
  });
  const file = positionals[0];
  if (sub !== "import" || !file || positionals.length > 1) throw new UsageError(IMPORT_USAGE);
  if (values.mode !== "live" && values.mode !== "test") {
    throw new UsageError(
      `contractors import needs --mode live (the live pool, matched for live keys) or --mode test (the sandbox pool, matched for test keys)\n${IMPORT_USAGE}`,
    );
  }
  const pool = values.mode === "live" ? "live" : "sandbox";
  const format = extname(file).toLowerCase() === ".json" ? "json" : "csv";
  const { contractors: rows, errors } = parseContractorFile(readFileSync(file, "utf8"), format, pool);
  if (errors.length > 0) {
    throw new Error(`nothing imported; ${errors.length} problem(s) in ${file}:\n  ${errors.join("\n  ")}`);
  }
  await withStore(async (store) => {
    // The first start seeds the sandbox pool only when it is empty: an import into it before then would
    // leave the sandbox without its generated contractors.
    if (pool === "sandbox" && (await store.contractors.count("sandbox")) === 0) {
      throw new Error(
        "the sandbox pool is not seeded yet: run `npm run cli -- migrate` (or start the server once) first",
      );
    }
    const digest = createHash("sha256").update(readFileSync(file)).digest("hex");
    const { inserted, updated } = await store.contractors.upsert(rows, (counts) =>
      sealRecord({
        kind: "pool.imported",
        at: new Date().toISOString(),
        accountId: null,
        livemode: pool === "live",
        actor: OPERATOR,
        data: {
          pool,
          file: basename(file),
          file_sha256: digest,
          ...counts,
          external_refs: rows.map((c) => c.externalRef),
        },
      }),
    );
    process.stdout.write(
      `imported ${rows.length} contractors into the ${pool} pool (--mode ${values.mode}; ${inserted} new, ${updated} updated); running servers pick them up within POOL_REFRESH_MS\n`,
    );
  });
}

/**
 * `migrate`: the schema, the sandbox pool, and on the store's first preparation the two one-time keys a
 * first server start prints (the sandbox key and the sandbox dispatch-team key), printed here instead:
 * a store prepared this way (a PostgreSQL deployment, say) starts servers that print no key.
 */
async function migrate(store: Store): Promise<void> {
  const keys = new ApiKeyService(store, 0);
  const result = await bootstrap(store, keys);
  process.stdout.write(
    `schema up to date${result.seededContractors ? `; seeded ${result.seededContractors} sandbox contractors` : ""}${result.seededChecklists ? `; ${result.seededChecklists} sandbox starter checklists` : ""}\n`,
  );
  if (!result.sandboxKey) return;
  process.stdout.write(`sandbox key (shown once): ${result.sandboxKey}\n`);
  const dispatchKey = await issueSandboxDispatchKey(keys);
  process.stdout.write(`sandbox dispatch-team key (shown once): ${dispatchKey}\n`);
}

/** `pool check`: every contractor's capacity recomputed from its open offers and jobs. */
async function poolCheck(store: Store): Promise<number> {
  const drift = await store.contractors.capacityDrift();
  if (drift.length === 0) {
    process.stdout.write(
      "capacity ok: every contractor's counter and ledger match its open offers and jobs\n",
    );
    return 0;
  }
  for (const d of drift) {
    const orders = [
      ...(d.unheld.length ? [`held without a ledger row: ${d.unheld.join(", ")}`] : []),
      ...(d.stale.length ? [`ledger rows for nothing open: ${d.stale.join(", ")}`] : []),
    ];
    process.stdout.write(
      `${d.contractorId}: counter ${d.counter}, ledger ${d.ledger}, open offers and jobs ${d.open}${orders.length ? `; ${orders.join("; ")}` : ""}\n`,
    );
  }
  process.stdout.write(`capacity drift: ${drift.length} contractor(s)\n`);
  return 1;
}

export async function runCli(argv: string[]): Promise<number> {
  const [command, ...rest] = argv;
  try {
    switch (command) {
      case "serve":
        await import("../main.js");
        return 0;
      case "migrate":
        await withStore(migrate);
        return 0;
      case "keys":
        await keys(rest);
        return 0;
      case "contractors":
        await contractors(rest);
        return 0;
      case "audit":
        return await audit(rest);
      case "pool":
        if (rest[0] !== "check" || rest.length > 1) throw new UsageError("pool check");
        return await withStore(poolCheck, "reads");
      case "simulate": {
        const parsed = parseSimulateArgs(rest);
        if (!parsed.ok) throw new UsageError(parsed.error);
        return await withStore((store, config) =>
          simulateCommand(store, config, parsed.options, parsed.json),
        );
      }
      case "webhooks":
        return await withStore(
          (store) => webhooksCommand(rest, store, (message) => new UsageError(message)),
          rest[0] === "deliveries" ? "reads" : "writes",
        );
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
