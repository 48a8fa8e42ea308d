// What an operation is: its schemas, who may call it, how it is limited, where REST serves it, and its
// handler. Transports are generated from the registry of these.

import type { z } from "zod";
import type { AuditLog } from "../../audit/audit-log.js";
import type { ApiKeyService, Principal } from "../../auth/api-key-service.js";
import type { ConsoleSessions } from "../../auth/console-sessions.js";
import type { ContractorRefs } from "../../auth/contractor-refs.js";
import type { RateLimiter } from "../../auth/rate-limiter.js";
import type { TrackingTokens } from "../../auth/tracking-tokens.js";
import type { UnsubscribeTokens } from "../../auth/unsubscribe-tokens.js";
import type { Config } from "../../config.js";
import type { KeyRole } from "../../domain/key-roles.js";
import type { ContractorKey } from "../../domain/orders/commands.js";
import { ApiError } from "../../errors.js";
import type { Metrics } from "../../metrics.js";
import type { SafeFetcher } from "../../net/safe-fetch.js";
import type { ProbeService } from "../../probe/probe.js";
import type { BlobStore } from "../../storage/blobs/blob-store.js";
import type { Store, WriteTx } from "../../storage/store.js";
import type { ContractorPool } from "./contractor-pool.js";
import type { DayPlanner } from "./day-planner.js";
import type { DoNotDispatchLists } from "./do-not-dispatch-lists.js";
import type { EventFeed } from "./event-feed.js";
import type { JsonResult } from "./json-result.js";
import type { TextStream } from "./text-stream.js";

export interface Services {
  config: Config;
  store: Store;
  /** Attachments' bytes, by SHA-256 (storage/blobs/): files under DATA_DIR or the database's chunks. */
  blobs: BlobStore;
  pool: ContractorPool;
  /** The accounts' do-not-dispatch lists as matching reads them (cached per account). */
  doNotDispatch: DoNotDispatchLists;
  keys: ApiKeyService;
  /** The web console's sessions (cookies standing for API keys). */
  sessions: ConsoleSessions;
  limiter: RateLimiter;
  metrics: Metrics;
  audit: AuditLog;
  /** The SSRF-safe fetcher every outbound request goes through (probe, webhooks). */
  fetcher: SafeFetcher;
  probe: ProbeService;
  /** The accounts' handles of contractors (contractor_ref). */
  refs: ContractorRefs;
  /** The live event stream's feed in this process. */
  events: EventFeed;
  /** Tracking links' tokens, and their revocations signalled in this process. */
  tracking: TrackingTokens;
  /** Sites' request links' tokens (operations/requests/): the same scheme under a secret of their own. */
  requestLinks: TrackingTokens;
  /** Notification messages' unsubscribe links. */
  unsubscribe: UnsubscribeTokens;
  /** The optimised day's planning, on worker threads (one run per mode at a time). */
  planner: DayPlanner;
  now(): Date;
}

/** A key as a transport received it: its value, unchecked, and where it came from (which names it in errors). */
export interface SentIdempotencyKey {
  value: unknown;
  in: "header" | "argument";
}

/** What the handler of an idempotent operation gets in `ctx.idempotency` when its caller sent a key. */
export interface IdempotencyClaim {
  readonly key: string;
  /**
   * Stores `response` as this key's answer, in the handler's write transaction `tx`, so it commits or
   * rolls back with the effect. False when another request (in another process) stored the key first:
   * the handler then writes nothing and returns, and its caller is answered with the winner's response.
   * `orderId`: the order the effect created, kept with the record.
   */
  claim(tx: WriteTx, response: unknown, orderId?: string | null): Promise<boolean>;
}

