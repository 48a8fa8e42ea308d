// Authenticates API keys: shape and checksum first (no lookup for a mistyped key), then the SHA-256 lookup,
// a constant-time comparison and the revocation check. Verified keys are cached briefly.

import { type Actor, sealRecord } from "../audit/record.js";
import { type Clock, systemClock } from "../clock.js";
import { DEFAULT_KEY_ROLE, type KeyRole } from "../domain/key-roles.js";
import { ApiError } from "../errors.js";
import { newId } from "../ids.js";
import type { ApiKeysTable, KeyKind } from "../storage/schema.js";
import type { Store } from "../storage/store.js";
import { generateApiKey, hashApiKey, type KeyMode, keyHint, parseApiKey, sameHash } from "./api-key.js";

export interface Principal {
  accountId: string;
  keyId: string;
  livemode: boolean;
  /** account: a caller; contractor: a contractor acting on its offers and jobs; dispatcher: the dispatch team. */
  kind: KeyKind;
  /** The contractor behind a contractor key. */
  contractorId: string | null;
  /** An account key's role (domain/key-roles.ts); admin for the other kinds, which roles do not concern. */
  role: KeyRole;
  /** An approver's approval limit in cents; null: no limit. */
  approvalLimitCents: number | null;
  /** Per-key overrides of the default rate policy, when set at creation. */
  ratePerMinute: number | null;
  burst: number | null;
}

interface CacheEntry {
  principal: Principal;
  hash: string;
  expires: number;
}

export class ApiKeyService {
  private readonly cache = new Map<string, CacheEntry>();

  constructor(
    private readonly store: Store,
    private readonly cacheTtlMs: number,
    /** The time keys are issued and revoked at. */
    private readonly clock: Clock = systemClock,
  ) {}

  /** Resolves the key's principal; answers synchronously for a cached key or a malformed one (throws). */
  authenticate(rawKey: string | undefined): Principal | Promise<Principal> {
    if (rawKey === undefined || rawKey === "") {
      throw new ApiError("missing_api_key", "Send your API key in the x-api-key header.");
    }
    const parsed = parseApiKey(rawKey);
    if (!parsed.ok) {
      throw new ApiError(
        "invalid_api_key",
        parsed.reason === "checksum"
          ? "The API key's checksum does not match: check it was copied completely."
          : "The API key must be the whole key the service issued: fsd_live_ or fsd_test_ and 36 letters or digits.",
      );
    }
    return this.authenticateHash(hashApiKey(rawKey));
  }

  /**
   * Resolves a key the server holds only by its stored hash (the first-start sandbox key agents run under
   * when no MCP_API_KEY is set): the same lookup, revocation check and cache as a key sent by a caller.
   */
  authenticateHash(hash: string): Principal | Promise<Principal> {
    // The cache ages on the monotonic clock: it measures elapsed time, not the service's time.
    const now = performance.now();
    const cached = this.cache.get(hash);
    if (cached && cached.expires > now && sameHash(cached.hash, hash)) return cached.principal;
    return this.lookup(hash, now);
  }

  private async lookup(hash: string, now: number): Promise<Principal> {
    const row = await this.store.keys.findByHash(hash);
    if (!row || !sameHash(row.key_hash, hash)) {
      throw new ApiError("invalid_api_key", "The API key is not recognised.");
    }
    if (row.revoked_at !== null) {
      this.cache.delete(hash);
      throw new ApiError("api_key_revoked", "The API key has been revoked.");
    }
    const principal: Principal = {
      accountId: row.account_id,
      keyId: row.id,
      livemode: row.mode === "live",
      kind: row.kind ?? "account",
      contractorId: row.contractor_id ?? null,
      role: row.role ?? DEFAULT_KEY_ROLE,
      approvalLimitCents: row.approval_limit_cents === null ? null : Number(row.approval_limit_cents),
      ratePerMinute: row.rate_limit_per_minute,
      burst: row.rate_limit_burst,
    };
    if (this.cacheTtlMs > 0) {
      if (this.cache.size > 10_000) this.cache.clear();
      this.cache.set(hash, { principal, hash, expires: now + this.cacheTtlMs });
    }
    return principal;
  }

  /** Drops every cached key (after a revocation in this process). */
  forget(): void {
    this.cache.clear();
  }

