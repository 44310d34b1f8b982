/**
 * Serving one MCP message over HTTP in either protocol era, on pooled SDK Servers.
 *
 * - `routeMessage` classifies a POST with the SDK's own `classifyInboundRequest`: a message in the
 *   2026-07-28 per-request envelope (`_meta["io.modelcontextprotocol/protocolVersion"]`) is
 *   "modern", anything else (initialize, 2025-era calls) "legacy"; the SDK's ladder refusals
 *   (e.g. -32020 when `Mcp-Method`/`Mcp-Name` disagree with the body) are answered as it says.
 *   Legacy messages get the same header rule here (the SDK checks the headers only on modern
 *   messages), and an `MCP-Protocol-Version` header naming no known revision is -32022.
 * - `McpEndpoint.serve` runs a modern message through the SDK's `createMcpHandler` (strict:
 *   `legacy: 'reject'`), whose factory hands out pooled Servers, so the SDK itself does the
 *   2026-07-28 work (envelope, `server/discover`, client info and capabilities from `_meta`,
 *   `resultType`, cache hints, -32022); a legacy message through a stateless web-standard
 *   transport with JSON responses (`enableJsonResponse`: `initialize` answers JSON, never SSE —
 *   the SDK's own stateless fallback would stream it) on a Server from a second pool.
 */
import {
  classifyInboundRequest,
  createMcpHandler,
  SUPPORTED_PROTOCOL_VERSIONS,
  UnsupportedProtocolVersionError,
  WebStandardStreamableHTTPServerTransport,
  type AuthInfo,
  type McpHttpHandler,
  type Server,
} from '@modelcontextprotocol/server';
import { ServerPool } from './pool.ts';

/** The revision the modern leg serves (the SDK's entry answers anything else with -32022). */
export const MODERN_PROTOCOL_VERSION = '2026-07-28';

/** JSON-RPC error code for headers that disagree with the body (MCP 2026-07-28). */
export const HEADER_MISMATCH = -32020;

interface JsonRpcErrorBody {
  jsonrpc: '2.0';
  id: string | number | null;
  error: { code: number; message: string; data?: unknown };
}

export type Routed =
  | { kind: 'reject'; status: number; body: JsonRpcErrorBody }
  | { kind: 'modern' | 'legacy'; message: { method?: unknown; params?: unknown } };

type HeaderGetter = (name: string) => string | undefined;

function idOf(body: unknown): string | number | null {
  const id = (body as { id?: unknown } | null)?.id;
  return typeof id === 'string' || typeof id === 'number' ? id : null;
}

function rejection(status: number, body: unknown, code: number, message: string, data?: unknown): Routed {
  return {
    kind: 'reject',
    status,
    body: { jsonrpc: '2.0', id: idOf(body), error: { code, message, ...(data !== undefined ? { data } : {}) } },
  };
}

/** The value `Mcp-Name` must equal for a method, if the method names something. */
function nameOf(method: unknown, params: unknown): string | undefined {
  const p = (params ?? {}) as { name?: unknown; uri?: unknown };
  if (method === 'tools/call' || method === 'prompts/get') return typeof p.name === 'string' ? p.name : undefined;
  if (method === 'resources/read') return typeof p.uri === 'string' ? p.uri : undefined;
  return undefined;
}

/**
 * Classifies one parsed JSON-RPC message (an object, not a batch).
 * @param header reads a request header (lower-case name)
 */
export function routeMessage(header: HeaderGetter, body: Record<string, unknown>): Routed {
  const outcome = classifyInboundRequest({
    httpMethod: 'POST',
    protocolVersionHeader: header('mcp-protocol-version'),
    mcpMethodHeader: header('mcp-method'),
    mcpNameHeader: header('mcp-name'),
    body,
  });
  if (outcome.kind === 'reject') return rejection(outcome.httpStatus, body, outcome.code, outcome.message, outcome.data);
  if (outcome.kind === 'modern') return { kind: 'modern', message: body };
  const methodHeader = header('mcp-method');
  if (methodHeader !== undefined && methodHeader !== body.method) {
    return rejection(
      400,
      body,
      HEADER_MISMATCH,
      `Bad Request: the request headers and body disagree: the body names method ${String(body.method)} but the Mcp-Method header names ${methodHeader}`,
      { mismatch: { header: methodHeader, body: body.method ?? null } },
    );
  }
  const nameHeader = header('mcp-name');
  const name = nameOf(body.method, body.params);
  if (nameHeader !== undefined && nameHeader !== name) {
    return rejection(
      400,
      body,
      HEADER_MISMATCH,
      `Bad Request: the request headers and body disagree: the body names ${name === undefined ? 'nothing' : name} but the Mcp-Name header names ${nameHeader}`,
      { mismatch: { header: nameHeader, body: name ?? null } },
    );
  }
  const version = header('mcp-protocol-version');
  if (version !== undefined && version !== MODERN_PROTOCOL_VERSION && !SUPPORTED_PROTOCOL_VERSIONS.includes(version)) {
    const e = new UnsupportedProtocolVersionError({
      supported: [MODERN_PROTOCOL_VERSION, ...SUPPORTED_PROTOCOL_VERSIONS],
      requested: version,
    });
    return rejection(400, body, e.code, e.message, e.data);
  }
  return { kind: 'legacy', message: body };
}

/** One MCP endpoint (a Server factory) served in both eras from two pools. */
export class McpEndpoint {
  private readonly legacyPool: ServerPool;
  private readonly modern: McpHttpHandler;

  /**
   * @param create  builds a Server with its handlers (called only when a pool is empty)
   * @param reuse   false builds a Server per request (benchmarks)
   * @param onerror the SDK's reports of refused or failed exchanges (the answer already says so)
   */
  constructor(create: () => Server, reuse: boolean, onerror: (e: Error) => void) {
    this.legacyPool = new ServerPool(create, reuse);
    const modernPool = new ServerPool(create, reuse);
    this.modern = createMcpHandler(() => modernPool.acquire(), { legacy: 'reject', onerror });
  }

  /** Answers one routed message. `request` carries the headers; `body` is the parsed message. */
  async serve(kind: 'modern' | 'legacy', request: Request, body: unknown, authInfo: AuthInfo): Promise<Response> {
    if (kind === 'modern') return this.modern.fetch(request, { parsedBody: body, authInfo });
    const server = this.legacyPool.acquire();
    const transport = new WebStandardStreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true });
    try {
      await server.connect(transport);
      return await transport.handleRequest(request, { parsedBody: body, authInfo });
    } finally {
      // JSON responses are complete when handleRequest resolves; closing returns the Server to its pool.
      await transport.close();
    }
  }

  async close(): Promise<void> {
    await this.modern.close();
  }
}
