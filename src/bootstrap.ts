// First-start set-up of a store: migrations, the sandbox contractor pool and the sandbox account with one
// test key (returned once, for printing; later starts find the account and return no key). That key is
// also the one agents' keyed tools run under when the server has no MCP_API_KEY: the server finds it again
// on every start by its stored hash (auth/sandbox-key.ts), so it never needs the plaintext it printed once.

import { createHash } from "node:crypto";
import { sealRecord } from "./audit/record.js";
import type { ApiKeyService } from "./auth/api-key-service.js";
import { SANDBOX_ACCOUNT, SANDBOX_KEY_LABEL } from "./auth/sandbox-key.js";
import { canonicalJson } from "./canonical-json.js";
import { type Clock, systemClock } from "./clock.js";
import { generateSandboxPool } from "./domain/sandbox-pool.js";
import type { Store } from "./storage/store.js";

export interface BootstrapResult {
  seededContractors: number;
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
  return { seededContractors, sandboxKey };
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