  async issue(options: {
    accountName: string;
    mode: KeyMode;
    label?: string | null;
    ratePerMinute?: number | null;
    burst?: number | null;
    /** Who issues it, for the audit log. */
    actor: Actor;
    /** A caller's key (the default), a contractor's (with contractorId) or the dispatch team's. */
    kind?: KeyKind;
    contractorId?: string | null;
    /** An account key's role (none: admin) and, for an approver, its approval limit in cents. */
    role?: KeyRole | null;
    approvalLimitCents?: number | null;
  }): Promise<{ id: string; key: string; accountId: string }> {
    const kind = options.kind ?? "account";
    roleOptionsFault(kind, options.role ?? null, options.approvalLimitCents ?? null);
    if ((kind === "contractor") !== Boolean(options.contractorId)) {
      throw new Error("a contractor key names its contractor, and only a contractor key does");
    }
    if (kind === "contractor") {
      const standing = await this.store.contractors.standing(options.contractorId as string);
      if (!standing) throw new Error(`no contractor ${options.contractorId} in the pool`);
      // A test key works on the sandbox and a live key on live data: a contractor's key takes its pool's mode.
      const pool = options.mode === "live" ? "live" : "sandbox";
      if (standing.pool !== pool) {
        throw new Error(
          `contractor ${options.contractorId} is in the ${standing.pool} pool: its key must be ${standing.pool === "live" ? "--mode live" : "--mode test"}`,
        );
      }
    }
    const account = await this.store.keys.ensureAccount(options.accountName);
    const key = generateApiKey(options.mode);
    const row: ApiKeysTable = {
      id: newId("key"),
      account_id: account.id,
      mode: options.mode,
      key_hash: hashApiKey(key),
      key_hint: keyHint(key),
      label: options.label ?? null,
      rate_limit_per_minute: options.ratePerMinute ?? null,
      rate_limit_burst: options.burst ?? null,
      created_at: this.clock().toISOString(),
      revoked_at: null,
      kind,
      contractor_id: options.contractorId ?? null,
      role: kind === "account" ? (options.role ?? null) : null,
      approval_limit_cents: kind === "account" ? (options.approvalLimitCents ?? null) : null,
    };
    await this.store.keys.insert(row, keyRecord("key.issued", row, options.actor, row.created_at));
    return { id: row.id, key, accountId: account.id };
  }

  /**
   * Sets an account key's role and approval limit (an approver's; none for the others), sealed as
   * key.role_set. `accountId`: the account the key must belong to (an admin key's own; null from the
   * CLI). Other processes learn it when their cached key expires (API_KEY_CACHE_TTL_MS).
   */
  async setRole(
    id: string,
    accountId: string | null,
    role: KeyRole,
    approvalLimitCents: number | null,
    actor: Actor,
  ): Promise<ApiKeysTable | "not_found"> {
    roleOptionsFault("account", role, approvalLimitCents);
    const at = this.clock().toISOString();
    const result = await this.store.keys.setRole(
      id,
      accountId,
      { role, approval_limit_cents: approvalLimitCents },
      (before) =>
        sealRecord({
          kind: "key.role_set",
          at,
          accountId: before.account_id,
          livemode: before.mode === "live",
          actor,
          data: {
            key_id: before.id,
            key_hint: before.key_hint,
            role,
            approval_limit_cents: approvalLimitCents,
            previous: {
              role: before.role ?? DEFAULT_KEY_ROLE,
              approval_limit_cents: before.approval_limit_cents ?? null,
            },
          },
        }),
    );
    this.forget();
    return result;
  }

  async revoke(id: string, actor: Actor): Promise<"revoked" | "already_revoked" | "not_found"> {
    const at = this.clock().toISOString();
    const result = await this.store.keys.revoke(id, at, (row) => keyRecord("key.revoked", row, actor, at));
    this.forget();
    return result;
  }
}

/** Throws when a role does not fit the key: roles are an account key's; a limit is an approver's. */
function roleOptionsFault(kind: KeyKind, role: KeyRole | null, limit: number | null): void {
  if (role !== null && kind !== "account") throw new RoleError("only an account's key has a role");
  if (limit !== null && role !== "approver") {
    throw new RoleError(
      "an approval limit is an approver's (an admin has none, a requester approves nothing)",
    );
  }
  if (limit !== null && (!Number.isSafeInteger(limit) || limit < 0)) {
    throw new RoleError("an approval limit is a whole number of cents, 0 or more");
  }
}

/** A role that does not fit its key (the CLI prints it; the API validates before). */
class RoleError extends Error {
  override name = "RoleError";
}

/** The audit record of a key's issue or revocation: its metadata, never the key or its hash. */
function keyRecord(kind: "key.issued" | "key.revoked", row: ApiKeysTable, actor: Actor, at: string) {
  return sealRecord({
    kind,
    at,
    accountId: row.account_id,
    livemode: row.mode === "live",
    actor,
    data: {
      contractor_id: row.contractor_id ?? null,
      key_id: row.id,
      kind: row.kind ?? "account",
      ...(row.kind === "account" || row.kind === undefined
        ? { role: row.role ?? DEFAULT_KEY_ROLE, approval_limit_cents: row.approval_limit_cents ?? null }
        : {}),
      mode: row.mode,
      key_hint: row.key_hint,
      label: row.label,
      rate_limit_per_minute: row.rate_limit_per_minute,
      rate_limit_burst: row.rate_limit_burst,
    },
  });
}
