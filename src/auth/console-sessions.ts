// The web console's sessions: an API key is exchanged once for an opaque session id (the cookie's value),
// stored only as its SHA-256 with the key's id, a CSRF token and an idle expiry. A session is as good as
// its key and no better: every use resolves to the key's stored hash, which the caller authenticates the
// way it does any key (ApiKeyService.authenticateHash: the same revocation check and cache), so revoking
// the key ends its sessions as fast as it ends its API calls.

import { createHash, randomBytes, timingSafeEqual } from "node:crypto";
import { type Clock, systemClock } from "../clock.js";
import { ApiError } from "../errors.js";
import type { Store } from "../storage/store.js";
import type { ApiKeyService, Principal } from "./api-key-service.js";

/** 32 random bytes, base64url: the session id and the CSRF token. */
const TOKEN_PATTERN = /^[A-Za-z0-9_-]{43}$/;
/** A session is written back (its expiry moved on) at most this often, not on every request. */
const EXTEND_EVERY_MS = 60_000;

export interface OpenedSession {
  /** The cookie's value; never stored. */
  id: string;
  principal: Principal;
  csrfToken: string;
  expiresAt: string;
}

export interface ResolvedSession {
  /** The stored hash of the session's API key, to authenticate as the key. */
  keyHash: string;
  csrfToken: string;
  expiresAt: string;
}

const hashOf = (id: string) => createHash("sha256").update(id).digest("hex");
const token = () => randomBytes(32).toString("base64url");

export class ConsoleSessions {
  constructor(
    private readonly store: Store,
    private readonly keys: ApiKeyService,
    private readonly idleMs: number,
    private readonly clock: Clock = systemClock,
  ) {}

  /** Exchanges an API key for a new session; throws the key's 401 when it is not valid. */
  async open(rawKey: string): Promise<OpenedSession> {
    const principal = await this.keys.authenticate(rawKey);
    const now = this.clock();
    // Sessions left to expire are removed as new ones open: the table holds live sessions only.
    await this.store.consoleSessions.purgeExpired(now.toISOString());
    const id = token();
    const csrfToken = token();
    const expiresAt = new Date(now.getTime() + this.idleMs).toISOString();
    await this.store.consoleSessions.insert({
      id_hash: hashOf(id),
      key_id: principal.keyId,
      csrf_token: csrfToken,
      created_at: now.toISOString(),
      expires_at: expiresAt,
    });
    return { id, principal, csrfToken, expiresAt };
  }

  /** The live session of a cookie's value, its idle expiry moved on; throws invalid_session otherwise. */
  resolve(id: string): Promise<ResolvedSession> {
    return this.find(id, true);
  }

  /**
   * The live session of a cookie's value, its expiry left as it is: what an open event stream checks again
   * (a stream held open is not the user's activity); throws invalid_session otherwise.
   */
  check(id: string): Promise<ResolvedSession> {
    return this.find(id, false);
  }

  private async find(id: string, extend: boolean): Promise<ResolvedSession> {
    if (!TOKEN_PATTERN.test(id)) throw invalidSession("The console session cookie is malformed.");
    const idHash = hashOf(id);
    const row = await this.store.consoleSessions.find(idHash);
    if (!row) throw invalidSession("The console session is not known (signed out, or never issued).");
    const now = this.clock().getTime();
    const expires = Date.parse(row.expires_at);
    if (expires <= now) {
      await this.store.consoleSessions.delete(idHash);
      throw invalidSession("The console session has expired; sign in again.");
    }
    let expiresAt = row.expires_at;
    if (extend && now + this.idleMs - expires >= EXTEND_EVERY_MS) {
      expiresAt = new Date(now + this.idleMs).toISOString();
      await this.store.consoleSessions.extend(idHash, expiresAt);
    }
    return { keyHash: row.key_hash, csrfToken: row.csrf_token, expiresAt };
  }

  /** Ends a session (sign out); a cookie of no session ends nothing. */
  async close(id: string): Promise<void> {
    if (TOKEN_PATTERN.test(id)) await this.store.consoleSessions.delete(hashOf(id));
  }
}

/** Whether `sent` is the session's CSRF token, compared in constant time. */
export function csrfMatches(session: ResolvedSession, sent: string | undefined): boolean {
  if (sent === undefined) return false;
  const a = Buffer.from(sent);
  const b = Buffer.from(session.csrfToken);
  return a.length === b.length && timingSafeEqual(a, b);
}

function invalidSession(detail: string): ApiError {
  return new ApiError("invalid_session", detail);
}
