// First-start set-up of a store: migrations, the sandbox contractor pool and the sandbox account with one
// test key (returned once, for printing; later starts find the account and return no key). That key is
// also the one agents' keyed tools run under when the server has no MCP_API_KEY: the server finds it again
// on every start by its stored hash (auth/sandbox-key.ts), so it never needs the plaintext it printed once.
// The sandbox (test mode) also gets a starter checklist per trade (domain/orders/starter-checklists.ts).

import { createHash } from "node:crypto";
import { sealRecord } from "./audit/record.js";
import type { ApiKeyService } from "./auth/api-key-service.js";
import { SANDBOX_ACCOUNT, SANDBOX_KEY_LABEL } from "./auth/sandbox-key.js";
import { canonicalJson } from "./canonical-json.js";
import { type Clock, systemClock } from "./clock.js";
import { STARTER_CHECKLISTS } from "./domain/orders/starter-checklists.js";
import { generateSandboxPool } from "./domain/sandbox-pool.js";
import { TRADE_CODES } from "./domain/trades.js";
import { ApiError } from "./errors.js";
import { createTemplate, templateInput } from "./operations/orders/checklist-templates.js";
import type { Store, WriteTx } from "./storage/store.js";

export interface BootstrapResult {
  seededContractors: number;
  /** The sandbox's starter checklist templates created by this start (0 once it has any). */
  seededChecklists: number;
  /** The sandbox key, only on the start that created the sandbox account. */
  sandboxKey: string | null;
}

/**
 * A sandbox pool seeded before contractors had verification dates would be all unverified, and compliance
 * would keep it from every match: its contractors get the dates the generator gives them today (rows
 * that already have a date are left alone). Cheap once done: one query finds nothing to change.
 */
async function backfillSandboxVerification(store: Store, clock: Clock): Promise<void> {
  const dates = generateSandboxPool(clock()).map((c) => ({
    id: c.id,
    insuranceVerifiedUntil: c.insuranceVerifiedUntil as string,
    licenseVerifiedUntil: c.licenseVerifiedUntil as string,
  }));
  await store.contractors.backfillSandboxVerification(dates, (changed) =>
    sealRecord({
      kind: "pool.seeded",
      at: clock().toISOString(),
      accountId: null,
      livemode: false,
      actor: "system:bootstrap",
      data: { pool: "sandbox", verification_dates_backfilled: changed },
    }),
  );
}

/**
 * A sandbox pool seeded before contractors had working hours is available any time: its contractors get
 * the hours the generator gives them (the anchors keep none; rows with hours are left alone). Cheap once
 * done: one query finds nothing to change.
 */
async function backfillSandboxHours(store: Store, clock: Clock): Promise<void> {
  const hours = generateSandboxPool(clock())
    .filter((c) => c.hours !== "")
    .map((c) => ({ id: c.id, hours: c.hours }));
  await store.contractors.backfillSandboxHours(hours, (changed) =>
    sealRecord({
      kind: "pool.seeded",
      at: clock().toISOString(),
      accountId: null,
      livemode: false,
      actor: "system:bootstrap",
      data: { pool: "sandbox", working_hours_backfilled: changed },
    }),
  );
}

/** Who creates what a first start seeds (the pool, the starter checklists, the sandbox's keys). */
const BOOTSTRAP_ACTOR = "system:bootstrap" as const;

/**
 * The sandbox's starter checklists: one service template per trade in test mode, made by the same code as
 * the dispatch team's (checklist-templates.ts createTemplate), authored by system:bootstrap, and sealed
 * together as a pool.seeded record (its digest of the templates). Only while the sandbox has never had a
 * service template, retired ones included: a restart adds none, and what the dispatch team retired stays
 * retired. Live mode never gets them. One read once done.
 */
async function seedSandboxChecklists(store: Store, clock: Clock): Promise<number> {
  return store.write(async (tx) => {
    const held = await store.checklists.templates(
      { livemode: false, accountId: null, includeRetired: true },
      tx,
    );
    if (held.length > 0) return 0;
    const at = clock().toISOString();
    const owner = { livemode: false, accountId: null, actor: BOOTSTRAP_ACTOR };
    const created = [];
    for (const trade of TRADE_CODES) {
      const input = templateInput.parse({ trade, ...STARTER_CHECKLISTS[trade] });
      const template = await createTemplate(store, tx, owner, input, at);
      // A store without any sandbox template cannot be at the limit: a refusal here is a bug.
      if (template instanceof ApiError) throw new Error(`starter checklist ${trade}: ${template.message}`);
      created.push({ template_id: template.id, trade, name: template.name, items: template.items });
    }
    tx.appendAudit(
      sealRecord({
        kind: "pool.seeded",
        at,
        accountId: null,
        livemode: false,
        actor: BOOTSTRAP_ACTOR,
        data: {
          pool: "sandbox",
          checklist_templates: created.map((t) => t.template_id),
          checklist_templates_sha256: createHash("sha256").update(canonicalJson(created)).digest("hex"),
        },
      }),
    );
    return created.length;
  });
}

