// Contractor handles. An account never sees a contractor's id: it sees `contractor_ref`, the handle of
// that contractor for that account, `cref-` + 22 base62 characters of HMAC-SHA256(secret, account id ||
// 0x00 || contractor id): the contract's masked contractor reference, `<prefix>-{id}`. Handles were
// answered as `cref_...` before; the same 22 characters after either separator name the same contractor,
// and every input that may carry a handle back accepts both spellings (CONTRACTOR_REF_PATTERN). The same contractor has the same handle for one account every time, different
// handles for different accounts (two accounts cannot tell that they were sent the same contractor), and
// nobody without the secret can turn a handle back into an id or compute one. The dispatch team sees ids.
//
// The secret is CONTRACTOR_REF_SECRET when set, else derived from the audit signing key, so hosts that
// share the key share the handles. Changing either changes every handle (handles already sealed in audit
// records keep verifying; they no longer match the ones answered).

import { createHmac } from "node:crypto";

/** A handle in either spelling: `cref-` (answered now) or `cref_` (answered before; still accepted). */
export const CONTRACTOR_REF_PATTERN = /^cref[-_][0-9A-Za-z]{22}$/;
const BASE62 = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";
/** Handles computed are kept (a map, emptied when full): a busy order path asks for the same few. */
const CACHE_LIMIT = 50_000;

/** base62 of the first 16 bytes, 22 characters (62^22 > 2^128). */
function base62Of(bytes: Buffer): string {
  let n = BigInt(`0x${bytes.subarray(0, 16).toString("hex")}`);
  let out = "";
  for (let i = 0; i < 22; i++) {
    out = BASE62[Number(n % 62n)] + out;
    n /= 62n;
  }
  return out;
}

export class ContractorRefs {
  /** By account, then contractor: two lookups of strings the caller already holds (their hashes are
   * cached), where one key joining both would be a new string to hash on every call. */
  private readonly cache = new Map<string, Map<string, string>>();
  private cached = 0;

  constructor(private readonly secret: Buffer) {
    if (secret.length < 32) throw new Error("the contractor_ref secret must be at least 32 bytes");
  }

  /** The handle of `contractorId` as account `accountId` sees it. */
  of(accountId: string, contractorId: string): string {
    let forAccount = this.cache.get(accountId);
    const hit = forAccount?.get(contractorId);
    if (hit !== undefined) return hit;
    const ref = `cref-${base62Of(createHmac("sha256", this.secret).update(`${accountId}\u0000${contractorId}`, "utf8").digest())}`;
    if (this.cached >= CACHE_LIMIT) {
      this.cache.clear();
      this.cached = 0;
      forAccount = undefined;
    }
    if (forAccount === undefined) {
      forAccount = new Map();
      this.cache.set(accountId, forAccount);
    }
    forAccount.set(contractorId, ref);
    this.cached++;
    return ref;
  }

  /**
   * The contractor among `ids` whose handle for `accountId` is `ref` (either spelling), or undefined.
   * Computed afresh for each id, not kept: a handle cannot be turned back, so resolving one means
   * computing the account's handle of every contractor it could name (a write's cost, not a match's).
   */
  find(accountId: string, ref: string, ids: Iterable<string>): string | undefined {
    if (!CONTRACTOR_REF_PATTERN.test(ref)) return undefined;
    const wanted = ref.slice(5);
    for (const id of ids) {
      const digest = createHmac("sha256", this.secret).update(`${accountId}\u0000${id}`, "utf8").digest();
      if (base62Of(digest) === wanted) return id;
    }
    return undefined;
  }

  /** The handle maker for one account, or none (records without an account show no handles). */
  forAccount(accountId: string | null): ((contractorId: string) => string) | null {
    return accountId === null ? null : (contractorId) => this.of(accountId, contractorId);
  }
}
