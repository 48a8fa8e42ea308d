// The checks every transport runs before an operation, in the contract's order: 503 when dispatch is
// disabled, 401 for the key, 429 for the limit. Input validation (422: the operation's schema, and the
// text every input refuses, input-text.ts) follows in `execute`, then an idempotent operation's key.

import type { z } from "zod";
import type { Principal } from "../../auth/api-key-service.js";
import { rateLimitHeaders } from "../../auth/rate-limit-headers.js";
import type { RateDecision, RatePolicy } from "../../auth/rate-limiter.js";
import { hasRole } from "../../domain/key-roles.js";
import { ApiError, type FieldError, validationError } from "../../errors.js";
import { fieldMessage } from "./field-messages.js";
import { runIdempotent } from "./idempotency.js";
import { textErrors } from "./input-text.js";
import { resultValue } from "./json-result.js";
import type { AnyOperation, OperationContext, Services } from "./operation.js";
import { TextStream } from "./text-stream.js";

export interface Admission {
  principal: Principal | null;
  /** Rate-limit fields to put on the response, when the operation is limited. */
  headers: Record<string, string>;
}

function keyPolicy(services: Services, principal: Principal): RatePolicy {
  return {
    name: "per-key",
    ratePerMinute: principal.ratePerMinute ?? services.config.KEY_RATE_LIMIT_PER_MINUTE,
    burst: principal.burst ?? services.config.KEY_RATE_LIMIT_BURST,
  };
}

export function clientIpPolicy(services: Services): RatePolicy {
  return {
    name: "per-ip",
    ratePerMinute: services.config.PUBLIC_RATE_LIMIT_PER_MINUTE,
    burst: services.config.PUBLIC_RATE_LIMIT_BURST,
  };
}

function probePolicy(services: Services): RatePolicy {
  return {
    name: "probe-per-ip",
    ratePerMinute: services.config.PROBE_RATE_LIMIT_PER_MINUTE,
    burst: services.config.PROBE_RATE_LIMIT_BURST,
  };
}

/**
 * Runs the gate. Synchronous when nothing needs I/O (public operations, a cached key, an in-process
 * limiter), so the common path costs no promise; throws ApiError for 503, 401 and 429.
 */
export function admit(
  op: AnyOperation,
  services: Services,
  caller: {
    apiKey: string | undefined;
    /** Instead of apiKey: a key the server holds by its stored hash (the sandbox key agents run under). */
    storedKeyHash?: string;
    clientIp: string;
  },
): Admission | Promise<Admission> {
  if (op.access === "public") return limit(op, services, caller.clientIp, null);
  if (!services.config.DISPATCH_ENABLED) {
    throw new ApiError("dispatch_not_configured", "The dispatch API is not enabled on this server.");
  }
  const principal =
    caller.storedKeyHash !== undefined
      ? services.keys.authenticateHash(caller.storedKeyHash)
      : services.keys.authenticate(caller.apiKey);
  return principal instanceof Promise
    ? principal.then((p) => limit(op, services, caller.clientIp, callerKey(op, p)))
    : limit(op, services, caller.clientIp, callerKey(op, principal));
}

/** Callers' operations take callers' keys, contractors' operations contractors' keys (else 403). */
function callerKey(op: AnyOperation, principal: Principal): Principal {
  if (op.access === "any_key") return principal;
  const wanted = op.access === "contractor" || op.access === "dispatcher" ? op.access : "account";
  if (principal.kind !== wanted) {
    throw new ApiError(
      "key_kind_not_allowed",
      `${op.name} takes ${wanted === "account" ? "a caller's" : wanted === "contractor" ? "a contractor's" : "the dispatch team's"} API key; this is a${principal.kind === "account" ? "n" : ""} ${principal.kind} key.`,
    );
  }
  if (op.role && !hasRole(principal.role, op.role)) {
    throw new ApiError(
      "key_role_not_allowed",
      `${op.name} takes an account key with the ${op.role} role${op.role === "approver" ? " (or admin)" : ""}; this key is a ${principal.role}: an admin key sets roles (dispatch.key_role_set).`,
      { extra: { role: principal.role, required_role: op.role } },
    );
  }
  return principal;
}

function limit(
  op: AnyOperation,
  services: Services,
  clientIp: string,
  principal: Principal | null,
): Admission | Promise<Admission> {
  if (op.limit === "none") return { principal, headers: {} };
  let bucket: string;
  let policy: RatePolicy;
  if (op.limit === "key" && principal) {
    bucket = `key:${principal.keyId}`;
    policy = keyPolicy(services, principal);
  } else if (op.limit === "probe_ip") {
    bucket = `probe:${clientIp}`;
    policy = probePolicy(services);
  } else {
    bucket = `ip:${clientIp}`;
    policy = clientIpPolicy(services);
  }
  const decision = services.limiter.consume(bucket, policy);
  return decision instanceof Promise
    ? decision.then((d) => decide(principal, policy, d))
    : decide(principal, policy, decision);
}

function decide(principal: Principal | null, policy: RatePolicy, decision: RateDecision): Admission {
  const headers = rateLimitHeaders(policy, decision, Date.now());
  if (!decision.allowed) {
    throw new ApiError("rate_limited", `Rate limit exceeded; retry in ${decision.retryAfterSeconds} s.`, {
      headers,
      extra: { retry_after_seconds: decision.retryAfterSeconds },
    });
  }
  return { principal, headers };
}

