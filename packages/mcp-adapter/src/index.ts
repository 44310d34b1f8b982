/**
 * MCP projection of the registry over Streamable HTTP (MCP 2025-11-25), stateless:
 * - `/mcp`: every registry tool; needs a credential (the server's onRequest hook authenticates
 *   the bearer; without one → HTTP 401 + `WWW-Authenticate` + the JSON error envelope);
 * - `/mcp/docs`: read-only documentation server (list_tools, describe_tool, search_docs and
 *   kitty://docs/* resources), no credential.
 *
 * Both answer POST with JSON (`enableJsonResponse`), never open SSE streams, keep no session
 * (no `Mcp-Session-Id`) and refuse GET/DELETE with 405. Host/Origin are checked against
 * loopback, the base URL's host and `allowedHosts` (403 otherwise: DNS-rebinding protection).
 *
 * Each POST gets a fresh SDK transport (the SDK forbids reusing a stateless transport);
 * the low-level `Server` objects are kept in a pool and reconnected (see pool.ts), which
 * removes the per-request Server construction that STACK-NOTES measured as the cost.
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { WebStandardStreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js';
import type { Server } from '@modelcontextprotocol/sdk/server/index.js';
import type { AuthInfo as McpAuthInfo } from '@modelcontextprotocol/sdk/server/auth/types.js';
import { ToolError, type Registry, type CallRequest } from '@kitty/core';
import { hostGuard } from './guard.ts';
import { ServerPool } from './pool.ts';
import { toolsServerFactory, CONTEXT_KEY, type McpCallContext } from './tools-server.ts';
import { docsServerFactory } from './docs.ts';

export { hostGuard, LOOPBACK_HOSTS } from './guard.ts';
export { toMcpTool, toolsServerFactory, toolErrorResult, toolSuccessResult } from './tools-server.ts';
export { docsServerFactory, buildDocs, type DocPage } from './docs.ts';
export { ServerPool } from './pool.ts';

export interface McpAdapterOptions {
  registry: Registry;
  /** Builds the registry call request (services, auth, request id) for an HTTP request. */
  callRequest(req: FastifyRequest): CallRequest;
  baseUrl: string;
  /** Extra Host header values accepted besides localhost/127.0.0.1/[::1] and the base URL's host. */
  allowedHosts: string[];
  /** Value of the WWW-Authenticate header for 401 on /mcp. */
  wwwAuthenticate: string;
  /**
   * Reuse connected-and-released low-level Servers across requests (default true).
   * false builds a Server per request (kept for benchmarks: see the README design notes).
   */
  reuseServers?: boolean;
}

function header(req: FastifyRequest, name: string): string | undefined {
  const v = req.headers[name];
  return Array.isArray(v) ? v[0] : v;
}

/**
 * Registers `POST|GET|DELETE /mcp` and `/mcp/docs` on `app`.
 * Errors before the MCP transport takes over are thrown as ToolError and leave through the
 * server's error handler as the JSON error envelope: FORBIDDEN 403 (Host/Origin refused),
 * UNAUTHENTICATED 401 (/mcp without credential; `WWW-Authenticate: opts.wwwAuthenticate`),
 * METHOD_NOT_ALLOWED 405 (GET/DELETE: stateless server, no SSE stream, no session),
 * VALIDATION_ERROR 400 (empty body). Everything after is JSON-RPC as the MCP spec says.
 */
