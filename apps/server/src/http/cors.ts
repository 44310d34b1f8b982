/**
 * CORS for browser-based MCP clients (@fastify/cors), on the paths such a client needs and no
 * others: `/mcp`, `/mcp/docs`, the protected-resource metadata (RFC 9728) and the authorization
 * server metadata (RFC 8414). Allowed origins: loopback (http or https, any port), the service's
 * own origin and `KITTY_ALLOWED_ORIGINS`. A preflight is answered 204 before authentication and
 * rate limiting (it carries no credential); actual responses — 401 and 403 included — carry
 * `Access-Control-Allow-Origin` for an allowed origin and expose `WWW-Authenticate`, so a
 * browser client can read the OAuth challenge. Other origins get no CORS headers (the browser
 * withholds the answer; /mcp also refuses them: DNS-rebinding protection).
 */
import cors from '@fastify/cors';
import type { FastifyInstance } from 'fastify';

const CORS_PATHS =
  /^\/(?:mcp(?:\/docs)?|\.well-known\/oauth-protected-resource(?:\/mcp)?|\.well-known\/oauth-authorization-server|\.well-known\/openid-configuration)(?:[?#]|$)/;

const LOOPBACK = /^https?:\/\/(?:localhost|127\.0\.0\.1|\[::1\])(?::\d{1,5})?$/i;

/** Request headers an MCP client sends (MCP 2025-11-25 and 2026-07-28 transports, OAuth bearer). */
const CORS_ALLOWED_HEADERS = [
  'Authorization',
  'Content-Type',
  'Accept',
  'Mcp-Protocol-Version',
  'Mcp-Method',
  'Mcp-Name',
  'Mcp-Session-Id',
  'Last-Event-ID',
  'Idempotency-Key',
];

/** Response headers a browser client may read. */
const CORS_EXPOSED_HEADERS = ['WWW-Authenticate', 'Mcp-Session-Id', 'X-Request-Id', 'RateLimit', 'RateLimit-Policy', 'Retry-After'];

/** True when `origin` (an Origin header) may use the CORS paths. */
function corsOriginAllowed(origin: string, baseUrl: string, allowedOrigins: readonly string[]): boolean {
  if (LOOPBACK.test(origin)) return true;
  const o = origin.toLowerCase();
  try {
    if (new URL(baseUrl).origin.toLowerCase() === o) return true;
  } catch {
    /* a base URL that does not parse allows nothing extra */
  }
  return allowedOrigins.some((a) => a.toLowerCase().replace(/\/$/, '') === o);
}

/** Registers CORS; call before the hooks that authenticate, so preflights answer first. */
export async function registerCors(app: FastifyInstance, opts: { baseUrl: string; allowedOrigins: readonly string[] }): Promise<void> {
  await app.register(cors, {
    hook: 'onRequest',
    delegator: (req, cb) => {
      if (!CORS_PATHS.test(req.url)) return cb(null, { origin: false });
      cb(null, {
        origin: (origin, done) => done(null, origin !== undefined && corsOriginAllowed(origin, opts.baseUrl, opts.allowedOrigins)),
        methods: ['GET', 'POST', 'DELETE', 'OPTIONS'],
        allowedHeaders: CORS_ALLOWED_HEADERS,
        exposedHeaders: CORS_EXPOSED_HEADERS,
        maxAge: 600,
        strictPreflight: false,
      });
    },
  });
}
