// A2A at POST /api/a2a with @a2a-js/sdk: JSON-RPC, v1.0 methods (SendMessage, ...) and the 0.3 forms
// (message/send, ...) through the SDK's compatibility handler, chosen per request by the A2A-Version
// header or else by the method's name. A message whose data part is { "skill": "<name>", "input": {...} }
// runs that operation (agent-call.ts) and is answered with a data part holding its result; anything else
// gets a text part saying what went wrong. Skills that need a key use the caller's x-api-key; with none,
// the skills declared onServerKey (dispatch.quote, dispatch.order, dispatch.order_status) use the server's
// MCP_API_KEY, else the sandbox key (test mode only), and the others answer 401. An idempotent skill takes
// an idempotency_key beside its input fields (in `input`); a replayed answer carries metadata
// { idempotent_replayed: true }.
//
// The agent card is generated from the operation registry. It is one public document for every caller, so
// it lists every skill and marks the key each one needs: tags `public`, or `needs-key` with `account-key`,
// `contractor-key` or `dispatcher-key`, plus `server-key` where the server's own key stands in for a
// caller that sends none; every other keyed skill carries a security requirement naming the role whose own
// key it needs (the server never applies its own key to them).
//
// A body is checked before the SDK sees it (json-rpc.ts): not JSON is -32700, not a JSON-RPC request
// (or a batch, which A2A does not have) -32600; the SDK answers -32602 for params that do not fit.

import { randomUUID } from "node:crypto";
import {
  A2A_VERSION_HEADER,
  AgentCard,
  formatSSEErrorEvent,
  formatSSEEvent,
  type Message,
  type Part,
  Role,
  SSE_HEADERS,
} from "@a2a-js/sdk";
import { isLegacyJsonRpcMethod } from "@a2a-js/sdk/compat/v0_3";
import { LegacyJsonRpcTransportHandler } from "@a2a-js/sdk/compat/v0_3/server";
import {
  AgentEvent,
  type AgentExecutor,
  DefaultRequestHandler,
  type ExecutionEventBus,
  InMemoryTaskStore,
  JsonRpcTransportHandler,
  type RequestContext,
  ServerCallContext,
  validateVersion,
} from "@a2a-js/sdk/server";
import type { FastifyBaseLogger, FastifyInstance, FastifyRequest } from "fastify";
import type { Problem } from "../errors.js";
import type { AnyOperation, Services } from "../operations/kernel/operation.js";
import { AGENT_OPERATIONS } from "../operations/registry.js";
import {
  type AgentCaller,
  type AgentFile,
  accessText,
  agentInputSchema,
  invokeOperation,
  operationByName,
  runsOnServerKey,
} from "./agent-call.js";
import { A2A_PROTOCOL_VERSION, API_VERSION, SERVICE_NAME, SUMMARY } from "./discovery/documents.js";
import {
  envelopeProblem,
  idOf,
  JSON_RPC_ERROR,
  type JsonRpcErrorResponse,
  jsonRpcErrorHandler,
  passHeaders,
  rpcError,
} from "./json-rpc.js";

const CALLER = "field-dispatch.caller";
const LOGGER = "field-dispatch.log";
/** Message metadata member set on an answer that is the stored result of an earlier call with the same
 * idempotency_key. */
const REPLAYED_METADATA = "idempotent_replayed";

function inputDescription(op: AnyOperation): string {
  const schema = agentInputSchema(op) as {
    properties?: Record<string, { description?: string }>;
    required?: string[];
  };
  const fields = Object.entries(schema.properties ?? {}).map(
    ([name, p]) =>
      `${name}${schema.required?.includes(name) ? "" : "?"}${p.description ? ` (${p.description})` : ""}`,
  );
  return fields.length ? `Input fields: ${fields.join("; ")}.` : "Input: {} (no fields).";
}

/** The roles whose key a skill takes: account, contractor or dispatcher, all three for a skill any key
 * opens (each answered within its own scope), none for a public skill. */
function keyRoles(op: AnyOperation): string[] {
  if (op.access === "public") return [];
  if (op.access === "any_key") return ["account", "contractor", "dispatcher"];
  return [op.access === "key" ? "account" : op.access];
}

/** The card's tags for the key a skill needs: `public`, or `needs-key`, the key's kind (`any-key` for a
 * skill any key opens) and, when the server's own key stands in for a caller that sends none,
 * `server-key`. */
function accessTags(op: AnyOperation): string[] {
  if (op.access === "public") return ["public"];
  const kind = op.access === "any_key" ? "any" : (keyRoles(op)[0] as string);
  return ["needs-key", `${kind}-key`, ...(runsOnServerKey(op) ? ["server-key"] : [])];
}

