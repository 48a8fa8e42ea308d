// MCP at POST /api/mcp (and /api/mcp/compat): the official SDK's Streamable HTTP transport, stateless
// (a fresh server and transport per request) with JSON responses. Every operation of the registry is a
// tool: its name, description, input and output schemas and annotations come from the operation; a call
// runs it through the same gate and validation as REST (agent-call.ts). Tools that need a key run under
// the caller's own x-api-key; with none, dispatch.quote, dispatch.order and dispatch.order_status (the
// operations declared onServerKey) run under the server's MCP_API_KEY, else the sandbox key (test mode
// only), and every other keyed tool answers 401. tools/list shows the tools the caller may use: the public
// ones and those of its key's kind, or with no key of its own those the server's key stands in for.
// Failures are isError results whose text is the problem document REST would answer.
//
// A body is checked before the SDK sees it (json-rpc.ts): not JSON is -32700, not a JSON-RPC request
// -32600, params that do not fit the method (a tools/call without a string name, or with arguments that
// are not an object) -32602, each with a message naming the member at fault.
//
// An idempotent operation's tool takes an idempotency_key argument (in its inputSchema); a replayed result
// carries `_meta["field-dispatch/idempotent-replayed"]: true`.
//
// Some MCP clients refuse dots in tool names: /api/mcp/compat lists the same tools named with underscores
// (dispatch_quote). Both endpoints accept both spellings in tools/call; each lists one.

