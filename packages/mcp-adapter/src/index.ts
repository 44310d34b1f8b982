/**
 * MCP projection of the registry over Streamable HTTP, protocol 2026-07-28 and 2025-11-25 on the
 * same URLs, stateless:
 * - `/mcp`: every registry tool. Without a credential only discovery (`server/discover`,
 *   `initialize`, notifications), `tools/list` and the tools that need no credential
 *   (register_agent) run; anything else answers HTTP 401 + `WWW-Authenticate` naming /mcp's
 *   protected-resource metadata (RFC 9728) + the JSON error envelope, so OAuth clients start their flow;
 * - `/mcp/docs`: read-only documentation server (list_tools, describe_tool, search_docs and
 *   kitty://docs/* resources), no credential: its routes carry `config.ignoresBearer`, so the
 *   server does not read a (stale or foreign) bearer there.
 *
 * The routes live in their own encapsulated Fastify plugin with its own error handler: errors on
 * them become Kitty's error envelope (the server's `errorEnvelope`), transport-level refusals (bad
 * JSON, 413, …) a JSON-RPC error (`toMcpErrorBody`).
 *
 * Both answer POST with JSON, keep no session, refuse JSON-RPC batches and DELETE (405). Only event
 * notifications are SSE (event-streams.ts): `subscriptions/listen`, GET /mcp with a credential
 * (other GETs: 405). Host/Origin are checked against loopback, the base URL's host and `allowedHosts`.
 *
 * Each message is classified and served by `McpEndpoint` (dispatch.ts) on pooled SDK Servers
 * (pool.ts): no Server is built per request. The Fastify request (headers + the already-parsed
 * body) becomes a fetch `Request`; the SDK's `Response` is sent through the Fastify reply, so the
 * server's hooks (X-Request-Id, RateLimit headers, logging) apply as on REST. A W3C `traceparent`
 * in the message's `_meta` is added to the request's log lines.
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { AuthInfo as McpAuthInfo } from '@modelcontextprotocol/server';
import { ToolError, type Registry, type CallRequest, type ErrorEnvelope } from '@kitty/core';
import { hostGuard } from './guard.ts';
import { McpEndpoint, routeMessage } from './dispatch.ts';
import { toolsServerParts, CONTEXT_KEY, type McpCallContext } from './tools-server.ts';
import { docsServerFactory } from './docs/server.ts';
import { mcpBodyLimits } from './body-limit.ts';
import { toMcpErrorBody } from './wire-errors.ts';
import { EventStreams } from './event-streams.ts';

export { hostGuard, LOOPBACK_HOSTS } from './guard.ts';
export { toMcpTool, toolsServerFactory, toolErrorResult, toolSuccessResult } from './tools-server.ts';
export { docsServerFactory } from './docs/server.ts';
export { isMcpPath, toMcpErrorBody } from './wire-errors.ts';
export { buildDocs, type DocPage } from './docs/pages.ts';
export { ServerPool } from './pool.ts';
export { routeMessage, McpEndpoint, MODERN_PROTOCOL_VERSION, HEADER_MISMATCH } from './dispatch.ts';

declare module 'fastify' {
  interface FastifyContextConfig {
    /** The route takes no credential: the server must not read (or refuse) an Authorization header on it. */
    ignoresBearer?: boolean;
  }
}

export interface McpAdapterOptions {
  registry: Registry;
  /** Builds the registry call request (services, auth, request id) for an HTTP request. */
  callRequest(req: FastifyRequest): CallRequest;
  baseUrl: string;
  /** Extra Host header values accepted besides localhost/127.0.0.1/[::1] and the base URL's host. */
  allowedHosts: string[];
  /** Web origins of browser-based clients accepted in the Origin header besides allowed hosts (KITTY_ALLOWED_ORIGINS). */
  allowedOrigins?: string[];
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
  /** Body limits (bytes) of tools that need more than the server's default on a tools/call, e.g. attach_receipt's base64 file. */
  toolBodyLimits?: Record<string, number>;
  /** Event subscriptions (listen, GET streams) open per credential on this instance (default 5); keep-alive (ms). */
  eventStreams?: { maxPerCredential?: number | undefined; keepAliveMs?: number | undefined };
  /**
   * Sends a large JSON answer that is the same for many requests but for its tail (tools/list: the listing,
   * then the JSON-RPC id): `head` is the same string each time. The server may compress the head once.
   * Default: `reply.send(head + tail)`.
   */
  sendPrecomputed?(req: FastifyRequest, reply: FastifyReply, head: string, tail: string): FastifyReply;
}

function header(req: FastifyRequest, name: string): string | undefined {
  const v = req.headers[name];
  return Array.isArray(v) ? v[0] : v;
}

/** The request headers the SDK's modern entry reads. */
const SDK_HEADERS = ['content-type', 'accept', 'mcp-protocol-version', 'mcp-method', 'mcp-name'];

/** Methods that run without a credential on /mcp (discovery and the listing); notifications too. */
const ANONYMOUS_METHODS = new Set(['initialize', 'server/discover', 'tools/list']);

