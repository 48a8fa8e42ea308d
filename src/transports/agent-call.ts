// What the agent transports (MCP tools, A2A skills) share: an operation run through the same gate and
// validation as REST, its failure rendered as the same problem document, and the operations' schemas as
// JSON Schema. An idempotent operation takes an idempotency_key argument beside its input: taken out here
// before validation, honoured by the gate as REST's Idempotency-Key header. No business logic here: the
// registry's handlers do the work.

import { z } from "zod";
import type { RateDecision } from "../auth/rate-limiter.js";
import type { StoredSandboxKey } from "../auth/sandbox-key.js";
import type { Config } from "../config.js";
import { ApiError, type Problem, toProblem } from "../errors.js";
import { asApiError } from "../operations/kernel/failures.js";
import { type Admission, admit, execute } from "../operations/kernel/gate.js";
import {
  IDEMPOTENCY_KEY_ARGUMENT,
  idempotencyKeyArgument,
  REPLAYED_HEADER,
} from "../operations/kernel/idempotency.js";
import type {
  Access,
  AnyOperation,
  OperationContext,
  SentIdempotencyKey,
  Services,
} from "../operations/kernel/operation.js";
import { AGENT_OPERATIONS } from "../operations/registry.js";
import type { BlobDescriptor } from "../storage/blobs/blob-store.js";

/**
 * The key an agent's call runs under, and where it comes from: the caller's own x-api-key, else the
 * server's MCP_API_KEY, else the first-start sandbox key (held by its stored hash, never a live key),
 * else none. The server's keys stand in only for the operations declared `onServerKey`.
 */
export type AgentKey =
  | { source: "caller"; apiKey: string }
  | { source: "server"; apiKey: string }
  | { source: "sandbox"; key: StoredSandboxKey }
  | { source: "none" };

/** The agent transports' key policy, in one place (see AgentKey). */
export function agentKeyFor(
  sent: string | undefined,
  config: Pick<Config, "MCP_API_KEY" | "MCP_USE_SANDBOX_KEY">,
  sandboxKey: StoredSandboxKey | null,
): AgentKey {
  if (sent !== undefined) return { source: "caller", apiKey: sent };
  if (config.MCP_API_KEY !== undefined) return { source: "server", apiKey: config.MCP_API_KEY };
  if (config.MCP_USE_SANDBOX_KEY && sandboxKey) return { source: "sandbox", key: sandboxKey };
  return { source: "none" };
}

export interface AgentCaller {
  key: AgentKey;
  clientIp: string;
  baseUrl: string;
  requestId: string;
  /** When the HTTP request carrying the call arrived (its onRequest, before any key or limit check): the
   * start of every latency the operation measures, as for REST. */
  receivedAt: Date;
  receivedHr: bigint;
}

/**
 * The most bytes a download's answer carries itself (a tool's embedded resource, a skill's raw file part);
 * a larger file is answered with its URL only, which the caller fetches with its key (REST serves ranges).
 */
export const AGENT_INLINE_MAX_BYTES = 8 * 1024 * 1024;

/** What a download operation answers an agent: the descriptor REST serves the bytes of, where REST serves
 * them, and whether the bytes are in the answer (agentFile). */
const agentDownloadSchema = z.object({
  sha256: z
    .string()
    .describe("The file's SHA-256 (hex): REST's ETag, and the digest sealed in the audit log."),
  media_type: z.string(),
  size: z.number().int().nonnegative().describe("The file's size in bytes."),
  filename: z.string(),
  url: z
    .string()
    .describe("Where REST serves the bytes (GET with the same x-api-key; Range and If-None-Match honoured)."),
  inline: z
    .boolean()
    .describe(
      `Whether the bytes are in this answer (an MCP embedded resource, an A2A file part): files up to ${AGENT_INLINE_MAX_BYTES / 1024 / 1024} MiB; a larger one only by its url.`,
    ),
});
type AgentDownload = z.output<typeof agentDownloadSchema>;

