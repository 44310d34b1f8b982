/**
 * The HTTP server: Fastify with Kitty's cross-cutting rules, then the adapters.
 *
 * Request flow (ARCHITECTURE.md): onRequest → request id → bearer authentication → rate limit
 * → route (REST adapter / MCP adapter / metadata) → registry.callTool → tRPC middlewares
 * (scope, idempotency + transaction) → tool handler. Every failure, including framework
 * errors (bad JSON, 413, unknown route), leaves as the envelope: each adapter is an encapsulated
 * plugin with its own error handler (its body shape, its WWW-Authenticate resource, its routes'
 * `config.ignoresBearer`) built on the shared `errorEnvelope`; the server's own error handler
 * serves its own routes and unknown routes.
 */
import { registerEventStream } from './event-stream.ts';
import Fastify, { type FastifyInstance, type FastifyReply, type FastifyRequest } from 'fastify';
import {
  ToolError,
  toErrorEnvelope,
  toToolError,
  inputIssues,
  receiptConfig,
  type AuthInfo,
  type ErrorEnvelope,
  type Registry,
  type Services,
} from '@kitty/core';
import { registerRestRoutes } from '@kitty/rest-adapter';
import { registerMcpRoutes } from '@kitty/mcp-adapter';
import cookie from '@fastify/cookie';
import { rateLimitHeadersOf, type KittyRateLimiter } from './rate-limit.ts';
import { registerMetadataRoutes } from './metadata.ts';
import { clientErrorHandler, frameworkErrorToTool, newRequestId, toWireBody } from './wire-errors.ts';
import { registerAccountRoutes } from '../people/account-routes.ts';
import type { AbuseLimiter, ServerCallRequest } from './abuse-limits.ts';
import { loggerOptions } from '../runtime/logging.ts';
import { registerSecurityHeaders } from './security-headers.ts';
import { precomputedBodies, registerCompression } from './compression.ts';
import { registerPageHostCheck } from './page-host.ts';
import { registerFavicon } from './favicon.ts';
import type { DatabaseHealth } from '../runtime/health.ts';
import { registerOAuthRoutes, type OAuthRouteDeps } from '../oauth/routes.ts';
import { registerSignIn, type SignInDeps } from '../people/routes.ts';
import { resourceOf, wwwAuthenticate } from '../auth/www-authenticate.ts';
import { receiptBodyLimit } from '../runtime/receipts.ts';
import { registerCors } from './cors.ts';

declare module 'fastify' {
  interface FastifyRequest {
    kittyAuth: AuthInfo | null;
  }
  interface FastifyContextConfig {
    /** The route takes no credential: the onRequest hook does not read (or refuse) an Authorization header on it. */
    ignoresBearer?: boolean;
  }
}

export interface AppDeps {
  registry: Registry;
  services: Services;
  /** Bearer-token authentication (API keys and OAuth access tokens: auth/bearer.ts). */
  authenticator: { authenticate(token: string): Promise<AuthInfo> };
  rateLimiter: KittyRateLimiter;
  baseUrl: string;
  /** The base URL was derived from HOST and PORT (no KITTY_BASE_URL): people's pages opened through another host name explain which address to use (page-host.ts). */
  baseUrlDerived?: boolean;
  bodyLimit: number;
  allowedHosts: string[];
  /** Web origins of browser-based MCP clients (KITTY_ALLOWED_ORIGINS), besides loopback: CORS and the /mcp Origin check. */
  allowedOrigins?: string[] | undefined;
  /**
   * Addresses/CIDRs of load balancers in front (KITTY_TRUST_PROXY): a request from one of them is
   * attributed to the address its X-Forwarded-For names (the rightmost one not itself trusted), so
   * per-IP limits count clients, not the balancer. Empty: the socket's peer address.
   */
  trustProxy?: string[] | undefined;
  logLevel: string;
  /** Log file (appended) instead of stdout. */
  logFile?: string | undefined;
  abuseLimiter: AbuseLimiter;
  databaseHealth: DatabaseHealth;
  /** Socket timeouts in milliseconds (config.ts). */
  timeouts: { requestMs: number; headersMs: number; connectionMs: number; keepAliveMs: number };
  /** Person sign-in: the sign-in page, passkeys, OpenID Connect login (its own plugin, with or without OAuth). */
  signIn?: SignInDeps | undefined;
  /** The OAuth authorization server and its consent page (absent with KITTY_OAUTH=off). */
  oauth?: OAuthRouteDeps | undefined;
  /** GET /v1/events: open streams per credential (default 5). */
  eventStreamsPerCredential?: number | undefined;
}

/** Fastify/Node server timeouts: slow or stalled clients are disconnected (408 or close) instead of holding sockets. */
function timeoutOptions(t: AppDeps['timeouts']) {
  const requestTimeout = t.requestMs;
  // Node refuses headersTimeout > requestTimeout; its expiry checks run every connectionsCheckingInterval (default 30 s).
  const headersTimeout = requestTimeout > 0 ? Math.min(t.headersMs, requestTimeout) : t.headersMs;
  const shortest = Math.min(...[requestTimeout, headersTimeout].filter((x) => x > 0), 4000);
  return {
    requestTimeout,
    connectionTimeout: t.connectionMs,
    keepAliveTimeout: t.keepAliveMs,
    http: { headersTimeout, connectionsCheckingInterval: Math.max(50, Math.floor(shortest / 4)) },
  };
}

