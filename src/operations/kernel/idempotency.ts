// Idempotency for the operations that declare `idempotent: true`, whatever transport calls them: a caller's
// key (REST: the Idempotency-Key header; MCP and A2A: the idempotency_key argument) makes a retry safe.
// The same key and body replay the stored response, another body is refused (422), a retry while the
// first is still running gets 409. The handler stores its response under the key inside its own write
// transaction (`ctx.idempotency.claim`), so one key makes one effect even across processes.

import { createHash } from "node:crypto";
import { z } from "zod";
import { canonicalJson } from "../../canonical-json.js";
import { ApiError } from "../../errors.js";
import type { IdempotencyKeysTable } from "../../storage/schema.js";
import {
  type IdempotencyClaim,
  type OperationContext,
  principalOf,
  type SentIdempotencyKey,
} from "./operation.js";

const IDEMPOTENCY_TTL_MS = 24 * 60 * 60 * 1000;
/** The REST header a key is sent in. */
export const IDEMPOTENCY_KEY_HEADER = "Idempotency-Key";
/** The MCP / A2A argument a key is sent in, beside the operation's own input. */
export const IDEMPOTENCY_KEY_ARGUMENT = "idempotency_key";
/** Set (to "true") on a replayed response: a REST header; the agent transports say it in their metadata. */
export const REPLAYED_HEADER = "Idempotent-Replayed";

const KEY_PATTERN = /^[\x21-\x7e]{1,255}$/;

/** The idempotency_key argument as agents see it in a tool's inputSchema and a skill's description. */
export const idempotencyKeyArgument = z
  .string()
  .regex(KEY_PATTERN)
  .min(1)
  .max(255)
  .describe(
    "Optional retry key, 1-255 visible ASCII characters: the same key with the same arguments returns the first result again (for 24 h) instead of acting twice; with other arguments it is refused (idempotency_key_reused).",
  );

// Keys whose first request is still running in this process, as `account|livemode|key`. Each process has
// its own; across processes the store's claim is the authority.
const inflight = new Set<string>();

function fieldOf(sent: SentIdempotencyKey): string {
  return sent.in === "header" ? IDEMPOTENCY_KEY_HEADER : IDEMPOTENCY_KEY_ARGUMENT;
}

function fingerprint(raw: unknown): string {
  return createHash("sha256").update(canonicalJson(raw)).digest("hex");
}

function replay(
  ctx: OperationContext,
  sent: SentIdempotencyKey,
  record: IdempotencyKeysTable,
  hash: string,
): unknown {
  if (record.request_hash !== hash) {
    const field = fieldOf(sent);
    const other = sent.in === "header" ? "a different request body" : "different arguments";
    throw new ApiError(
      "idempotency_key_reused",
      `This ${field} was used with ${other}; use a new key for a new request.`,
      { errors: [{ field, message: `already used with ${other}` }] },
    );
  }
  ctx.setHeader(REPLAYED_HEADER, "true");
  return JSON.parse(record.response_body);
}

/**
 * Runs an idempotent operation's handler (`run`) under the key its caller sent: checks the key's form
 * (400), refuses a retry while the first is in flight in this process (409), replays a stored response
 * (or 422 for another body), else runs the handler with `ctx.idempotency` to claim the key in its write.
 * `ctx.rawInput` is what the fingerprint covers: the body or the arguments, without the key itself.
 */
export async function runIdempotent(
  ctx: OperationContext,
  sent: SentIdempotencyKey,
  run: (ctx: OperationContext) => Promise<unknown>,
): Promise<unknown> {
  const field = fieldOf(sent);
  if (typeof sent.value !== "string" || !KEY_PATTERN.test(sent.value)) {
    throw new ApiError("invalid_request", `${field} must be 1-255 visible ASCII characters.`, {
      errors: [{ field, message: "must be 1-255 visible ASCII characters" }],
    });
  }
  const key = sent.value;
  const principal = principalOf(ctx);
  const { services } = ctx;
  const hash = fingerprint(ctx.rawInput);
  const scope = `${principal.accountId}|${principal.livemode ? 1 : 0}|${key}`;
  if (inflight.has(scope)) {
    throw new ApiError(
      "idempotency_request_in_progress",
      `A request with this ${field} is still being processed; retry shortly.`,
    );
  }
  // Marked in flight before the first await, so a concurrent retry in this process sees it.
  inflight.add(scope);
  try {
    const existing = await services.store.idempotency.find(
      principal.accountId,
      principal.livemode,
      key,
      services.now().toISOString(),
    );
    if (existing) return replay(ctx, sent, existing, hash);

    // Whether the handler's last claim lost (a batch that failed is retried, claiming again).
    let claimed: boolean | undefined;
    const idempotency: IdempotencyClaim = {
      key,
      async claim(tx, response, orderId = null) {
        const now = services.now();
        claimed = await services.store.idempotency.claim(
          {
            account_id: principal.accountId,
            livemode: principal.livemode ? 1 : 0,
            idem_key: key,
            request_hash: hash,
            response_status: 200,
            response_body: JSON.stringify(response),
            order_id: orderId,
            created_at: now.toISOString(),
            expires_at: new Date(now.getTime() + IDEMPOTENCY_TTL_MS).toISOString(),
          },
          now.toISOString(),
          tx,
        );
        return claimed;
      },
    };
    const result = await run({ ...ctx, idempotency });
    if (claimed === undefined) {
      throw new Error("an idempotent operation answered without claiming its idempotency key");
    }
    if (claimed) return result;
    // Another process stored this key first: its response stands, ours was not written.
    const winner = await services.store.idempotency.find(
      principal.accountId,
      principal.livemode,
      key,
      services.now().toISOString(),
    );
    if (!winner) throw new Error("idempotency record vanished after a conflict");
    return replay(ctx, sent, winner, hash);
  } finally {
    inflight.delete(scope);
  }
}
