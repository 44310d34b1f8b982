/**
 * The MCP projection of the registry served at /mcp: every registry tool becomes an MCP tool
 * (name, title, description, inputSchema, outputSchema, annotations) and `tools/call` runs
 * `registry.callTool`. Nothing about a tool is decided here. One low-level SDK `Server` serves
 * both protocol eras (2025-11-25 and 2026-07-28); era-specific fields are stamped by the SDK.
 *
 * Results:
 * - success → `{ content:[{type:'text', text: JSON of data}], structuredContent: data }`
 *   (a replayed write has `replayed: true` in data, as on REST, and `_meta["kitty/idempotent-replayed"]: true`);
 * - a tool failure → `{ isError: true, content:[{type:'text', text: JSON of the REST error envelope}] }`,
 *   text only: SDK clients validate `structuredContent` against `outputSchema` even on errors;
 * - an unknown tool name → JSON-RPC error -32602 (InvalidParams) with the registry's one
 *   unknown-tool message (naming the closest tools) and its error body as `data`. The message
 *   carries no "MCP error" prefix: clients add their own.
 *
 * Resources (resources.ts): kitty://events, the caller's event feed (subscribable), and receipt files
 * kitty://receipts/{receipt_id}.
 *
 * tools/list: every tool for an anonymous caller, a caller holding every scope, or an OAuth token
 * (which can step up: a call needing more answers 403 insufficient_scope); an API key without some
 * scope (e.g. read-only) gets only the tools it may call, and `_meta["kitty/omitted"]` says how many
 * were left out and why. On 2026-07-28 the result carries `ttlMs` and `cacheScope`:
 * `public` for the whole catalogue (the same for everyone), `private` for a narrowed one.
 */
import {
  Server,
  ProtocolError,
  ProtocolErrorCode,
  type CallToolResult,
  type ListToolsResult,
  type Tool,
} from '@modelcontextprotocol/server';
import { registerResources } from './resources.ts';
import { callContextOf, type HandlerContext, type McpCallContext } from './context.ts';

export { callContextOf, CONTEXT_KEY, type McpCallContext } from './context.ts';
import { KITTY_VERSION, toErrorEnvelope, type Registry, type ToolDescriptor } from '@kitty/core';

/** How long (ms) a 2026-07-28 client may cache tools/list and server/discover: the catalogue changes only with a deployment. */
const LIST_TTL_MS = 10 * 60 * 1000;

/** True when the request came in the 2026-07-28 per-request envelope. */
function isModern(ctx: HandlerContext): boolean {
  return ctx.mcpReq.envelope !== undefined && Object.keys(ctx.mcpReq.envelope).length > 0;
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
  // Keys in the order the SDK's result schema puts them on the wire (direct answers are serialised as built).
  return { content: [{ type: 'text', text: JSON.stringify(body) }], isError: true };
}

/** The text of static tools' stored answers (registry: the same object on every call that adds nothing to it), serialised once. */
const staticTexts = new WeakMap<object, string>();

/** A JSON-serialisable success result: `data` as text and as structuredContent (`_meta` marks a replayed write). */
export function toolSuccessResult(data: Record<string, unknown>, replayed = false, isStatic = false): CallToolResult {
  let text = isStatic ? staticTexts.get(data) : undefined;
  if (text === undefined) {
    text = JSON.stringify(data);
    if (isStatic) staticTexts.set(data, text);
  }
  // Keys in the order the SDK's result schema puts them on the wire (direct answers are serialised as built).
  const content: CallToolResult['content'] = [{ type: 'text', text }];
  return replayed
    ? { _meta: { 'kitty/idempotent-replayed': true }, content, structuredContent: data }
    : { content, structuredContent: data };
}

export const SERVER_INFO = { name: 'kitty', title: 'Kitty', version: KITTY_VERSION };

/**
 * The tools/list answers, computed once: the whole catalogue, and per set of scopes the tools that
 * set may call (memoised by the sorted scope list; a credential has few distinct scope sets).
 */
function toolListings(registry: Registry): (scopes: readonly string[] | null) => ListToolsResult {
  const all = registry.catalogue.map(toMcpTool);
  const full: ListToolsResult = { tools: all };
  const byScopes = new Map<string, ListToolsResult>();
  return (scopes) => {
    if (scopes === null) return full;
    const key = [...scopes].sort().join(' ');
    let listing = byScopes.get(key);
    if (!listing) {
      const allowed = registry.catalogue.filter((t) => t.scope === null || scopes.includes(t.scope));
      const missing = [...new Set(registry.catalogue.map((t) => t.scope).filter((s) => s !== null && !scopes.includes(s)))];
      listing =
        allowed.length === all.length
          ? full
          : {
              tools: allowed.map(toMcpTool),
              _meta: {
                'kitty/omitted': {
                  count: all.length - allowed.length,
                  missing_scopes: missing,
                  reason: `This credential lacks ${missing.join(', ')}: the tools needing it are left out. GET /v1/tools lists every tool.`,
                },
              },
            };
      if (byScopes.size < 64) byScopes.set(key, listing);
    }
    return listing;
  };
}