/** A download's file as an agent receives it: the answer's JSON, and the bytes when they are inline. */
export interface AgentFile {
  download: AgentDownload;
  bytes: Buffer | null;
}

/**
 * `replayed`: the result is the stored answer to an earlier call with the same idempotency_key. `file`: a
 * download operation's file (the result is then its AgentDownload).
 */
export type Invocation =
  | { ok: true; result: unknown; replayed: boolean; file?: AgentFile }
  | { ok: false; problem: Problem };

/** An operation's output schema as agents receive it (a download's: agentDownloadSchema). */
export function agentOutputSchema(op: AnyOperation): z.ZodType {
  return op.download ? agentDownloadSchema : op.output;
}

/** The operation an agent names, by its dotted name or the underscore alias some clients need. */
export function operationByName(name: string): AnyOperation | undefined {
  return AGENT_OPERATIONS.find((op) => op.name === name || underscoreName(op.name) === name);
}

/** `dispatch.quote` -> `dispatch_quote`: for MCP clients that refuse dots in tool names. */
export function underscoreName(name: string): string {
  return name.replaceAll(".", "_");
}

/**
 * An idempotent operation's arguments split into its input and the idempotency_key beside it; any other
 * operation's arguments are its input as they are (an idempotency_key there is an unknown field, 422).
 */
function splitArguments(
  op: AnyOperation,
  args: unknown,
): { input: unknown; idempotencyKey: SentIdempotencyKey | undefined } {
  if (
    !op.idempotent ||
    typeof args !== "object" ||
    args === null ||
    Array.isArray(args) ||
    !Object.hasOwn(args, IDEMPOTENCY_KEY_ARGUMENT)
  ) {
    return { input: args, idempotencyKey: undefined };
  }
  const { [IDEMPOTENCY_KEY_ARGUMENT]: value, ...input } = args as Record<string, unknown>;
  return { input, idempotencyKey: { value, in: "argument" } };
}

/**
 * Runs an operation for an agent: the agent transports' own per-IP limit first (on top of the key's),
 * then the operation's gate (503, 401, 429), validation (422) and idempotency key, as REST does.
 */
export async function invokeOperation(
  op: AnyOperation,
  services: Services,
  caller: AgentCaller,
  args: unknown,
): Promise<Invocation> {
  try {
    await agentLimit(services, caller.clientIp);
    const admission = await admitAgent(op, services, caller);
    const { input, idempotencyKey } = splitArguments(op, args);
    let replayed = false;
    const ctx: OperationContext = {
      services,
      requestId: caller.requestId,
      principal: admission.principal,
      baseUrl: caller.baseUrl,
      receivedAt: caller.receivedAt,
      receivedHr: caller.receivedHr,
      idempotencyKey,
      rawInput: input,
      // No headers here; the one that matters to an agent is reported in the transport's own metadata.
      setHeader: (name, value) => {
        if (name === REPLAYED_HEADER) replayed = value === "true";
      },
    };
    const result = await execute(op, ctx, input);
    if (op.download) {
      const file = await agentFile(op, services, caller, input, result as BlobDescriptor);
      return { ok: true, result: file.download, replayed, file };
    }
    return { ok: true, result, replayed };
  } catch (error) {
    const expected = asApiError(error);
    if (expected) return { ok: false, problem: toProblem(expected, caller.requestId) };
    throw error; // a bug: the transport logs it and answers an internal error
  }
}

/**
 * A download's file for an agent: the REST URL of the bytes (the operation's path with the validated
 * input's parameters), and the bytes read from the blob store when they fit an answer. A blob the
 * descriptor names and the store lacks is a bug, as it would be for REST.
 */