/** A W3C trace context `traceparent` (version-traceid-parentid-flags); anything else is not logged. */
const TRACEPARENT = /^[0-9a-f]{2}-[0-9a-f]{32}-[0-9a-f]{16}-[0-9a-f]{2}$/;

/**
 * Registers `POST|GET|DELETE /mcp` and `/mcp/docs` on `app`, in an encapsulated plugin.
 * Errors before the MCP transport takes over are thrown as ToolError and leave through the
 * plugin's error handler as the JSON error envelope: FORBIDDEN 403 (Host/Origin refused),
 * UNAUTHENTICATED 401 (/mcp, a call that needs a credential without one; `WWW-Authenticate`
 * naming /mcp's metadata), METHOD_NOT_ALLOWED 405 (DELETE; GET but the event stream), 400 (empty
 * body). A JSON array body (a JSON-RPC batch) is refused whole with HTTP 400 and JSON-RPC error
 * -32600 before anything runs. Everything after is JSON-RPC as the MCP spec says.
 */
export async function registerMcpRoutes(parent: FastifyInstance, opts: McpAdapterOptions): Promise<void> {
  await parent.register(async (app) => mcpRoutes(app, opts));
}

async function mcpRoutes(app: FastifyInstance, opts: McpAdapterOptions): Promise<void> {
  app.setErrorHandler((err, req, reply) => {
    const { status, body } = opts.errorEnvelope(err, req, reply);
    return reply.code(status).send(toMcpErrorBody(body));
  });
  const limits = mcpBodyLimits(
    app.initialConfig.bodyLimit ?? 1024 * 1024,
    opts.toolBodyLimits ?? {},
    (req) => !!opts.callRequest(req).auth,
  );
  const guard = hostGuard(opts.baseUrl, opts.allowedHosts, opts.allowedOrigins);
  const reuse = opts.reuseServers ?? true;
  const onerror = (e: Error) => app.log.debug({ err: e }, 'mcp exchange refused or failed');
  const { create: toolsServer, answers } = toolsServerParts(opts.registry, opts.baseUrl);
  const tools = new McpEndpoint(toolsServer, reuse, onerror, answers);
  const docs = new McpEndpoint(docsServerFactory(opts.registry, opts.baseUrl), reuse, onerror);
  const streams = new EventStreams(toolsServer, { maxPerCredential: 5, ...opts.eventStreams, onerror });
  app.addHook('preClose', async () => streams.close());
  app.addHook('onClose', async () => void (await Promise.all([tools.close(), docs.close()])));

  const checkOrigin = (req: FastifyRequest) => {
    const refused = guard(header(req, 'host'), header(req, 'origin'));
    if (refused)
      throw new ToolError('FORBIDDEN', refused, {
        suggestedAction:
          "Connect through the server's own address (its base URL or localhost); an operator can add a host to KITTY_ALLOWED_HOSTS.",
        details: { reason: 'dns_rebinding_protection' },
      });
  };

  /** The one JSON-RPC message of the body: refuses an empty body and batches. */
  const messageOf = (req: FastifyRequest): Record<string, unknown> | 'batch' => {
    if (req.body === undefined)
      throw new ToolError('VALIDATION_ERROR', 'POST a JSON-RPC message as the body.', {
        details: { issues: [{ path: '(root)', message: 'body required', code: 'required' }] },
      });
    if (Array.isArray(req.body)) return 'batch';
    return (req.body !== null && typeof req.body === 'object' ? req.body : {}) as Record<string, unknown>;
  };

  /** Adds a valid W3C traceparent from the message's `_meta` to this request's log lines. */
  const traceLog = (req: FastifyRequest, reply: FastifyReply, message: Record<string, unknown>) => {
    const traceparent = ((message.params as { _meta?: { traceparent?: unknown } } | undefined)?._meta ?? {}).traceparent;
    if (typeof traceparent !== 'string' || !TRACEPARENT.test(traceparent)) return;
    req.log = req.log.child({ traceparent });
    reply.log = req.log;
  };

  /**
   * Runs one POST: classifies it, serves it on a pooled Server, and sends the SDK's Response
   * through Fastify (so the hooks' headers, logging and error handler apply).
   * @param needsIdentity whether this message needs a credential (401 when there is none)
   */
  const serve = async (
    endpoint: McpEndpoint,
    req: FastifyRequest,
    reply: FastifyReply,
    needsIdentity: (message: Record<string, unknown>) => boolean,
  ) => {
    const message = messageOf(req);
    // JSON-RPC batches would run N calls for one HTTP request (one rate-limit point): refuse the whole array, run nothing.
    if (message === 'batch') {
      return reply.code(400).send({
        jsonrpc: '2.0',
        id: null,
        error: { code: -32600, message: 'Invalid Request: JSON-RPC batches are not supported; send one message per HTTP request.' },
      });
    }
    limits.check(req, message);
    const routed = routeMessage((name) => header(req, name), message);
    if (routed.kind === 'reject') return reply.code(routed.status).send(routed.body);
    const r = context(req);
    const agent = r.callRequest.auth;
    if (!agent && needsIdentity(message)) {
      throw new ToolError('UNAUTHENTICATED', 'This call needs a credential: send "Authorization: Bearer <api key>".', {
        suggestedAction: `Without a credential /mcp answers discovery, tools/list and register_agent: register to get an API key, or use OAuth (see the WWW-Authenticate header). Documentation without a credential: ${opts.baseUrl}/mcp/docs.`,
      });
    }
    traceLog(req, reply, message);
    const auth: McpAuthInfo = {
      token: '',
      clientId: agent?.agentId ?? 'anonymous',
      scopes: agent?.scopes ?? [],
      extra: { [CONTEXT_KEY]: r },
    };
    const answer =
      endpoint === tools && routed.kind === 'modern' && message.method === 'subscriptions/listen'
        ? await streams.listen(req, reply, message, (signal) => fetchRequest(req, signal), auth, r)
        : await endpoint.serve(routed, () => fetchRequest(req), auth);
    if (!answer) return reply; // an event stream: sent on the raw response
    reply.code(answer.status);
    for (const [k, v] of answer.headers) reply.header(k, v);
    const scope = r.insufficientScope;
    if (scope && answer.status === 200) {
      // RFC 6750 §3.1 / MCP authorization "scope challenge": 403 + insufficient_scope lets an OAuth client step up.
      // The body is still the JSON-RPC response whose isError result carries FORBIDDEN with details.required_scope.
      reply.code(403);
      // The scope named is what the call needs plus what the token already has, so stepping up loses nothing.
      // An OAuth app keeps its refresh token too (offline_access).
      const oauth = agent?.credential === 'oauth';
      const wanted = [...new Set([...auth.scopes, scope, ...(oauth ? ['offline_access'] : [])])].join(' ');
      reply.header('WWW-Authenticate', opts.scopeChallenge(wanted));
    }
    if (answer.precomputed) {
      const { head, tail } = answer.precomputed;
      return opts.sendPrecomputed ? opts.sendPrecomputed(req, reply, head, tail) : reply.send(head + tail);
    }
    return reply.send(answer.body ?? undefined);
  };

  /**
   * The request as the SDK's modern entry reads it: method, URL and the MCP headers (the body is
   * passed parsed; authentication was done by the server). Only these headers: building a fetch
   * Request is a visible part of a call's cost.
   */
  const fetchRequest = (req: FastifyRequest, signal?: AbortSignal): Request => {
    const headers: Record<string, string> = {};
    for (const name of SDK_HEADERS) {
      const v = header(req, name);
      if (v !== undefined) headers[name] = v;
    }
    return new Request(`${opts.baseUrl}${req.url}`, { method: 'POST', headers, ...(signal ? { signal } : {}) });
  };

  const context = (req: FastifyRequest): McpCallContext => ({
    callRequest: { ...opts.callRequest(req), idempotencyKeyHeader: header(req, 'idempotency-key') },
    logError: (obj, msg) => req.log.error(obj, msg),
  });

  /** /mcp without a credential: discovery, notifications, tools/list and the tools that need no credential. */
  const toolsNeedIdentity = (message: Record<string, unknown>): boolean => {
    const method = message.method;
    if (typeof method !== 'string') return true;
    if (ANONYMOUS_METHODS.has(method) || method.startsWith('notifications/')) return false;
    if (method !== 'tools/call') return true;
    const name = (message.params as { name?: unknown } | undefined)?.name;
    return typeof name !== 'string' || opts.registry.tools.get(name)?.auth !== 'none';
  };

  const notAllowed = (req: FastifyRequest, reply: FastifyReply) => {
    checkOrigin(req);
    reply.header('Allow', 'POST');
    throw new ToolError(
      'METHOD_NOT_ALLOWED',
      `${req.method} is not supported here: this MCP server keeps no session; POST JSON-RPC messages (GET /mcp with a credential streams event notifications).`,
      {
        suggestedAction: 'Send MCP messages with POST.',
      },
    );
  };

  app.post('/mcp', { bodyLimit: limits.routeLimit, preParsing: limits.preParsing }, async (req, reply) => {
    checkOrigin(req);
    return serve(tools, req, reply, toolsNeedIdentity);
  });
  app.post('/mcp/docs', { config: { ignoresBearer: true } }, async (req, reply) => {
    checkOrigin(req);
    return serve(docs, req, reply, () => false);
  });
  app.get('/mcp', async (req, reply) => {
    const r = context(req); // 2025-11-25 standalone SSE stream: event notifications for a caller with a credential
    if (!r.callRequest.auth || !header(req, 'accept')?.includes('text/event-stream')) return notAllowed(req, reply);
    checkOrigin(req);
    return streams.stream(req, reply, r);
  });
  app.get('/mcp/docs', { config: { ignoresBearer: true } }, notAllowed);
  for (const path of ['/mcp', '/mcp/docs']) app.delete(path, { config: { ignoresBearer: path === '/mcp/docs' } }, notAllowed);
}
