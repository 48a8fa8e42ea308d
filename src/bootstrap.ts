// First-start set-up of a store: migrations, the sandbox contractor pool and the sandbox account with one
// test key (returned once, for printing; later starts find the account and return no key).

import { createHash } from "node:crypto";
import { sealRecord } from "./audit/record.js";
import type { ApiKeyService } from "./auth/api-key-service.js";
import { canonicalJson } from "./canonical-json.js";
import { type Clock, systemClock } from "./clock.js";
import { generateSandboxPool } from "./domain/sandbox-pool.js";
import type { Store } from "./storage/store.js";

export const SANDBOX_ACCOUNT = "sandbox";

export interface BootstrapResult {
  seededContractors: number;
  /** The sandbox key, only on the start that created the sandbox account. */
  sandboxKey: string | null;
}

export async function bootstrap(
  store: Store,
  keys: ApiKeyService,
  clock: Clock = systemClock,
): Promise<BootstrapResult> {
  await store.migrate();
  let seededContractors = 0;
  if ((await store.contractors.count("sandbox")) === 0) {
    const pool = generateSandboxPool().map((c) => ({ ...c, externalRef: null }));
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
  }
  let sandboxKey: string | null = null;
  if (!(await store.keys.findAccountByName(SANDBOX_ACCOUNT))) {
    const issued = await keys.issue({
      accountName: SANDBOX_ACCOUNT,
      mode: "test",
      label: "first-start sandbox key",
      actor: "system:bootstrap",
    });
    sandboxKey = issued.key;
  }
  return { seededContractors, sandboxKey };
}
