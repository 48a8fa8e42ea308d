// The sandbox account's first-start key as the server itself may use it: agents' keyed tools run under it
// when no MCP_API_KEY is set. Bootstrap prints the key once and stores only its hash; the server finds it
// again on every start, in every process, by its label and authenticates with the stored hash, so the
// plaintext is never kept anywhere, and revoking the key ends its use by agents too.

import type { Store } from "../storage/store.js";

export const SANDBOX_ACCOUNT = "sandbox";
/** The label of the key bootstrap issues, which is how later starts find it among the account's keys. */
export const SANDBOX_KEY_LABEL = "first-start sandbox key";

/** The first-start sandbox key as the server holds it: its id, stored hash and hint, never its value. */
export interface StoredSandboxKey {
  id: string;
  hash: string;
  hint: string;
}

/**
 * The key bootstrap issued to the sandbox account, if it is still there, unrevoked, a caller's key and a
 * test key; else null. Only ever a test key: a live key is never used on anyone's behalf implicitly.
 */
export async function sandboxKeyOf(store: Store): Promise<StoredSandboxKey | null> {
  const keys = await store.keys.list(SANDBOX_ACCOUNT);
  // Oldest first: the one bootstrap issued, should a key issued by hand carry the same label.
  const key = keys.find((k) => k.label === SANDBOX_KEY_LABEL && k.kind === "account" && k.mode === "test");
  if (!key || key.revoked_at !== null) return null;
  return { id: key.id, hash: key.key_hash, hint: key.key_hint };
}