async function agentFile(
  op: AnyOperation,
  services: Services,
  caller: AgentCaller,
  input: unknown,
  blob: BlobDescriptor,
): Promise<AgentFile> {
  const params = (input ?? {}) as Record<string, unknown>;
  const path = op.http.path.replace(/:([a-z_]+)/g, (_, name: string) =>
    encodeURIComponent(String(params[name])),
  );
  const inline = blob.size <= AGENT_INLINE_MAX_BYTES;
  const bytes = inline ? await services.blobs.get(blob.sha256) : null;
  if (inline && bytes === undefined) throw new Error(`blob ${blob.sha256} named by ${op.name} is missing`);
  return {
    download: { ...blob, url: `${caller.baseUrl}${path}`, inline },
    bytes: bytes ?? null,
  };
}

/** Whether the server's key may stand in for an agent that sends none (Operation.onServerKey). */
export function runsOnServerKey(op: AnyOperation): boolean {
  return op.access === "key" && op.onServerKey === true;
}

/** The names of the operations the server's key stands in for, in words. */
const SERVER_KEY_NAMES = AGENT_OPERATIONS.filter(runsOnServerKey)
  .map((op) => op.name)
  .join(", ");

/** The gate, under the caller's agent key (AgentKey). */
async function admitAgent(op: AnyOperation, services: Services, caller: AgentCaller): Promise<Admission> {
  const { key } = caller;
  if (op.access === "public") return admit(op, services, { apiKey: undefined, clientIp: caller.clientIp });
  if (key.source === "caller") return admit(op, services, { apiKey: key.apiKey, clientIp: caller.clientIp });
  if (!runsOnServerKey(op)) return ownKeyNeeded(op, services, caller);
  if (key.source === "none") {
    throw new ApiError(
      "dispatch_not_configured",
      `${op.name} needs an API key: this server has no MCP_API_KEY configured to act for its agents (nor a sandbox key it may use), and the call carried no x-api-key of its own.`,
    );
  }
  if (key.source === "server") return admit(op, services, { apiKey: key.apiKey, clientIp: caller.clientIp });
  let admission: Admission;
  try {
    admission = await admit(op, services, {
      apiKey: undefined,
      storedKeyHash: key.key.hash,
      clientIp: caller.clientIp,
    });
  } catch (error) {
    // The caller sent no key: a revoked sandbox key is the server's set-up, not the caller's mistake.
    if (error instanceof ApiError && (error.code === "api_key_revoked" || error.code === "invalid_api_key")) {
      throw new ApiError(
        "dispatch_not_configured",
        `${op.name} needs an API key: the sandbox key this server used for its agents has been revoked and no MCP_API_KEY is configured; send your own x-api-key.`,
      );
    }
    throw error;
  }
  // Never reached (sandboxKeyOf only returns test keys, and a key's mode never changes); kept so that no
  // change elsewhere can make an agent without a key act live.
  if (admission.principal?.livemode) throw new Error("the implicit agent key is a live key");
  return admission;
}

/**
 * The gate's answer to a call that brought no key to an operation the server's key does not stand in for:
 * 503 when dispatch is disabled, else 401 missing_api_key, saying which operations need no key of its own.
 */
async function ownKeyNeeded(op: AnyOperation, services: Services, caller: AgentCaller): Promise<never> {
  try {
    await admit(op, services, { apiKey: undefined, clientIp: caller.clientIp });
  } catch (error) {
    if (!(error instanceof ApiError) || error.code !== "missing_api_key") throw error;
  }
  throw new ApiError(
    "missing_api_key",
    `${op.name} needs your own API key: send it in the x-api-key header. The server applies its own key on a caller's behalf only to ${SERVER_KEY_NAMES}.`,
  );
}

/**
 * The kind of key operations the caller's agent key opens besides the public ones ("key", "contractor" or
 * "dispatcher"), or null when it opens none (no key, a key that does not authenticate, dispatch disabled).
 */
async function keyedAccessOf(services: Services, caller: AgentCaller): Promise<Access | null> {
  const { key } = caller;
  if (key.source === "none" || !services.config.DISPATCH_ENABLED) return null;
  try {
    const principal = await (key.source === "sandbox"
      ? services.keys.authenticateHash(key.key.hash)
      : services.keys.authenticate(key.apiKey));
    if (key.source === "sandbox" && principal.livemode) return null;
    return principal.kind === "account" ? "key" : principal.kind;
  } catch (error) {
    if (asApiError(error)) return null;
    throw error;
  }
}

