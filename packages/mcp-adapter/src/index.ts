/**
 * MCP projection of the registry over Streamable HTTP (MCP 2025-11-25), stateless:
 * - `/mcp`: every registry tool; needs a credential (the server's onRequest hook authenticates
 *   the bearer; without one → HTTP 401 + `WWW-Authenticate` + the JSON error envelope);
 * - `/mcp/docs`: read-only documentation server (list_tools, describe_tool, search_docs and
 *   kitty://docs/* resources), no credential: its routes carry `config.ignoresBearer`, so the
 *   server does not read a (stale or foreign) bearer there.
 *
 * The routes live in their own encapsulated Fastify plugin with its own error handler: errors on
 * them become Kitty's error envelope (the server's `errorEnvelope`), transport-level refusals (bad
 * JSON, 413, …) a JSON-RPC error (`jsonRpcTransportError`), and a 401 names /mcp's protected-resource
 * metadata in `WWW-Authenticate` (RFC 9728).
 *
 * Both answer POST with JSON (`enableJsonResponse`), never open SSE streams, keep no session
 * (no `Mcp-Session-Id`) and refuse GET/DELETE with 405. Host/Origin are checked against
 * loopback, the base URL's host and `allowedHosts` (403 otherwise: DNS-rebinding protection).
 *
 * Each POST gets a fresh web-standard SDK transport (the SDK forbids reusing a stateless
 * transport); the low-level `Server`s are pooled and reconnected (pool.ts), which removes the
 * per-request Server construction STACK-NOTES measured as the cost. The Fastify request
 * (headers + the already-parsed body) becomes a fetch `Request`; the SDK's `Response` is sent
 * through the Fastify reply, so no `reply.hijack()` is needed and the server's hooks
 * (X-Request-Id, RateLimit headers, logging) apply as on REST. Measured (server CPU per
 * request, `ping`): Node transport + Server per request ≈ 330 µs, + pool ≈ 220 µs,
 * web-standard transport + pool ≈ 160 µs; REST /health ≈ 30 µs.
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { Readable } from 'node:stream';
import { WebStandardStreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js';
import type { Server } from '@modelcontextprotocol/sdk/server/index.js';
import type { AuthInfo as McpAuthInfo } from '@modelcontextprotocol/sdk/server/auth/types.js';
import { ToolError, type Registry, type CallRequest, type ErrorEnvelope } from '@kitty/core';
import { hostGuard } from './guard.ts';
import { ServerPool } from './pool.ts';
import { toolsServerFactory, CONTEXT_KEY, type McpCallContext } from './tools-server.ts';
import { docsServerFactory } from './docs/server.ts';

export { hostGuard, LOOPBACK_HOSTS } from './guard.ts';
export { toMcpTool, toolsServerFactory, toolErrorResult, toolSuccessResult } from './tools-server.ts';
export { docsServerFactory } from './docs/server.ts';
export { buildDocs, type DocPage } from './docs/pages.ts';
export { ServerPool } from './pool.ts';

declare module 'fastify' {
  interface FastifyContextConfig {
    /** The route takes no credential: the server must not read (or refuse) an Authorization header on it. */
    ignoresBearer?: boolean;
  }
}

/** Error codes that mean "the HTTP message itself was refused": on MCP paths they become JSON-RPC errors. */
const TRANSPORT_CODES = new Set([
  'BAD_REQUEST',
  'REQUEST_TIMEOUT',
  'PAYLOAD_TOO_LARGE',
  'URI_TOO_LONG',
  'UNSUPPORTED_MEDIA_TYPE',
  'HEADERS_TOO_LARGE',
]);