export async function registerMcpRoutes(app: FastifyInstance, opts: McpAdapterOptions): Promise<void> {
  const guard = hostGuard(opts.baseUrl, opts.allowedHosts);
  const reuse = opts.reuseServers ?? process.env.TMP_MCP_REUSE !== '0'; // TMP-BENCH
  const toolsPool = new ServerPool(toolsServerFactory(opts.registry, opts.baseUrl), reuse);
  const docsPool = new ServerPool(docsServerFactory(opts.registry, opts.baseUrl), reuse);

  const checkOrigin = (req: FastifyRequest) => {
    const refused = guard(header(req, 'host'), header(req, 'origin'));
    if (refused) {
      throw new ToolError('FORBIDDEN', refused, {
        suggestedAction: 'Connect through the server\'s own address (its base URL or localhost); an operator can add a host to KITTY_ALLOWED_HOSTS.',
        details: { reason: 'dns_rebinding_protection' },
      });
    }
  };

  const serve = async (pool: ServerPool, req: FastifyRequest, reply: FastifyReply, auth: McpAuthInfo) => {
    if (req.body === undefined) {
      throw new ToolError('VALIDATION_ERROR', 'POST a JSON-RPC message as the body.', {
        details: { issues: [{ path: '(root)', message: 'body required', code: 'required' }] },
      });
    }
    if (process.env.TMP_MCP_MODE === 'web') return serveWeb(pool, req, reply, auth); // TMP-BENCH
    const server = pool.acquire();
    const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true });
    let released = false;
    const release = () => {
      if (released) return;
      released = true;
      void transport.close().finally(() => pool.release(server));
    };
    try {
      await server.connect(transport);
    } catch (e) {
      pool.discard(server);
      throw e;
    }
    reply.hijack();
    const res = reply.raw;
    // Headers the hooks set on the Fastify reply (X-Request-Id, RateLimit*) are not sent after hijack.
    for (const [k, v] of Object.entries(reply.getHeaders())) if (v !== undefined) res.setHeader(k, v as string | number | string[]);
    res.on('close', release);
    try {
      await transport.handleRequest(Object.assign(req.raw, { auth }), res, req.body);
    } catch (e) {
      req.log.error({ err: e }, 'mcp transport error');
      if (!res.headersSent) {
        res.writeHead(500, { 'Content-Type': 'application/json' }).end(JSON.stringify({ jsonrpc: '2.0', error: { code: -32603, message: 'Internal error' }, id: null }));
      } else res.end();
      release();
    }
  };

  const serveWeb = async (pool: ServerPool, req: FastifyRequest, reply: FastifyReply, auth: McpAuthInfo) => { // TMP-BENCH
    const server = pool.acquire();
    const transport = new WebStandardStreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true });
    await server.connect(transport);
    try {
      const headers = new Headers();
      for (const [k, v] of Object.entries(req.headers)) if (typeof v === 'string') headers.set(k, v);
      const response = await transport.handleRequest(new Request(`http://${req.headers.host ?? 'localhost'}${req.url}`, { method: 'POST', headers }), { authInfo: auth, parsedBody: req.body });
      reply.code(response.status);
      response.headers.forEach((v, k) => void reply.header(k, v));
      return reply.send(await response.text());
    } finally {
      await transport.close();
      pool.release(server);
    }
  };

  const context = (req: FastifyRequest): McpCallContext => ({
    callRequest: { ...opts.callRequest(req), idempotencyKeyHeader: header(req, 'idempotency-key') },
    logError: (obj, msg) => req.log.error(obj, msg),
  });

  const notAllowed = (req: FastifyRequest, reply: FastifyReply) => {
    checkOrigin(req);
    reply.header('Allow', 'POST');
    throw new ToolError('METHOD_NOT_ALLOWED', `${req.method} is not supported: this MCP server is stateless (no SSE stream, no session); POST JSON-RPC messages.`, {
      suggestedAction: 'Send MCP messages with POST.',
    });
  };

  app.post('/mcp', async (req, reply) => {
    checkOrigin(req);
    const r = context(req);
    const agent = r.callRequest.auth;
    if (!agent) {
      reply.header('WWW-Authenticate', opts.wwwAuthenticate);
      throw new ToolError('UNAUTHENTICATED', 'The MCP endpoint needs a credential: send "Authorization: Bearer <api key>".', {
        suggestedAction: `Register with POST ${opts.baseUrl}/v1/agents to get an API key, or use OAuth (see the WWW-Authenticate header). Documentation without a credential: ${opts.baseUrl}/mcp/docs.`,
      });
    }
    await serve(toolsPool, req, reply, { token: '', clientId: agent.agentId, scopes: agent.scopes, extra: { [CONTEXT_KEY]: r } });
  });
  app.post('/mcp/docs', async (req, reply) => {
    checkOrigin(req);
    await serve(docsPool, req, reply, { token: '', clientId: 'anonymous', scopes: [], extra: { [CONTEXT_KEY]: context(req) } });
  });
  for (const path of ['/mcp', '/mcp/docs']) {
    app.get(path, notAllowed);
    app.delete(path, notAllowed);
  }
}

export type { Server };