/** Turns zod issues into the problem's `errors` list: one entry per offending field. */
export function fieldErrors(error: z.ZodError): FieldError[] {
  const out: FieldError[] = [];
  for (const issue of error.issues) {
    const base = issue.path.map(String).join(".");
    if (issue.code === "unrecognized_keys") {
      for (const key of issue.keys) {
        out.push({ field: base ? `${base}.${key}` : key, message: `unknown field ${key}` });
      }
    } else if (issue.code === "invalid_type" && issue.input === undefined) {
      out.push({ field: base, message: `${base || "body"} is required` });
    } else {
      out.push({ field: base, message: issue.message });
    }
  }
  return out;
}

/**
 * A handler's result that does not match its operation's output schema: a bug, which every transport
 * logs (with `operation` and `issues`) and answers as an internal error.
 */
class ResponseMismatch extends Error {
  constructor(
    readonly operation: string,
    readonly issues: z.core.$ZodIssue[],
  ) {
    const list = issues.map((i) => `${i.path.map(String).join(".") || "(root)"}: ${i.message}`).join("; ");
    super(`${operation} returned a result that does not match its output schema: ${list}`);
    this.name = "ResponseMismatch";
  }
}

/**
 * What is wrong with a result, read the way a client reads it: as JSON (what every transport sends),
 * parsed with the output schema. A field the schema does not declare is wrong too, though zod would strip
 * it: the published JSON Schema (OpenAPI, MCP `outputSchema`) has `additionalProperties: false`.
 */
export function responseIssues(op: AnyOperation, result: unknown): z.core.$ZodIssue[] {
  const text = JSON.stringify(result);
  const wire: unknown = text === undefined ? undefined : JSON.parse(text);
  const parsed = op.output.safeParse(wire);
  if (!parsed.success) return parsed.error.issues;
  const issues: z.core.$ZodIssue[] = [];
  undeclaredKeys(wire, parsed.data, [], issues);
  return issues;
}

const isObject = (v: unknown): v is Record<string, unknown> =>
  typeof v === "object" && v !== null && !Array.isArray(v);

/** Keys of `wire` the schema stripped from `read` (its parse of `wire`), at any depth. */
function undeclaredKeys(wire: unknown, read: unknown, path: PropertyKey[], out: z.core.$ZodIssue[]): void {
  if (Array.isArray(wire) && Array.isArray(read)) {
    for (const [i, item] of wire.entries()) undeclaredKeys(item, read[i], [...path, i], out);
    return;
  }
  if (!isObject(wire) || !isObject(read)) return;
  const keys = Object.keys(wire).filter((k) => !Object.hasOwn(read, k));
  if (keys.length > 0) {
    const names = keys.map((k) => `"${k}"`).join(", ");
    out.push({ code: "unrecognized_keys", keys, path, message: `Undeclared key(s): ${names}` });
  }
  for (const [key, value] of Object.entries(read)) {
    if (Object.hasOwn(wire, key)) undeclaredKeys(wire[key], value, [...path, key], out);
  }
}

/** The input validated against the operation's schema and the text every input refuses (422 otherwise). */
export function parseInput(op: AnyOperation, raw: unknown): unknown {
  // A valid input is parsed once, plainly: zod's parse with an error map and reported inputs costs about
  // three times as much (2-3 µs a quote), and only a refusal needs them. A refused input is parsed again
  // with them: issues the schema did not word itself are worded by fieldMessage (the service's words, not
  // zod's), and each issue keeps its input, so that fieldErrors tells a missing field from one of the
  // wrong type.
  const input = raw ?? {};
  const plain = op.input.safeParse(input);
  const parsed = plain.success
    ? plain
    : op.input.safeParse(input, { error: fieldMessage, reportInput: true });
  const badText = textErrors(raw);
  if (!parsed.success) throw validationError([...fieldErrors(parsed.error), ...badText]);
  if (badText.length > 0) throw validationError(badText);
  return parsed.data;
}

/**
 * Validates the input against the operation's schema and runs its handler; an idempotent operation called
 * with a key runs under it (replay, 409, 422: idempotency.ts), whichever transport it came through. With
 * VALIDATE_RESPONSES, checks the result against the output schema (throws ResponseMismatch).
 */
export async function execute(op: AnyOperation, ctx: OperationContext, raw: unknown): Promise<unknown> {
  return resultValue(await executeForWire(op, ctx, raw));
}

/** execute's result as the handler gave it: a JsonResult when it had its JSON text already, which a
 * transport that sends JSON sends as it is. */
export async function executeForWire(
  op: AnyOperation,
  ctx: OperationContext,
  raw: unknown,
): Promise<unknown> {
  const input = parseInput(op, raw);
  const result =
    op.idempotent && ctx.idempotencyKey !== undefined
      ? await runIdempotent(ctx, ctx.idempotencyKey, (keyed) => op.handler(keyed, input))
      : await op.handler(ctx, input);
  // A text stream is checked as it is written (its rows are made from typed values), not as JSON.
  if (ctx.services.config.VALIDATE_RESPONSES && !(result instanceof TextStream)) {
    const issues = responseIssues(op, result);
    if (issues.length > 0) throw new ResponseMismatch(op.name, issues);
  }
  return result;
}