/**
 * The operations a caller may use: the public ones, those its key's kind opens and those any key opens
 * (order.attachments, order.report, ...); under the server's key
 * (the caller sent none), only those the server's key stands in for.
 */
export async function operationsFor(services: Services, caller: AgentCaller): Promise<AnyOperation[]> {
  const access = await keyedAccessOf(services, caller);
  const own = caller.key.source === "caller";
  return AGENT_OPERATIONS.filter(
    (op) =>
      op.access === "public" ||
      ((op.access === access || (op.access === "any_key" && access !== null)) &&
        (own || runsOnServerKey(op))),
  );
}

async function agentLimit(services: Services, clientIp: string): Promise<void> {
  const policy = {
    name: "agent-per-ip",
    ratePerMinute: services.config.AGENT_RATE_LIMIT_PER_MINUTE,
    burst: services.config.AGENT_RATE_LIMIT_BURST,
  };
  const decision: RateDecision = await services.limiter.consume(`agent:${clientIp}`, policy);
  if (!decision.allowed) {
    throw new ApiError(
      "rate_limited",
      `Agent rate limit for this client exceeded; retry in ${decision.retryAfterSeconds} s.`,
      { extra: { retry_after_seconds: decision.retryAfterSeconds } },
    );
  }
}

/**
 * An operation's schema as a JSON Schema object with its root inlined (MCP wants `type: "object"` at the
 * top; zod puts a schema with an id behind a $ref). Descriptions come from the zod schemas.
 */
export function objectJsonSchema(schema: z.ZodType, io: "input" | "output"): Record<string, unknown> {
  const generated = z.toJSONSchema(schema, { io, unrepresentable: "any" }) as Record<string, unknown>;
  const {
    $schema: _dialect,
    $ref,
    $defs,
    ...rest
  } = generated as {
    $schema?: string;
    $ref?: string;
    $defs?: Record<string, Record<string, unknown>>;
  } & Record<string, unknown>;
  const defs = $defs ?? {};
  const root = typeof $ref === "string" && $ref.startsWith("#/$defs/") ? defs[$ref.slice(8)] : rest;
  const body = root ?? rest;
  // A union of objects (oneOf/anyOf) has no type of its own; MCP wants one at the top.
  return { type: "object", ...body, ...(Object.keys(defs).length > 0 ? { $defs: defs } : {}) };
}

/** An operation's input as agents send it: its own schema, plus idempotency_key when it is idempotent. */
export function agentInputSchema(op: AnyOperation): Record<string, unknown> {
  const schema = objectJsonSchema(op.input, "input");
  if (!op.idempotent) return schema;
  const { $schema: _dialect, ...key } = z.toJSONSchema(idempotencyKeyArgument) as Record<string, unknown>;
  const properties = (schema.properties ?? {}) as Record<string, unknown>;
  return { ...schema, properties: { ...properties, [IDEMPOTENCY_KEY_ARGUMENT]: key } };
}

/** Whether the operation needs a key, in words an agent can act on. */
export function accessText(op: AnyOperation): string {
  if (op.access === "contractor") {
    return "Needs an API key: a contractor's own key (x-api-key), issued by the operator.";
  }
  if (op.access === "dispatcher") {
    return "Needs an API key: the dispatch team's key (x-api-key), issued by the operator.";
  }
  if (op.access === "any_key") {
    return "Needs an API key of any kind (x-api-key): the account's, a contractor's or the dispatch team's; each is answered within its own scope.";
  }
  if (runsOnServerKey(op)) {
    return "Needs an API key: the server applies its own on the caller's behalf (MCP_API_KEY, else its sandbox key, test mode only), or the caller sends x-api-key.";
  }
  return op.access === "key"
    ? "Needs an API key: the caller's own account key (x-api-key), issued by the operator; the server never applies its own key here."
    : "Public: no key needed.";
}