export interface OperationContext {
  services: Services;
  requestId: string;
  /** The authenticated caller; set for keyed operations. */
  principal: Principal | null;
  /** Absolute base URL of this service as the caller reaches it, without a trailing slash. */
  baseUrl: string;
  /** Wall-clock time and monotonic time the request arrived. */
  receivedAt: Date;
  receivedHr: bigint;
  /** The idempotency key the caller sent, if any (REST: the Idempotency-Key header; MCP and A2A: the
   * idempotency_key argument); honoured only for operations declared `idempotent`. */
  idempotencyKey: SentIdempotencyKey | undefined;
  /** Set by the gate when an idempotent operation is called with a key: the handler claims the key with its
   * response inside its own write transaction (idempotency.ts). */
  idempotency?: IdempotencyClaim;
  /** The input exactly as received, before validation, without an agent's idempotency_key (for
   * idempotency fingerprints and the audit record). */
  rawInput: unknown;
  /** Set when the service itself runs an operation for an account (the maintenance plans' generator): the
   * actor its audit records name, instead of the key. */
  actingAs?: `system:${string}`;
  setHeader(name: string, value: string): void;
  /** For an operation with `upload`: reads the request's file and form fields, refusing a file over
   * `maxBytes` (413). Called by the handler once it has decided the caller may upload, so a refused
   * caller's body is never read. Unset for other operations and transports. */
  readUpload?(maxBytes: number): Promise<ReceivedUpload>;
}

/** A file as an upload received it, with the form's other fields (text). */
export interface ReceivedUpload {
  fields: Record<string, string>;
  file: { bytes: Buffer; filename: string | null } | null;
}

/** key: a caller's (account) key; public: none. Contractor and dispatcher keys are refused on both kinds of
 * caller operation that need a key; their own operations come with the lifecycle. any_key: a key of any
 * kind, the operation answering each kind within its own scope (the event stream). */
export type Access = "key" | "contractor" | "dispatcher" | "any_key" | "public";
/** What a call does to the service's state: `read` changes nothing (a retry is harmless); `write` adds or
 * moves things forward (a quote, an order, an acceptance, a report); `destructive` takes something away or
 * replaces it for good (a cancellation, a reassignment, a pool exclusion, a rotated secret). MCP's tool
 * annotations are derived from it. */
type Effect = "read" | "write" | "destructive";
/** key: the key's bucket; client_ip: the public per-IP bucket; probe_ip: the probe's own, stricter per-IP bucket. */
type LimitScope = "key" | "client_ip" | "probe_ip" | "none";

interface HttpBinding {
  method: "GET" | "POST";
  path: string;
  input: "body" | "query" | "params";
}

/** Where a streaming operation writes its events (the REST transport's Server-Sent Events). */
interface StreamSink {
  send(id: string, event: string, data: unknown): void;
}