import { Server } from "@modelcontextprotocol/sdk/server/index.js";
import { StreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/streamableHttp.js";
import {
  CallToolRequestSchema,
  type CallToolResult,
  ErrorCode,
  InitializeRequestSchema,
  JSONRPCMessageSchema,
  ListToolsRequestSchema,
  PingRequestSchema,
  type Tool,
} from "@modelcontextprotocol/sdk/types.js";
import { AjvJsonSchemaValidator } from "@modelcontextprotocol/sdk/validation/ajv";
import type { FastifyBaseLogger, FastifyInstance, FastifyRequest } from "fastify";
import type { z } from "zod";
import { ApiError, toProblem } from "../errors.js";
import { type AnyOperation, repeatsSafely, type Services } from "../operations/kernel/operation.js";
import { AGENT_OPERATIONS } from "../operations/registry.js";
import {
  type AgentCaller,
  type AgentFile,
  accessText,
  agentInputSchema,
  agentOutputSchema,
  invokeOperation,
  objectJsonSchema,
  operationByName,
  operationsFor,
  underscoreName,
} from "./agent-call.js";
import { API_VERSION, SERVICE_NAME } from "./discovery/documents.js";
import {
  envelopeProblem,
  idOf,
  issuesText,
  JSON_RPC_ERROR,
  type JsonRpcErrorResponse,
  jsonRpcErrorHandler,
  passHeaders,
  rpcError,
} from "./json-rpc.js";

export type ToolNaming = "dotted" | "underscore";

/** `_meta` member of a tool result that is the stored answer to an earlier call with the same idempotency_key. */
const REPLAYED_META = "field-dispatch/idempotent-replayed";

const tools = new Map<ToolNaming, Map<AnyOperation, Tool>>();

// The SDK builds an Ajv instance per Server unless given one (for elicitation results, which these tools
// never request): one for the process, or it costs a quarter of every call's CPU.
const validator = new AjvJsonSchemaValidator();

function toolFor(op: AnyOperation, naming: ToolNaming): Tool {
  return {
    name: naming === "dotted" ? op.name : underscoreName(op.name),
    title: op.summary,
    description: `${op.description}\n\n${accessText(op)}`,
    inputSchema: agentInputSchema(op) as Tool["inputSchema"],
    outputSchema: objectJsonSchema(agentOutputSchema(op), "output") as Tool["outputSchema"],
    // From the operation's declared effect: a read changes nothing, so it is also idempotent; a write is
    // idempotent when it honours an idempotency key or sets a state (repeatsSafely).
    annotations: {
      title: op.summary,
      readOnlyHint: op.effect === "read",
      destructiveHint: op.effect === "destructive",
      idempotentHint: repeatsSafely(op),
      openWorldHint: op.openWorld === true,
    },
  };
}

/** The tools of `operations` (every one by default), each generated once from the registry. */
export function mcpTools(
  naming: ToolNaming = "dotted",
  operations: readonly AnyOperation[] = AGENT_OPERATIONS,
): Tool[] {
  const cache = tools.get(naming) ?? new Map(AGENT_OPERATIONS.map((op) => [op, toolFor(op, naming)]));
  tools.set(naming, cache);
  return operations.map((op) => cache.get(op) ?? toolFor(op, naming));
}

// The SDK's own schemas of the requests this server answers: a request that fails one is answered -32602
// here, with a readable message, instead of the SDK's -32603 carrying zod's raw issue list.
const REQUEST_SCHEMAS: Record<string, z.ZodType> = {
  initialize: InitializeRequestSchema,
  ping: PingRequestSchema,
  "tools/list": ListToolsRequestSchema,
  "tools/call": CallToolRequestSchema,
};

const PARAMS_HINT: Record<string, string> = {
  "tools/call": ' Send params { "name": "<tool name from tools/list>", "arguments": { ... } }.',
};

/**
 * The JSON-RPC error to answer instead of handing the body to the SDK, with its HTTP status (400 when
 * there is no request to answer, as the SDK's transport does; 200 for a request's own error), or null.
 * A batch with one bad member is answered with that one error.
 */
function invalidMcpBody(body: unknown): { status: number; body: JsonRpcErrorResponse } | null {
  const batch = Array.isArray(body);
  const messages: unknown[] = batch ? body : [body];
  if (messages.length === 0) {
    return {
      status: 400,
      body: rpcError(null, JSON_RPC_ERROR.invalidRequest, "Invalid Request: the batch is empty."),
    };
  }
  for (const [i, message] of messages.entries()) {
    const where = batch ? `batch member ${i}: ` : "";
    const id = batch ? null : idOf(message, false);
    const problem =
      envelopeProblem(message, { allowNullId: false, responses: true }) ?? sdkEnvelopeProblem(message);
    if (problem) {
      return {
        status: 400,
        body: rpcError(id, JSON_RPC_ERROR.invalidRequest, `Invalid Request: ${where}${problem}.`),
      };
    }
    const method = (message as { method?: string }).method;
    const schema = method === undefined ? undefined : REQUEST_SCHEMAS[method];
    const parsed = schema?.safeParse(message);
    if (parsed && !parsed.success) {
      return {
        status: 200,
        body: rpcError(
          idOf(message, false),
          JSON_RPC_ERROR.invalidParams,
          `Invalid params for ${method}: ${where}${issuesText(parsed.error)}.${PARAMS_HINT[method as string] ?? ""}`,
        ),
      };
    }
  }
  return null;
}

/** What the SDK's own message schema (strict: no unknown members) finds wrong that envelopeProblem does not. */
function sdkEnvelopeProblem(message: unknown): string | null {
  const parsed = JSONRPCMessageSchema.safeParse(message);
  if (parsed.success) return null;
  const members = Object.keys(message as object).filter(
    (k) => !["jsonrpc", "id", "method", "params", "result", "error"].includes(k),
  );
  return members.length > 0
    ? `unknown member${members.length > 1 ? "s" : ""} ${members.map((m) => `"${m}"`).join(", ")}`
    : "not a JSON-RPC 2.0 request, notification or response";
}

/**
 * A JSON-RPC error for the SDK to answer with: its code and its plain message. (An McpError's message
 * starts "MCP error <code>: ", which the SDK would send as it is, and clients prefix again.)
 */
function rpcFailure(code: number, message: string): Error & { code: number } {
  return Object.assign(new Error(message), { code });
}

/**
 * A download's file as a tool result's content: an embedded resource with the bytes (base64) when they
 * are inline, else a resource link to the REST URL (fetched with the same key).
 */
function fileContent(file: AgentFile): CallToolResult["content"][number] {
  const { download, bytes } = file;
  if (bytes !== null) {
    return {
      type: "resource",
      resource: { uri: download.url, mimeType: download.media_type, blob: bytes.toString("base64") },
    };
  }
  return {
    type: "resource_link",
    uri: download.url,
    name: download.filename,
    mimeType: download.media_type,
    size: download.size,
  };
}

function mcpServer(services: Services, caller: AgentCaller, naming: ToolNaming, log: FastifyBaseLogger) {
  const server = new Server(
    { name: SERVICE_NAME, title: "Field Dispatch", version: API_VERSION },
    {
      capabilities: { tools: { listChanged: false } },
      jsonSchemaValidator: validator,
      instructions:
        "Quote and order field-service jobs (plumbing, electrical, HVAC, ...), read orders, estimates, the trade " +
        "index and public evals, run the agentic-commerce readiness probe and verify audit records. Tools that " +
        "need an API key run under your x-api-key. Without one, dispatch.quote, dispatch.order and " +
        "dispatch.order_status run under this server's own key on your behalf (its sandbox key, test mode " +
        "only, unless it is configured with another), and the other keyed tools need your key; tools/list " +
        "shows the ones you may call.",
    },
  );
  server.setRequestHandler(ListToolsRequestSchema, async () => ({
    tools: mcpTools(naming, await operationsFor(services, caller)),
  }));
  server.setRequestHandler(CallToolRequestSchema, async (request): Promise<CallToolResult> => {
    const op = operationByName(request.params.name);
    if (!op) {
      throw rpcFailure(
        ErrorCode.InvalidParams,
        `Unknown tool ${request.params.name}; tools/list names the tools your key may call.`,
      );
    }
    try {
      const outcome = await invokeOperation(op, services, caller, request.params.arguments ?? {});
      if (outcome.ok) {
        return {
          content: [
            { type: "text", text: JSON.stringify(outcome.result) },
            ...(outcome.file ? [fileContent(outcome.file)] : []),
          ],
          structuredContent: outcome.result as Record<string, unknown>,
          // A replay says so beside the result, which stays exactly the first call's.
          ...(outcome.replayed ? { _meta: { [REPLAYED_META]: true } } : {}),
        };
      }
      // No structuredContent on errors: it would have to match the tool's output schema.
      return { isError: true, content: [{ type: "text", text: JSON.stringify(outcome.problem) }] };
    } catch (err) {
      log.error({ err, request_id: caller.requestId, tool: op.name }, "unhandled error in an MCP tool");
      const problem = toProblem(
        new ApiError(
          "internal_error",
          `An internal error occurred; quote request id ${caller.requestId} when reporting it.`,
        ),
        caller.requestId,
      );
      return { isError: true, content: [{ type: "text", text: JSON.stringify(problem) }] };
    }
  });
  return server;
}

export function registerMcp(
  app: FastifyInstance,
  services: Services,
  callerOf: (request: FastifyRequest) => AgentCaller,
): void {
  const routes: Array<[string, ToolNaming]> = [
    ["/api/mcp", "dotted"],
    ["/api/mcp/compat", "underscore"],
  ];
  for (const [path, naming] of routes) {
    app.post(
      path,
      {
        schema: { hide: true },
        config: { operation: "mcp" },
        errorHandler: (error, request, reply) => jsonRpcErrorHandler(error, request, reply),
      },
      async (request, reply) => {
        const invalid = invalidMcpBody(request.body);
        if (invalid) return reply.code(invalid.status).type("application/json").send(invalid.body);
        const caller = callerOf(request);
        const server = mcpServer(services, caller, naming, request.log);
        const transport = new StreamableHTTPServerTransport({
          sessionIdGenerator: undefined,
          enableJsonResponse: true,
        });
        reply.raw.on("close", () => {
          void transport.close();
          void server.close();
        });
        passHeaders(reply);
        reply.hijack();
        await server.connect(transport);
        await transport.handleRequest(request.raw, reply.raw, request.body);
      },
    );
    // Stateless: no server-sent event stream to open (GET) and no session to end (DELETE).
    for (const method of ["GET", "DELETE"] as const) {
      app.route({
        method,
        url: path,
        schema: { hide: true },
        // Not a method this path takes: the Allow of other refused methods leaves it out (not-found.ts).
        config: { refusesMethod: true },
        handler: async (_request, reply) =>
          reply
            .code(405)
            .header("allow", "POST")
            .type("application/json")
            .send({
              jsonrpc: "2.0",
              error: {
                code: -32000,
                message: `${method} is not supported: this MCP server is stateless; POST JSON-RPC requests.`,
              },
              id: null,
            }),
      });
    }
  }
}
