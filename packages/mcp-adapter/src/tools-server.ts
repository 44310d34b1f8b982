/**
 * The MCP projection of the registry served at /mcp: every registry tool becomes an MCP tool
 * (name, title, description, inputSchema, outputSchema, annotations) and `tools/call` runs
 * `registry.callTool`. Nothing about a tool is decided here.
 *
 * Results (MCP 2025-11-25 "Tools"):
 * - success → `{ content:[{type:'text', text: JSON of data}], structuredContent: data }`
 *   (a replayed write has `replayed: true` in data, as on REST, and `_meta["kitty/idempotent-replayed"]: true`);
 * - a tool failure → `{ isError: true, content:[{type:'text', text: JSON of the REST error envelope}] }`,
 *   text only: SDK clients validate `structuredContent` against `outputSchema` even on errors;
 * - an unknown tool name → JSON-RPC error -32602 (InvalidParams), as the MCP spec asks, with the
 *   registry's one unknown-tool message (naming the closest tools) and its error body as `data`.
 */
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import {
  CallToolRequestSchema,
  ErrorCode as RpcErrorCode,
  ListToolsRequestSchema,
  McpError,
  type CallToolResult,
  type Tool,
} from '@modelcontextprotocol/sdk/types.js';
import { KITTY_VERSION, toErrorEnvelope, type Registry, type ToolDescriptor, type CallRequest } from '@kitty/core';

/** What a tool handler needs from the HTTP request; the route puts it in the transport's authInfo.extra. */
export interface McpCallContext {
  callRequest: CallRequest;
  /** Logs failures the caller cannot fix (INTERNAL); the route passes Fastify's request logger. */
  logError(obj: unknown, msg: string): void;
  /** Set when a tool call failed for a missing scope: the route answers HTTP 403 with an RFC 6750 insufficient_scope challenge. */
  insufficientScope?: string;
}

export const CONTEXT_KEY = 'kitty';

/** Reads the McpCallContext the route attached; throws InternalError if the route forgot it (a bug). */
export function callContextOf(extra: { authInfo?: { extra?: Record<string, unknown> } }): McpCallContext {
  const ctx = extra.authInfo?.extra?.[CONTEXT_KEY] as McpCallContext | undefined;
  if (!ctx) throw new McpError(RpcErrorCode.InternalError, 'MCP request without Kitty call context');
  return ctx;
}

/** Projects one registry tool onto the MCP Tool shape (schemas passed through unchanged). */
export function toMcpTool(t: ToolDescriptor): Tool {
  return {
    name: t.name,
    title: t.title,
    description: t.description,
    inputSchema: t.input_schema as Tool['inputSchema'],
    outputSchema: t.output_schema as Tool['outputSchema'],
    annotations: { title: t.title, ...t.annotations },
  };
}

/** Turns any thrown value into the `isError` tool result carrying the REST error envelope as text. */
export function toolErrorResult(e: unknown, ctx: McpCallContext): CallToolResult {
  const { body, error } = toErrorEnvelope(e, ctx.callRequest.requestId);
  if (error.kittyCode === 'INTERNAL') ctx.logError({ err: error.cause ?? e }, 'internal error (mcp)');
  const requiredScope = error.kittyCode === 'FORBIDDEN' ? error.details?.required_scope : undefined;
  if (typeof requiredScope === 'string') ctx.insufficientScope = requiredScope;
  return { isError: true, content: [{ type: 'text', text: JSON.stringify(body) }] };
}

/** A JSON-serialisable success result. */
export function toolSuccessResult(data: Record<string, unknown>, replayed = false): CallToolResult {
  const result: CallToolResult = { content: [{ type: 'text', text: JSON.stringify(data) }], structuredContent: data };
  if (replayed) result._meta = { 'kitty/idempotent-replayed': true };
  return result;
}

/**
 * tools/call as the protocol layer parses it: `arguments` left unchecked there. With the SDK's own
 * schema a non-object `arguments` (array, string, number, null) fails that first parse and
 * leaves as -32603 Internal error; with this one it reaches the SDK's tools/call validation,
 * which answers -32602 Invalid params naming `params.arguments` (JSON-RPC 2.0 §5.1).
 */
const CallToolRequestLooseArgs = CallToolRequestSchema.extend({
  params: CallToolRequestSchema.shape.params.omit({ arguments: true }).loose(),
});

export const SERVER_INFO = { name: 'kitty', title: 'Kitty', version: KITTY_VERSION };

/**
 * Returns a factory of low-level SDK Servers for /mcp. The tool list is projected once here
 * and shared by every Server the factory makes.
 * @param registry the tool registry
 * @param info     serverInfo.version is the service description version; `toolsVersion` goes in instructions
 */
export function toolsServerFactory(registry: Registry, baseUrl: string): () => Server {
  const listResult = { tools: registry.catalogue.map(toMcpTool) };
  const instructions =
    `Kitty: a shared-expense ledger and agent network. ${registry.catalogue.length} tools (tools version ${registry.version}). ` +
    `Results are the same objects as REST POST ${baseUrl}/v1/tools/{name} returns in "data"; failures are isError results whose text is the ` +
    `REST error envelope {ok:false,error:{code,message,suggested_action,details?,retry_after?},request_id}. ` +
    `Write tools take idempotency_key (or the Idempotency-Key header). ${registry.envelopeText} Read-only documentation without a credential: ${baseUrl}/mcp/docs.`;

  return () => {
    const server = new Server(SERVER_INFO, { capabilities: { tools: { listChanged: false } }, instructions });
    server.setRequestHandler(ListToolsRequestSchema, () => listResult);
    server.setRequestHandler(CallToolRequestLooseArgs, async (request, extra) => {
      const { name, arguments: args } = request.params as { name: string; arguments?: Record<string, unknown> };
      if (!registry.has(name)) {
        const err = registry.unknownTool(name);
        throw new McpError(RpcErrorCode.InvalidParams, `${err.message} ${err.suggestedAction}`, err.toBody());
      }
      const ctx = callContextOf(extra);
      try {
        const { data, call } = await registry.callTool(name, args ?? {}, ctx.callRequest);
        return toolSuccessResult(data, call.replayed);
      } catch (e) {
        return toolErrorResult(e, ctx);
      }
    });
    return server;
  };
}