function fastifyErrorToTool(err: { code?: string; statusCode?: number; message: string }): ToolError {
  if (err.code === 'FST_ERR_CTP_BODY_TOO_LARGE' || err.statusCode === 413)
    return new ToolError('PAYLOAD_TOO_LARGE', 'The request body is too large.');
  if (err.code === 'FST_ERR_CTP_INVALID_MEDIA_TYPE' || err.statusCode === 415)
    return new ToolError('UNSUPPORTED_MEDIA_TYPE', 'Send the body as application/json.');
  if (err.code === 'FST_ERR_CTP_EMPTY_JSON_BODY') return new ToolError('VALIDATION_ERROR', 'Empty JSON body.', { details: { issues: [] } });
  if (err.statusCode === 400) {
    return new ToolError('VALIDATION_ERROR', `The body is not valid JSON: ${err.message}`, {
      details: { issues: [{ path: '(root)', message: 'invalid JSON', code: 'invalid_json' }] },
    });
  }
  if (err.statusCode === 405) return new ToolError('METHOD_NOT_ALLOWED', err.message);
  // Anything else was thrown by a hook or route (e.g. the database is unreachable during authentication).
  return toToolError(err);
}

export async function buildApp(deps: AppDeps): Promise<FastifyInstance> {
  const app = Fastify({
    logger: loggerOptions(deps.logLevel, deps.logFile),
    ...timeoutOptions(deps.timeouts),
    bodyLimit: deps.bodyLimit,
    trustProxy: deps.trustProxy?.length ? deps.trustProxy : false,
    genReqId: newRequestId,
    return503OnClosing: true,
    // Refusals below the routes keep Kitty's shapes (wire-errors.ts).
    clientErrorHandler(err, socket) {
      // Fastify binds the handler to the instance.
      clientErrorHandler((this as unknown as FastifyInstance).log)(err, socket);
    },
    frameworkErrors(err, req, reply) {
      const { status, body } = toErrorEnvelope(frameworkErrorToTool(err), req.id);
      void (reply as FastifyReply).code(status).header('X-Request-Id', req.id).send(toWireBody(req.url, body));
    },
  });
  app.decorateRequest('kittyAuth', null);
  registerSecurityHeaders(app);
  // Before authentication and rate limiting: a preflight carries no credential.
  registerCors(app, { baseUrl: deps.baseUrl, allowedOrigins: deps.allowedOrigins ?? [] });
  // Every JSON or text body ends with a newline, so responses printed one after another in a shell stay apart.
  // (Callback hooks, here and below: no promise per request.)
  app.addHook('onSend', (_req, reply, payload, done) => {
    if (typeof payload !== 'string' || payload === '' || payload.endsWith('\n')) return done(null, payload);
    done(null, /json|^text\//.test(String(reply.getHeader('content-type') ?? '')) ? `${payload}\n` : payload);
  });
  // After the newline hook: compressed and plain answers decode to the same text.
  await registerCompression(app);

  // JSON for every body; an empty body is "no arguments" (STACK-NOTES: Fastify rejects it otherwise).
  app.removeAllContentTypeParsers();
  app.addContentTypeParser('*', { parseAs: 'string' }, (_req, body, done) => {
    const text = String(body);
    if (text.trim() === '') return done(null, undefined);
    try {
      done(null, JSON.parse(text));
    } catch (e) {
      done(
        new ToolError('VALIDATION_ERROR', `The body is not valid JSON: ${(e as Error).message}`, {
          details: { issues: [{ path: '(root)', message: 'invalid JSON', code: 'invalid_json' }] },
        }),
        undefined,
      );
    }
  });

  app.addHook('onRequest', async (req, reply) => {
    reply.header('X-Request-Id', req.id);
    // Route parameters get the tools' string rule (no NUL, no lone surrogate) before any lookup.
    const paramIssues = inputIssues(req.params ?? {});
    if (paramIssues.length) {
      throw new ToolError('VALIDATION_ERROR', `Invalid URL: ${paramIssues.map((i) => `${i.path}: ${i.message}`).join('; ')}`, {
        details: { issues: paramIssues },
      });
    }
    const authz = req.headers.authorization;
    // A route without credentials (e.g. the docs MCP server) says so: a stale or foreign bearer must not lock readers out.
    // The authorization server's endpoints take their own client credentials (e.g. HTTP Basic at /oauth/token).
    if (authz && !req.routeOptions.config?.ignoresBearer && !req.url.startsWith('/oauth/')) {
      const m = /^Bearer\s+(\S+)\s*$/i.exec(authz);
      if (!m) throw new ToolError('UNAUTHENTICATED', 'Authorization must be "Bearer <api key>".');
      req.kittyAuth = await deps.abuseLimiter.meterAuthentication(req.ip, () => deps.authenticator.authenticate(m[1]!), m[1]!);
    }
    if (req.url.startsWith('/health')) return;
    const decision = req.kittyAuth
      ? await deps.rateLimiter.consume('user', req.kittyAuth.agentId)
      : await deps.rateLimiter.consume('anon', req.ip);
    reply.header('RateLimit-Policy', decision.policyHeader).header('RateLimit', decision.stateHeader);
    if (!decision.allowed) {
      throw new ToolError('RATE_LIMITED', `Too many requests; retry in ${decision.retryAfter} s.`, { retryAfter: decision.retryAfter });
    }
  });

  /** Any error → the envelope and its status; logs internal errors and sets Retry-After. Shared by every error handler. */
  const errorEnvelope = (err: unknown, req: FastifyRequest, reply: FastifyReply): { status: number; body: ErrorEnvelope } => {
    const tool =
      err instanceof ToolError
        ? err
        : (err as { name?: string }).name === 'ToolError'
          ? (err as ToolError)
          : fastifyErrorToTool(err as never);
    const { status, body, error } = toErrorEnvelope(tool, req.id);
    if (error.kittyCode === 'INTERNAL') req.log.error({ err: error.cause ?? err }, 'internal error');
    if (error.retryAfter !== undefined) reply.header('Retry-After', String(Math.ceil(error.retryAfter)));
    // A 429 names the limit that refused it (not the request limit the call had passed).
    const limit = rateLimitHeadersOf(err);
    if (limit) reply.header('RateLimit-Policy', limit.policyHeader).header('RateLimit', limit.stateHeader);
    // RFC 6750 §3.1: a presented but unusable token is error="invalid_token".
    if (status === 401)
      reply.header(
        'WWW-Authenticate',
        wwwAuthenticate(deps.baseUrl, resourceOf(req.url), req.headers.authorization ? 'invalid_token' : undefined),
      );
    return { status, body };
  };

  app.setErrorHandler((err, req, reply) => {
    const { status, body } = errorEnvelope(err, req, reply);
    // Requests no adapter route took (unknown paths) keep the shape of their path, as refusals before routing do.
    return reply.code(status).send(toWireBody(req.url, body));
  });

  app.setNotFoundHandler((req) => {
    throw new ToolError('NOT_FOUND', `No route ${req.method} ${req.url.split('?')[0]}.`, {
      suggestedAction: 'Tools are called with POST /v1/tools/{name}; list them with GET /v1/tools; see GET /openapi.json.',
    });
  });

  const callRequest = (req: FastifyRequest): ServerCallRequest => ({
    services: deps.services,
    auth: req.kittyAuth,
    requestId: req.id,
    clientIp: req.ip,
  });
  const registry = deps.abuseLimiter.meterRegistrations(deps.registry);

  // Health reflects the database (a cached SELECT 1): 503 SERVICE_UNAVAILABLE when it is down.
  app.get('/health', async () => {
    const db = await deps.databaseHealth.check();
    if (!db.ok) {
      throw new ToolError('SERVICE_UNAVAILABLE', `The database is unavailable: ${db.reason}`, {
        retryAfter: 1,
        details: { status: 'database_unavailable' },
      });
    }
    return { ok: true, data: { status: 'ok', database: 'ok', tools_version: deps.registry.version } };
  });
  // attach_receipt carries a whole file in base64: only that tool (its REST route, a tools/call of it on /mcp) accepts the larger body.
  const toolBodyLimits = { attach_receipt: Math.max(deps.bodyLimit, receiptBodyLimit(receiptConfig(deps.services).maxBytes)) };
  // The catalogue answers (GET /v1/tools, /openapi.json, MCP tools/list) are compressed once and sent from memory.
  const sendPrecomputed = precomputedBodies();
  await registerRestRoutes(app, { registry, callRequest, baseUrl: deps.baseUrl, errorEnvelope, toolBodyLimits, sendPrecomputed });
  await registerEventStream(app, { services: deps.services, maxPerCredential: deps.eventStreamsPerCredential ?? 5 });
  await registerMcpRoutes(app, {
    registry,
    callRequest,
    baseUrl: deps.baseUrl,
    allowedHosts: deps.allowedHosts,
    allowedOrigins: deps.allowedOrigins ?? [],
    errorEnvelope,
    scopeChallenge: (scope) => wwwAuthenticate(deps.baseUrl, '/mcp', 'insufficient_scope', scope),
    toolBodyLimits,
    eventStreams: { maxPerCredential: deps.eventStreamsPerCredential ?? 5 },
    sendPrecomputed,
  });
  await registerMetadataRoutes(app, deps);
  registerFavicon(app);
  if (deps.baseUrlDerived) registerPageHostCheck(app, deps.baseUrl);
  await registerAccountRoutes(app, { services: deps.services });
  // Cookies (the session, sign-in state, CSRF) belong to people's pages and the authorization server only: the tool
  // routes neither parse nor set any.
  await app.register(async (people) => {
    await people.register(cookie);
    if (deps.signIn) await registerSignIn(people, deps.signIn);
    if (deps.oauth) await registerOAuthRoutes(people, deps.oauth);
  });
  return app;
}
