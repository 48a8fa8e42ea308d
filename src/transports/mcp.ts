// MCP at POST /api/mcp (and /api/mcp/compat): the official SDK's Streamable HTTP transport, stateless
// (a fresh server and transport per request) with JSON responses. Every operation of the registry is a
// tool: its name, description, input and output schemas come from the operation; a call runs it through
// the same gate and validation as REST (agent-call.ts). Tools that need a key run under the server's
// MCP_API_KEY on the caller's behalf (or the caller's own x-api-key). Failures are isError results whose
// text is the problem document REST would answer.
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
  ListToolsRequestSchema,
  McpError,
  type Tool,
} from "@modelcontextprotocol/sdk/types.js";
import { AjvJsonSchemaValidator } from "@modelcontextprotocol/sdk/validation/ajv";
import type { FastifyBaseLogger, FastifyInstance, FastifyRequest } from "fastify";
import { ApiError, toProblem } from "../errors.js";
import type { AnyOperation, Services } from "../operations/operation.js";
import { OPERATIONS } from "../operations/registry.js";
import {
  type AgentCaller,
  accessText,
  agentInputSchema,
  invokeOperation,
  objectJsonSchema,
  operationByName,
  underscoreName,
} from "./agent-call.js";
import { API_VERSION, SERVICE_NAME } from "./discovery/documents.js";

export type ToolNaming = "dotted" | "underscore";

/** `_meta` member of a tool result that is the stored answer to an earlier call with the same idempotency_key. */
export const REPLAYED_META = "field-dispatch/idempotent-replayed";

const toolLists = new Map<ToolNaming, Tool[]>();

// The SDK builds an Ajv instance per Server unless given one (for elicitation results, which these tools
// never request): one for the process, or it costs a quarter of every call's CPU.
const validator = new AjvJsonSchemaValidator();

function toolFor(op: AnyOperation, naming: ToolNaming): Tool {
  return {
    name: naming === "dotted" ? op.name : underscoreName(op.name),
    title: op.summary,
    description: `${op.description}\n\n${accessText(op)}`,
    inputSchema: agentInputSchema(op) as Tool["inputSchema"],
    outputSchema: objectJsonSchema(op.output, "output") as Tool["outputSchema"],
    annotations: {
      title: op.summary,
      readOnlyHint: op.http.method === "GET",
      destructiveHint: false,
      idempotentHint: op.http.method === "GET",
    },
  };
}

/** The tools, generated once from the registry. */
export function mcpTools(naming: ToolNaming = "dotted"): Tool[] {
  let tools = toolLists.get(naming);
  if (!tools) {
    tools = OPERATIONS.map((op) => toolFor(op, naming));
    toolLists.set(naming, tools);
  }
  return tools;
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
        "need an API key run under this server's key on your behalf.",
    },
  );
  server.setRequestHandler(ListToolsRequestSchema, async () => ({ tools: mcpTools(naming) }));
  server.setRequestHandler(CallToolRequestSchema, async (request): Promise<CallToolResult> => {
    const op = operationByName(request.params.name);
    if (!op) {
      throw new McpError(
        ErrorCode.InvalidParams,
        `Unknown tool ${request.params.name}; tools/list names them all.`,
      );
    }
    try {
      const outcome = await invokeOperation(op, services, caller, request.params.arguments ?? {});
      if (outcome.ok) {
        return {
          content: [{ type: "text", text: JSON.stringify(outcome.result) }],
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
    app.post(path, { schema: { hide: true }, config: { operation: "mcp" } }, async (request, reply) => {
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
      reply.hijack();
      await server.connect(transport);
      await transport.handleRequest(request.raw, reply.raw, request.body);
    });
    // Stateless: no server-sent event stream to open (GET) and no session to end (DELETE).
    for (const method of ["GET", "DELETE"] as const) {
      app.route({
        method,
        url: path,
        schema: { hide: true },
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