/** True for /mcp, /mcp/docs and anything below them (for refusals made before routing, e.g. by Node's HTTP parser). */
export function isMcpPath(url: string): boolean {
  return /^\/mcp(?:[/?#]|$)/.test(url);
}

/**
 * The JSON-RPC form of a transport-level refusal on MCP paths: -32700 Parse error for bad JSON
 * (details.issues[0].code "invalid_json"), -32600 Invalid Request for the codes in TRANSPORT_CODES,
 * with the envelope as `error.data` (JSON-RPC 2.0 §5.1). Any other envelope (401, 403, 404, 405,
 * 429, …) is returned unchanged: MCP clients read those from the HTTP status.
 */
export function toMcpErrorBody(envelope: ErrorEnvelope): unknown {
  const invalidJson = (envelope.error.details?.issues as Array<{ code?: string }> | undefined)?.[0]?.code === 'invalid_json';
  if (!invalidJson && !TRANSPORT_CODES.has(envelope.error.code)) return envelope;
  const code = invalidJson ? -32700 : -32600;
  const message = `${invalidJson ? 'Parse error' : 'Invalid Request'}: ${envelope.error.message}`;
  return { jsonrpc: '2.0', id: null, error: { code, message, data: envelope } };
}

export interface McpAdapterOptions {
  registry: Registry;
  /** Builds the registry call request (services, auth, request id) for an HTTP request. */
  callRequest(req: FastifyRequest): CallRequest;
  baseUrl: string;
  /** Extra Host header values accepted besides localhost/127.0.0.1/[::1] and the base URL's host. */
  allowedHosts: string[];
  /**
   * Any error thrown on these routes (or by the server's hooks for them) → Kitty's error envelope
   * and its HTTP status; also sets the generic headers (Retry-After) and logs internal errors.
   */
  errorEnvelope(err: unknown, req: FastifyRequest, reply: FastifyReply): { status: number; body: ErrorEnvelope };
  /**
   * The WWW-Authenticate value of a 403 insufficient_scope on /mcp (RFC 6750 §3.1), asking for `scope`
   * (space-separated). The 401 challenge is set by `errorEnvelope`.
   */
  scopeChallenge(scope: string): string;
  /**
   * Reuse connected-and-released low-level Servers across requests (default true).
   * false builds a Server per request (kept for benchmarks: see docs/design-notes.md).
   */
  reuseServers?: boolean;
}

function header(req: FastifyRequest, name: string): string | undefined {
  const v = req.headers[name];
  return Array.isArray(v) ? v[0] : v;
}

/**
 * Registers `POST|GET|DELETE /mcp` and `/mcp/docs` on `app`, in an encapsulated plugin.
 * Errors before the MCP transport takes over are thrown as ToolError and leave through the
 * plugin's error handler as the JSON error envelope: FORBIDDEN 403 (Host/Origin refused),
 * UNAUTHENTICATED 401 (/mcp without credential; `WWW-Authenticate` naming /mcp's metadata),
 * METHOD_NOT_ALLOWED 405 (GET/DELETE: stateless server, no SSE stream, no session),
 * VALIDATION_ERROR 400 (empty body). A JSON array body (a JSON-RPC batch, which MCP 2025-11-25
 * does not have) is refused whole with HTTP 400 and JSON-RPC error -32600 before anything runs.
 * Everything after is JSON-RPC as the MCP spec says.
 */
export async function registerMcpRoutes(parent: FastifyInstance, opts: McpAdapterOptions): Promise<void> {
  await parent.register(async (app) => mcpRoutes(app, opts));
}

async function mcpRoutes(app: FastifyInstance, opts: McpAdapterOptions): Promise<void> {
  app.setErrorHandler((err, req, reply) => {
    const { status, body } = opts.errorEnvelope(err, req, reply);
    return reply.code(status).send(toMcpErrorBody(body));
  });
  const guard = hostGuard(opts.baseUrl, opts.allowedHosts);
  const reuse = opts.reuseServers ?? true;
  const toolsPool = new ServerPool(toolsServerFactory(opts.registry, opts.baseUrl), reuse);
  const docsPool = new ServerPool(docsServerFactory(opts.registry, opts.baseUrl), reuse);

  const checkOrigin = (req: FastifyRequest) => {
    const refused = guard(header(req, 'host'), header(req, 'origin'));
    if (refused) {
      throw new ToolError('FORBIDDEN', refused, {
        suggestedAction:
          "Connect through the server's own address (its base URL or localhost); an operator can add a host to KITTY_ALLOWED_HOSTS.",
        details: { reason: 'dns_rebinding_protection' },
      });
    }
  };

  /**
   * Runs one POST through a fresh stateless SDK transport and a pooled Server, and sends the
   * SDK's Response through Fastify (so the hooks' headers, logging and error handler apply).
   * JSON responses only (enableJsonResponse); an SSE body, should the SDK ever produce one, is streamed.
   */
  const serve = async (pool: ServerPool, req: FastifyRequest, reply: FastifyReply, auth: McpAuthInfo) => {
    if (req.body === undefined) {
      throw new ToolError('VALIDATION_ERROR', 'POST a JSON-RPC message as the body.', {
        details: { issues: [{ path: '(root)', message: 'body required', code: 'required' }] },
      });
    }
    // MCP 2025-11-25 removed JSON-RPC batching. The SDK still accepts arrays, which would run N
    // calls for one HTTP request (one rate-limit point): refuse the whole array, run nothing.
    if (Array.isArray(req.body)) {
      return reply.code(400).send({
        jsonrpc: '2.0',
        id: null,
        error: {
          code: -32600,
          message: 'Invalid Request: JSON-RPC batches are not supported (MCP 2025-11-25); send one message per HTTP request.',
        },
      });
    }
    const headers = new Headers();
    for (const [k, v] of Object.entries(req.headers)) {
      if (typeof v === 'string') headers.set(k, v);
      else if (Array.isArray(v)) for (const x of v) headers.append(k, x);
    }
    const request = new Request(`${opts.baseUrl}${req.url}`, { method: 'POST', headers });
    const server = pool.acquire();
    const transport = new WebStandardStreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true });
    transport.onerror = (e) => req.log.debug({ err: e }, 'mcp transport refused a request');
    let response: Response;
    try {
      await server.connect(transport);
      response = await transport.handleRequest(request, { authInfo: auth, parsedBody: req.body });
    } catch (e) {
      await transport.close().catch(() => {});
      pool.discard(server);
      throw e;
    }
    reply.code(response.status);
    response.headers.forEach((v, k) => void reply.header(k, v));
    const callCtx = auth.extra?.[CONTEXT_KEY] as McpCallContext | undefined;
    const scope = callCtx?.insufficientScope;
    if (scope && response.status === 200) {
      // RFC 6750 §3.1 / MCP authorization "scope challenge": 403 + insufficient_scope lets an OAuth client step up.
      // The body is still the JSON-RPC response whose isError result carries FORBIDDEN with details.required_scope.
      reply.code(403);
      // The scope named is what the call needs plus what the token already has, so stepping up loses nothing.
      // An OAuth app keeps its refresh token too (offline_access).
      const oauth = callCtx?.callRequest.auth?.credential === 'oauth';
      const wanted = [...new Set([...auth.scopes, scope, ...(oauth ? ['offline_access'] : [])])].join(' ');
      reply.header('WWW-Authenticate', opts.scopeChallenge(wanted));
    }
    if (response.body && response.headers.get('content-type')?.startsWith('text/event-stream')) {
      const stream = Readable.fromWeb(response.body as import('node:stream/web').ReadableStream);
      stream.once('close', () => void transport.close().finally(() => pool.release(server)));
      return reply.send(stream);
    }
    const text = await response.text();
    await transport.close();
    pool.release(server);
    return reply.send(text);
  };

  const context = (req: FastifyRequest): McpCallContext => ({
    callRequest: { ...opts.callRequest(req), idempotencyKeyHeader: header(req, 'idempotency-key') },
    logError: (obj, msg) => req.log.error(obj, msg),
  });

  const notAllowed = (req: FastifyRequest, reply: FastifyReply) => {
    checkOrigin(req);
    reply.header('Allow', 'POST');
    throw new ToolError(
      'METHOD_NOT_ALLOWED',
      `${req.method} is not supported: this MCP server is stateless (no SSE stream, no session); POST JSON-RPC messages.`,
      {
        suggestedAction: 'Send MCP messages with POST.',
      },
    );
  };

  app.post('/mcp', async (req, reply) => {
    checkOrigin(req);
    const r = context(req);
    const agent = r.callRequest.auth;
    if (!agent) {
      throw new ToolError('UNAUTHENTICATED', 'The MCP endpoint needs a credential: send "Authorization: Bearer <api key>".', {
        suggestedAction: `Register with POST ${opts.baseUrl}/v1/agents to get an API key, or use OAuth (see the WWW-Authenticate header). Documentation without a credential: ${opts.baseUrl}/mcp/docs.`,
      });
    }
    return serve(toolsPool, req, reply, { token: '', clientId: agent.agentId, scopes: agent.scopes, extra: { [CONTEXT_KEY]: r } });
  });
  app.post('/mcp/docs', { config: { ignoresBearer: true } }, async (req, reply) => {
    checkOrigin(req);
    return serve(docsPool, req, reply, { token: '', clientId: 'anonymous', scopes: [], extra: { [CONTEXT_KEY]: context(req) } });
  });
  for (const path of ['/mcp', '/mcp/docs']) {
    const config = { ignoresBearer: path === '/mcp/docs' };
    app.get(path, { config }, notAllowed);
    app.delete(path, { config }, notAllowed);
  }
}

export type { Server };
