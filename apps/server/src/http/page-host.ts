/**
 * People's pages (the account page, sign-in, OAuth consent) work only at the base URL: passkeys are
 * bound to its host name (the WebAuthn RP ID and origin), and the CSRF rules accept its origin. A
 * person who opens one through another name of the same server (e.g. http://127.0.0.1:3000 when the
 * base URL is http://localhost:3000) gets one sentence naming the address to use, with a link, instead
 * of a page whose passkey and sign-in buttons would fail. API calls (REST, MCP, metadata, invite
 * links) are not affected: they work on any host the server accepts. Registered only when the base
 * URL was derived from HOST and PORT: with KITTY_BASE_URL set, a reverse proxy may rewrite Host.
 */
import type { FastifyInstance } from 'fastify';
import { escapeHtml } from '../people/pages.ts';

/** Paths of the pages a person opens in a browser. */
const PAGE_PATH = /^\/(?:account(?:\/|$)|signin$|oauth\/consent\/)/;

/** "localhost:3000" for http://localhost:3000; default ports are left out, as browsers do in the Host header. */
function hostOf(url: URL): string {
  return url.host.toLowerCase();
}

export function registerPageHostCheck(app: FastifyInstance, baseUrl: string): void {
  const base = new URL(baseUrl);
  const expected = hostOf(base);
  app.addHook('onRequest', async (req, reply) => {
    if (req.method !== 'GET' && req.method !== 'HEAD') return;
    const path = req.url.split('?')[0]!;
    if (!PAGE_PATH.test(path)) return;
    // req.host follows X-Forwarded-Host only behind a trusted proxy (KITTY_TRUST_PROXY).
    const host = (req.host ?? '').toLowerCase();
    if (!host || host === expected) return;
    const target = new URL(req.url, base).href;
    return reply
      .code(421)
      .type('text/html; charset=utf-8')
      .send(
        `<!doctype html><html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width,initial-scale=1"><title>Open Kitty at ${escapeHtml(base.origin)}</title></head>` +
          `<body><p>Kitty's pages (and passkeys, which are tied to one address) work at <a href="${escapeHtml(target)}">${escapeHtml(target)}</a>: please open that address instead of ${escapeHtml(host)}.</p></body></html>`,
      );
  });
}
