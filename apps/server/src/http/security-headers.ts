/**
 * Response headers every answer gets (one onSend hook, so routes added later inherit them):
 * - `X-Content-Type-Options: nosniff` on every response (browsers must not guess types);
 * - `Cache-Control: no-store` unless the route chose its own caching (answers carry API keys,
 *   balances and invite codes: no shared or browser cache may keep them; RFC 9111 §5.2.2.5);
 * - HTML pages (Content-Type text/html): a Content-Security-Policy with
 *   `frame-ancestors 'none'` (no framing: clickjacking) and same-origin defaults, unless the
 *   page set its own, and `X-Frame-Options: DENY` for older browsers;
 * - `Referrer-Policy: no-referrer` (URLs such as /i/<code> carry secrets).
 *
 * @fastify/helmet was considered: it sets a dozen headers (CSP on JSON too) in an onRequest
 * hook and would still need this hook for the HTML-only CSP and the no-store default; these
 * four rules are what Kitty's responses need.
 */
import type { FastifyInstance } from 'fastify';

/** The CSP of HTML pages: same-origin resources only, no plugins, never framed. */
const HTML_CSP = "default-src 'self'; base-uri 'none'; object-src 'none'; form-action 'self'; frame-ancestors 'none'";

export function registerSecurityHeaders(app: FastifyInstance): void {
  app.addHook('onSend', (_req, reply, payload, done) => {
    reply.header('X-Content-Type-Options', 'nosniff');
    reply.header('Referrer-Policy', 'no-referrer');
    if (!reply.hasHeader('cache-control')) reply.header('Cache-Control', 'no-store');
    const type = reply.getHeader('content-type');
    if (typeof type === 'string' && /^\s*text\/html/i.test(type)) {
      if (!reply.hasHeader('content-security-policy')) reply.header('Content-Security-Policy', HTML_CSP);
      reply.header('X-Frame-Options', 'DENY');
    }
    done(null, payload);
  });
}