/**
 * What /mcp answers for tools/list and tools/call, shared by the SDK Servers' handlers and the
 * direct answers (direct.ts), so both give the same results.
 */
export interface ToolsAnswers {
  /** The tools/list result for the caller (whole or narrowed; the same object for the same scopes). */
  listing(callCtx: McpCallContext): ListToolsResult;
  /**
   * Runs `registry.callTool` and translates its outcome: a success or an isError result (never throws).
   * undefined for a name the registry does not know (the Server answers that with -32602).
   */
  call(name: string, args: Record<string, unknown> | undefined, callCtx: McpCallContext): Promise<CallToolResult> | undefined;
}

/**
 * /mcp's tools: `create` builds a low-level SDK Server for /mcp (the tool listings are projected
 * once and shared by every Server), `answers` serves tools/list and tools/call without one.
 */
export function toolsServerParts(registry: Registry, baseUrl: string): { create: () => Server; answers: ToolsAnswers } {
  const listings = toolListings(registry);
  const answers: ToolsAnswers = {
    listing(callCtx) {
      const auth = callCtx.callRequest.auth;
      return listings(auth?.credential === 'api_key' ? auth.scopes : null);
    },
    call: (name, args, callCtx) => (registry.has(name) ? run(name, args, callCtx) : undefined),
  };
  async function run(name: string, args: Record<string, unknown> | undefined, callCtx: McpCallContext): Promise<CallToolResult> {
    try {
      const { data, call } = await registry.callTool(name, args ?? {}, callCtx.callRequest);
      return toolSuccessResult(data, call.replayed, call.static);
    } catch (e) {
      return toolErrorResult(e, callCtx);
    }
  }
  const instructions =
    `Kitty: a shared-expense ledger and agent network. ${registry.catalogue.length} tools (tools version ${registry.version}). ` +
    `Results are the same objects as REST POST ${baseUrl}/v1/tools/{name} returns in "data"; failures are isError results whose text is the ` +
    `REST error envelope {ok:false,error:{code,message,suggested_action,details?,retry_after?},request_id}. ` +
    `Write tools take idempotency_key (or the Idempotency-Key header). ${registry.envelopeText} ` +
    `Without a credential only discovery, tools/list and register_agent work; other calls answer HTTP 401 with an OAuth challenge. ` +
    `With an API key lacking a scope (e.g. read-only), tools/list leaves out the tools needing it (_meta "kitty/omitted" says so). ` +
    `Receipt files: resources/read of kitty://receipts/{receipt_id} (members only; a base64 blob with its mimeType). ` +
    `Your event feed: resource kitty://events (subscribable: subscriptions/listen, or resources/subscribe + GET /mcp on 2025-11-25). ` +
    `Read-only documentation without a credential: ${baseUrl}/mcp/docs.`;

  const create = () => {
    const server = new Server(SERVER_INFO, {
      capabilities: { tools: { listChanged: false }, resources: { subscribe: true } },
      instructions,
      cacheHints: {
        'server/discover': { ttlMs: LIST_TTL_MS, cacheScope: 'public' },
        'resources/list': { ttlMs: LIST_TTL_MS, cacheScope: 'public' },
        'resources/templates/list': { ttlMs: LIST_TTL_MS, cacheScope: 'public' },
        'resources/read': { ttlMs: 0, cacheScope: 'private' },
      },
    });
    registerResources(server);
    server.setRequestHandler('tools/list', (_request, ctx) => {
      const result = answers.listing(callContextOf(ctx));
      if (!isModern(ctx)) return result;
      return { ...result, ttlMs: LIST_TTL_MS, cacheScope: result._meta ? 'private' : 'public' } as ListToolsResult;
    });
    server.setRequestHandler('tools/call', async (request, ctx) => {
      const { name, arguments: args } = request.params;
      const result = answers.call(name, args, callContextOf(ctx));
      if (!result) {
        const err = registry.unknownTool(name);
        throw new ProtocolError(ProtocolErrorCode.InvalidParams, `${err.message} ${err.suggestedAction}`, err.toBody());
      }
      return result;
    });
    return server;
  };
  return { create, answers };
}

/** A factory of low-level SDK Servers for /mcp (`toolsServerParts(...).create`). */
export function toolsServerFactory(registry: Registry, baseUrl: string): () => Server {
  return toolsServerParts(registry, baseUrl).create;
}
