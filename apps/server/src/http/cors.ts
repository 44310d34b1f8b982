/**
 * CORS for browser-based MCP clients, on the paths such a client needs and no
 * others: `/mcp`, `/mcp/docs`, the protected-resource metadata (RFC 9728) and the authorization
 * server metadata (RFC 8414). Allowed origins: loopback (http or https, any port), the service's
 * own origin and `KITTY_ALLOWED_ORIGINS`. A preflight is answered 204 before authentication and
 * rate limiting (it carries no credential); actual responses — 401 and 403 included — carry
 * `Access-Control-Allow-Origin` for an allowed origin and expose `WWW-Authenticate`, so a
 * browser client can read the OAuth challenge. Other origins get no CORS headers (the browser
 * withholds the answer; /mcp also refuses them: DNS-rebinding protection).
 */
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

const METHODS = 'GET, POST, DELETE, OPTIONS';
const ALLOWED_HEADERS = CORS_ALLOWED_HEADERS.join(', ');
const EXPOSED_HEADERS = CORS_EXPOSED_HEADERS.join(', ');

/**
 * Registers CORS as one callback onRequest hook; call before the hooks that authenticate, so preflights answer
 * first. Every answer varies by Origin (`Vary: Origin`); on the CORS paths an allowed origin gets
 * `Access-Control-Allow-Origin` (its own value) and `Access-Control-Expose-Headers`, and its preflight (OPTIONS)
 * is answered 204 with the allowed methods, headers and a 10-minute max age. A preflight the rule does not
 * allow goes on to the routes and is answered 404. Other paths cost one regular-expression test.
 */
export function registerCors(app: FastifyInstance, opts: { baseUrl: string; allowedOrigins: readonly string[] }): void {
  app.addHook('onRequest', (req, reply, done) => {
    reply.header('Vary', 'Origin');
    const origin = req.headers.origin;
    if (origin === undefined || !CORS_PATHS.test(req.url) || !corsOriginAllowed(origin, opts.baseUrl, opts.allowedOrigins)) return done();
    reply.header('Access-Control-Allow-Origin', origin).header('Access-Control-Expose-Headers', EXPOSED_HEADERS);
    if (req.raw.method !== 'OPTIONS') return done();
    void reply
      .header('Access-Control-Allow-Methods', METHODS)
      .header('Access-Control-Allow-Headers', ALLOWED_HEADERS)
      .header('Access-Control-Max-Age', '600')
      .code(204)
      .header('Content-Length', '0')
      .send();
  });
  // Preflights the hook did not answer (other paths, other origins) end here, as unknown routes do.
  app.options('*', (_req, reply) => reply.callNotFound());
}