/** A skill's security requirement: the caller's own key of its roles, unless the server's may stand in. */
function securityOf(op: AnyOperation) {
  const roles = keyRoles(op);
  return roles.length === 0 || runsOnServerKey(op) ? [] : [{ schemes: { apiKey: { list: roles } } }];
}

/** The agent card, for the JSON-RPC endpoint at `base`/api/a2a, generated from the registry. */
function agentCard(base: string): AgentCard {
  const url = `${base}/api/a2a`;
  return {
    name: SERVICE_NAME,
    description: `${SUMMARY} Send a message with one data part { "skill": "<skill id>", "input": { ... } }; the answer is a data part with the result, or a text part with the error.`,
    version: API_VERSION,
    supportedInterfaces: [
      { url, protocolBinding: "JSONRPC", protocolVersion: A2A_PROTOCOL_VERSION, tenant: "" },
      { url, protocolBinding: "JSONRPC", protocolVersion: "0.3", tenant: "" },
    ],
    provider: { organization: SERVICE_NAME, url: base },
    capabilities: { streaming: false, pushNotifications: false, extensions: [], extendedAgentCard: false },
    securitySchemes: {
      apiKey: {
        scheme: {
          $case: "apiKeySecurityScheme",
          value: {
            location: "header",
            name: "x-api-key",
            description:
              "Optional for skills tagged server-key: they run under the server's own key (MCP_API_KEY, else its sandbox key, test mode only) unless the caller sends its own. Every other skill tagged needs-key needs the caller's own key of the kind its tag names (account-key, contractor-key or dispatcher-key; any-key: any of the three, each answered within its own scope).",
          },
        },
      },
    },
    securityRequirements: [],
    defaultInputModes: ["application/json"],
    defaultOutputModes: ["application/json", "text/plain"],
    skills: AGENT_OPERATIONS.map((op) => ({
      id: op.name,
      name: op.summary,
      description: `${op.description} ${accessText(op)} ${inputDescription(op)}`,
      tags: [...accessTags(op), op.name.split(".")[0] ?? "dispatch"],
      examples: [JSON.stringify({ skill: op.name, input: op.example })],
      inputModes: ["application/json"],
      outputModes: ["application/json", "text/plain", ...(op.download?.mediaTypes ?? [])],
      securityRequirements: securityOf(op),
    })),
    signatures: [],
    documentationUrl: `${base}/llms-full.txt`,
  };
}

/** The card as served: the v1.0 JSON, plus the 0.3 fields (url, preferredTransport) 0.3 clients read. */
export function agentCardJson(base: string): Record<string, unknown> {
  const card = agentCard(base);
  return {
    ...(AgentCard.toJSON(card) as Record<string, unknown>),
    url: `${base}/api/a2a`,
    preferredTransport: "JSONRPC",
    protocolVersion: "0.3",
  };
}

const part = {
  data: (value: unknown): Part => ({
    content: { $case: "data", value: value as { [key: string]: unknown } },
    metadata: undefined,
    filename: "",
    mediaType: "application/json",
  }),
  /** A download's file: its bytes when inline, else the URL REST serves them at. */
  file: (file: AgentFile): Part => ({
    content:
      file.bytes !== null ? { $case: "raw", value: file.bytes } : { $case: "url", value: file.download.url },
    metadata: undefined,
    filename: file.download.filename,
    mediaType: file.download.media_type,
  }),
  text: (value: string): Part => ({
    content: { $case: "text", value },
    metadata: undefined,
    filename: "",
    mediaType: "text/plain",
  }),
};

function problemText(skill: string, problem: Problem): string {
  const fields = problem.errors?.length
    ? ` Fields: ${problem.errors.map((e) => `${e.field}: ${e.message}`).join("; ")}.`
    : "";
  return `Error running ${skill}: ${problem.code} (${problem.status}). ${problem.detail}${fields}`;
}

class OperationExecutor implements AgentExecutor {
  constructor(private readonly services: Services) {}