export interface Operation<I extends z.ZodType = z.ZodType, O extends z.ZodType = z.ZodType> {
  /** OpenAPI operationId. */
  id: string;
  /** MCP tool / A2A skill name. */
  name: string;
  summary: string;
  description: string;
  access: Access;
  /** For an operation of `access: "key"`: an agent (MCP, A2A) that sends no key of its own may call it
   * under the server's key (MCP_API_KEY, else the sandbox key), as the contract has the server do for
   * dispatch.quote and dispatch.order. Every other keyed operation needs the caller's own key. */
  onServerKey?: true;
  /** For an operation of `access: "key"`: the least role the account's key must have (domain/key-roles.ts):
   * approver for decisions over money, admin for the account's settings; none: any role. A key below it
   * gets 403 key_role_not_allowed. */
  role?: Exclude<KeyRole, "requester">;
  effect: Effect;
  /** The call itself reaches hosts outside this service that its input names (the readiness probe). */
  openWorld?: true;
  limit: LimitScope;
  http: HttpBinding;
  /** Problem statuses this operation answers beyond those its access, limit and binding imply (e.g. 409,
   * or 503 for a public operation that reads the store). */
  problems?: readonly number[];
  /** Retry-safe: a caller's idempotency key (REST header, agent argument) replays the first response. Every
   * transport honours it through the gate; the handler must claim the key in its write (idempotency.ts).
   * Keys are scoped to the caller's account, so only operations that take a key may declare it. */
  idempotent?: true;
  /** The call sets a state its input names (activate, exclude, ...): repeating it with the same input
   * leaves things as the first call did, without a key (each call is still recorded in the audit log). */
  setsState?: true;
  input: I;
  output: O;
  /**
   * The operation takes a file: REST reads its body as multipart/form-data (the path parameters are its
   * `input`), one file part named `file` and the text fields `fields` describes (for the OpenAPI document;
   * the handler validates them). Agents cannot send files: an operation with an upload is REST only.
   */
  upload?: { fields: z.ZodObject };
  /**
   * The operation's result (its `output`, a `BlobDescriptor`) names a blob: REST answers with the blob's
   * bytes (ETag, If-None-Match, Range) rather than JSON, of one of `mediaTypes`. Agents get the
   * descriptor with the REST URL, and the bytes themselves up to a size (agent-call.ts `agentFile`).
   */
  download?: { mediaTypes: readonly string[] };
  /**
   * The operation answers a text file written as it is read (its handler returns a `TextStream`, its
   * `output` describes the text): REST sends it as it comes, of one of `mediaTypes`, as an attachment.
   * Agents cannot hold a stream: an operation with a text stream is REST only.
   */
  textStream?: { mediaTypes: readonly string[] };
  /** A valid input, shown in OpenAPI, llms-full.txt, MCP and the agent card (a test parses it). */
  example: z.input<I>;
  /** Its result, or the same as JSON text already made (json-result.ts); with `textStream`, the text. */
  handler(
    ctx: OperationContext,
    input: z.output<I>,
  ): Promise<z.input<O> | JsonResult<z.input<O>> | TextStream>;
  /**
   * Also served as a stream: REST answers a request that accepts text/event-stream with Server-Sent
   * Events, handing `sink` what this writes until the client goes (the function it resolves to stops
   * it); `handler` answers the others with one page. MCP tools and A2A skills cannot hold a stream open,
   * so an operation with a stream is neither (REST only).
   */
  stream?(ctx: OperationContext, input: z.output<I>, sink: StreamSink): Promise<() => void>;
}

/** Whether agents (MCP tools, A2A skills) serve this operation: not a stream, a text stream or an upload
 * (a download is served: its bytes travel in the tool's or skill's answer, agent-call.ts). */
export function servedToAgents(op: { stream?: unknown; upload?: unknown; textStream?: unknown }): boolean {
  return op.stream === undefined && op.upload === undefined && op.textStream === undefined;
}

/**
 * Whether calling the operation again with the same input changes nothing more (MCP's idempotentHint): a
 * read, a write that replays its first answer under an idempotency key, or one that sets a state.
 */
export function repeatsSafely(op: Pick<Operation, "effect" | "idempotent" | "setsState">): boolean {
  return op.effect === "read" || op.idempotent === true || op.setsState === true;
}

/** The caller of a keyed operation; the gate guarantees it is set before a keyed handler runs. */
export function principalOf(ctx: OperationContext): Principal {
  if (!ctx.principal) throw new Error("a keyed operation ran without a principal");
  return ctx.principal;
}

/** The contractor a key speaks for, in the key's mode: a test key sees sandbox work, a live key live work. */
export function contractorOf(ctx: OperationContext): ContractorKey {
  const principal = principalOf(ctx);
  const id = principal.contractorId;
  if (!id) throw new ApiError("key_kind_not_allowed", "This operation takes a contractor's API key.");
  return { contractorId: id, livemode: principal.livemode };
}

/** Declares an operation with its handler typed from its schemas. */
export function defineOperation<I extends z.ZodType, O extends z.ZodType>(
  op: Operation<I, O>,
): Operation<I, O> {
  return op;
}

// biome-ignore lint/suspicious/noExplicitAny: a registry holds operations of every input/output type.
export type AnyOperation = Operation<any, any>;