export async function bootstrap(
  store: Store,
  keys: ApiKeyService,
  clock: Clock = systemClock,
): Promise<BootstrapResult> {
  await store.migrate();
  let seededContractors = 0;
  if ((await store.contractors.count("sandbox")) === 0) {
    const pool = generateSandboxPool(clock()).map((c) => ({ ...c, externalRef: null }));
    await store.contractors.insert(
      pool,
      sealRecord({
        kind: "pool.seeded",
        at: clock().toISOString(),
        accountId: null,
        livemode: false,
        actor: "system:bootstrap",
        data: {
          pool: "sandbox",
          contractors: pool.length,
          pool_sha256: createHash("sha256").update(canonicalJson(pool)).digest("hex"),
        },
      }),
    );
    seededContractors = pool.length;
  } else {
    await backfillSandboxVerification(store, clock);
    await backfillSandboxHours(store, clock);
  }
  const seededChecklists = await seedSandboxChecklists(store, clock);
  let sandboxKey: string | null = null;
  if (!(await store.keys.findAccountByName(SANDBOX_ACCOUNT))) {
    const issued = await keys.issue({
      accountName: SANDBOX_ACCOUNT,
      mode: "test",
      label: SANDBOX_KEY_LABEL,
      actor: "system:bootstrap",
    });
    sandboxKey = issued.key;
  }
  await seedSandboxSetting(store, clock, {
    kind: "account.invoice_policy_set",
    values: { auto_approve_below_cents: SANDBOX_AUTO_APPROVE_BELOW_CENTS },
    read: (accountId, tx) => store.invoicePolicies.get(accountId, false, tx),
    write: (row, tx) => store.invoicePolicies.set(row, tx),
  });
  await seedSandboxSetting(store, clock, {
    kind: "account.counter_policy_set",
    values: { auto_accept_within_pct: SANDBOX_COUNTER_WITHIN_PCT },
    read: (accountId, tx) => store.counters.policy(accountId, false, tx),
    write: (row, tx) => store.counters.setPolicy(row, tx),
  });
  return { seededContractors, seededChecklists, sandboxKey };
}

/** The sandbox account's counter policy: its simulated contractors' counters within this many percent of
 * the estimate (and under the NTE) are accepted at once; a larger one waits for a person (issue 33). */
export const SANDBOX_COUNTER_WITHIN_PCT = 10;

/** The sandbox account's invoice policy: its simulated contractors' clean invoices below this are approved
 * at once, the flagged and the larger ones wait for a person (issue 33). */
export const SANDBOX_AUTO_APPROVE_BELOW_CENTS = 50_000;

/** One of the sandbox account's settings (test mode), stored by `write` with the seal of its record. */
interface SandboxSetting<V extends object> {
  kind: "account.invoice_policy_set" | "account.counter_policy_set";
  values: V;
  read(accountId: string, tx?: WriteTx): Promise<unknown>;
  write(
    row: V & { account_id: string; livemode: boolean; updated_at: string; updated_by: string; seal: string },
    tx: WriteTx,
  ): Promise<void>;
}

/**
 * Gives the sandbox account a setting (its invoice policy, its counter policy), sealed by system:bootstrap,
 * while it has never had one: on the start that creates it, and once on a store from before the setting.
 * What the account sets later (null included) stays.
 */
async function seedSandboxSetting<V extends object>(
  store: Store,
  clock: Clock,
  setting: SandboxSetting<V>,
): Promise<void> {
  const account = await store.keys.findAccountByName(SANDBOX_ACCOUNT);
  if (!account || (await setting.read(account.id))) return;
  const at = clock().toISOString();
  await store.write(async (tx) => {
    if (await setting.read(account.id, tx)) return;
    const entry = sealRecord({
      kind: setting.kind,
      at,
      accountId: account.id,
      livemode: false,
      actor: BOOTSTRAP_ACTOR,
      data: { ...setting.values, previous: null },
    });
    const row = {
      ...setting.values,
      account_id: account.id,
      livemode: false,
      updated_at: at,
      updated_by: BOOTSTRAP_ACTOR,
      seal: entry.seal,
    };
    await setting.write(row, tx);
    tx.appendAudit(entry);
  });
}

/** The account of the dispatch-team key the first server start prints, so the console's board can be tried. */
const SANDBOX_DISPATCH_ACCOUNT = "sandbox-dispatch";

/**
 * A sandbox (test-mode) dispatch-team key, for the first start of a server (main.ts) to print once beside
 * the sandbox key: it opens the console's board on the sandbox's orders. Test mode only: it never sees or
 * moves a live order. Revoke it with `keys revoke` like any key.
 */
export async function issueSandboxDispatchKey(keys: ApiKeyService): Promise<string> {
  const issued = await keys.issue({
    accountName: SANDBOX_DISPATCH_ACCOUNT,
    mode: "test",
    kind: "dispatcher",
    label: "first-start sandbox dispatch-team key",
    actor: "system:bootstrap",
  });
  return issued.key;
}