  async execute(ctx: RequestContext, bus: ExecutionEventBus): Promise<void> {
    const caller = ctx.context.state.get(CALLER) as AgentCaller;
    const log = ctx.context.state.get(LOGGER) as FastifyBaseLogger | undefined;
    const reply = (parts: Part[], metadata?: Record<string, unknown>) => {
      const message: Message = {
        messageId: randomUUID(),
        contextId: ctx.contextId,
        taskId: "",
        role: Role.ROLE_AGENT,
        parts,
        metadata,
        extensions: [],
        referenceTaskIds: [],
      };
      bus.publish(AgentEvent.message(message));
      bus.finished();
    };
    const data = ctx.userMessage.parts.find((p) => p.content?.$case === "data");
    const value =
      data?.content?.$case === "data" ? (data.content.value as Record<string, unknown>) : undefined;
    const skills = AGENT_OPERATIONS.map((o) => o.name).join(", ");
    if (!value || typeof value.skill !== "string") {
      reply([
        part.text(
          `Send a data part { "skill": "<name>", "input": { ... } }. Skills: ${skills}. The agent card lists each one's input and an example.`,
        ),
      ]);
      return;
    }
    const op = operationByName(value.skill);
    if (!op) {
      reply([part.text(`Unknown skill ${value.skill}. Skills: ${skills}.`)]);
      return;
    }
    try {
      const outcome = await invokeOperation(op, this.services, caller, value.input ?? {});
      if (!outcome.ok) reply([part.text(problemText(op.name, outcome.problem))]);
      // A replay says so in the message's metadata; the data part is exactly the first call's result.
      else {
        const parts = [part.data(outcome.result), ...(outcome.file ? [part.file(outcome.file)] : [])];
        reply(parts, outcome.replayed ? { [REPLAYED_METADATA]: true } : undefined);
      }
    } catch (err) {
      log?.error({ err, request_id: caller.requestId, skill: op.name }, "unhandled error in an A2A skill");
      reply([
        part.text(
          `Error running ${op.name}: internal_error (500). Quote request id ${caller.requestId} when reporting it.`,
        ),
      ]);
    }
  }

  async cancelTask(): Promise<void> {
    // Skills answer at once with a message; there is never a task to cancel.
  }
}

export function registerA2a(
  app: FastifyInstance,
  services: Services,
  callerOf: (request: FastifyRequest) => AgentCaller,
): void {
  // The handler's card is only read for the versions it accepts; the served card carries the caller's base URL.
  const requestHandler = new DefaultRequestHandler(
    agentCard(services.config.PUBLIC_BASE_URL ?? "http://localhost"),
    new InMemoryTaskStore(),
    new OperationExecutor(services),
  );
  const v1 = new JsonRpcTransportHandler(requestHandler);
  const legacy = new LegacyJsonRpcTransportHandler(requestHandler);

  app.post(
    "/api/a2a",
    {
      schema: { hide: true },
      config: { operation: "a2a" },
      errorHandler: (error, request, reply) => jsonRpcErrorHandler(error, request, reply),
    },
    async (request, reply) => {
      const invalid = invalidA2aBody(request.body);
      if (invalid) return reply.code(400).type("application/json").send(invalid);
      const body = request.body as { method?: unknown; id?: unknown } | undefined;
      const header = request.headers[A2A_VERSION_HEADER.toLowerCase()];
      const version = Array.isArray(header) ? header[0] : header;
      const useLegacy = version
        ? version.startsWith("0.3")
        : isLegacyJsonRpcMethod(String(body?.method ?? ""));
      const context = new ServerCallContext({
        requestedVersion: useLegacy ? "0.3" : A2A_PROTOCOL_VERSION,
        state: new Map<string, unknown>([
          [CALLER, callerOf(request)],
          [LOGGER, request.log],
        ]),
      });
      const id = body?.id ?? null;
      try {
        validateVersion(context.requestedVersion, await requestHandler.getAgentCard(), "JSONRPC");
      } catch (e) {
        const error = useLegacy
          ? LegacyJsonRpcTransportHandler.mapToLegacyJSONRPCError(e)
          : JsonRpcTransportHandler.mapToJSONRPCError(e);
        return reply.type("application/json").send({ jsonrpc: "2.0", id, error });
      }
      const result = await (useLegacy ? legacy : v1).handle(request.body as Record<string, unknown>, context);
      if (result && typeof (result as AsyncGenerator)[Symbol.asyncIterator] === "function") {
        passHeaders(reply);
        reply.hijack();
        reply.raw.writeHead(200, SSE_HEADERS);
        try {
          for await (const event of result as AsyncGenerator<unknown>) reply.raw.write(formatSSEEvent(event));
        } catch (e) {
          reply.raw.write(
            formatSSEErrorEvent({ jsonrpc: "2.0", id, error: JsonRpcTransportHandler.mapToJSONRPCError(e) }),
          );
        } finally {
          reply.raw.end();
        }
        return reply;
      }
      return reply.type("application/json").send(JSON.stringify(result));
    },
  );
}

/** The -32600 to answer instead of handing the body to the SDK (which answers these -32602), or null. */
function invalidA2aBody(body: unknown): JsonRpcErrorResponse | null {
  if (Array.isArray(body)) {
    return rpcError(
      null,
      JSON_RPC_ERROR.invalidRequest,
      "Invalid Request: batches are not supported; send one request.",
    );
  }
  const problem = envelopeProblem(body, { allowNullId: true, responses: false });
  return problem ? rpcError(idOf(body), JSON_RPC_ERROR.invalidRequest, `Invalid Request: ${problem}.`) : null;
}
