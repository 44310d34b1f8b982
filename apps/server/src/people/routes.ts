/**
 * Sign-in of people, a Fastify plugin of its own (registered whether or not the OAuth authorization server
 * runs, so KITTY_OAUTH=off keeps the account page's sign-in): passkeys (WebAuthn, passkey-routes.ts) as the
 * embedded default, and any OpenID Connect provider by configuration (oidc-login.ts).
 *
 * Routes (the account page calls the JSON ones with @simplewebauthn/browser):
 *   GET  /signin?return_to=/path                 sign-in page
 *   POST /auth/passkey/…                         passkey sign-up, sign-in and adding a passkey (passkey-routes.ts)
 *   POST /auth/signout
 *   GET  /auth/oidc/start?return_to=/path, GET /auth/oidc/callback
 *   GET  /auth/assets/…                          the pages' scripts and stylesheet
 * Every POST requires this server's Origin (CSRF); cookies are HttpOnly + SameSite=Lax (+ Secure on https).
 * A per-IP limit (stricter than the general one) applies to all of them but the assets.
 */
import { readFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import path from 'node:path';
import type { FastifyInstance } from 'fastify';
import { destroySession, recordSecurityEvent, SESSION_COOKIE } from '@kitty/core';
import type { KittyRateLimiter } from '../http/rate-limit.ts';
import { PAGE_CSP, PAGES_CSS, renderSignInPage } from './pages.ts';
import { SIGNIN_SCRIPT } from './page-scripts.ts';
import { registerPasskeyRoutes } from './passkey-routes.ts';
import { registerOidcLogin, type OidcLoginConfig } from './oidc-login.ts';
import {
  addFormBodyParser,
  checkSameOrigin,
  clearSessionCookie,
  currentHuman,
  originOf,
  safeReturnTo,
  signInRateLimit,
  type PeopleDeps,
} from './web.ts';

export interface SignInDeps extends PeopleDeps {
  /** The OpenID Connect provider people may sign in with (KITTY_OIDC_*), or null. */
  oidc: OidcLoginConfig | null;
  /** Per-IP limiter of sign-in and registration (shared with the authorization server's endpoints). */
  authRateLimiter: KittyRateLimiter;
}

/** Registers the sign-in plugin: its own scope (form bodies, the per-IP limit) with the pages and the sign-in routes. */
export async function registerSignIn(app: FastifyInstance, deps: SignInDeps): Promise<void> {
  await app.register(async (scope) => {
    addFormBodyParser(scope);
    scope.addHook('onRequest', signInRateLimit(deps.authRateLimiter));
    await registerPageAssets(scope);
    registerSignInPage(scope, deps);
    registerPasskeyRoutes(scope, deps);
    registerSignOut(scope, deps);
    registerOidcLogin(scope, deps);
  });
}

/** The sign-in page's script, @simplewebauthn/browser's bundle and the pages' stylesheet (the consent page uses it too). */
async function registerPageAssets(app: FastifyInstance): Promise<void> {
  const require = createRequire(import.meta.url);
  // The package's browser build (UMD, global SimpleWebAuthnBrowser); its exports map names only the module entry points.
  const browserBundle = await readFile(
    path.join(path.dirname(require.resolve('@simplewebauthn/browser')), '../dist/bundle/index.umd.min.js'),
    'utf8',
  );
  app.get('/auth/assets/webauthn.js', async (_req, reply) =>
    reply.type('text/javascript; charset=utf-8').header('Cache-Control', 'public, max-age=3600').send(browserBundle),
  );
  app.get('/auth/assets/signin.js', async (_req, reply) =>
    reply.type('text/javascript; charset=utf-8').header('Cache-Control', 'no-cache').send(SIGNIN_SCRIPT),
  );
  // The account page's own stylesheet (apps/account/src/styles.css), so sign-in and consent look like it.
  const stylesheet = `${await readFile(path.join(path.dirname(require.resolve('@kitty/account/package.json')), 'src', 'styles.css'), 'utf8')}${PAGES_CSS}`;
  app.get('/auth/assets/kitty.css', async (_req, reply) =>
    reply.type('text/css; charset=utf-8').header('Cache-Control', 'no-cache').send(stylesheet),
  );
}

function registerSignInPage(app: FastifyInstance, deps: SignInDeps): void {
  const { prisma } = deps;
  app.get<{ Querystring: { return_to?: string } }>('/signin', async (req, reply) => {
    const me = await currentHuman(req, prisma);
    const human = me ? await prisma.human.findUnique({ where: { id: me.humanId }, select: { displayName: true } }) : null;
    reply.type('text/html; charset=utf-8').header('Content-Security-Policy', PAGE_CSP).header('Cache-Control', 'no-store');
    return renderSignInPage({
      returnTo: safeReturnTo(req.query.return_to),
      oidcProviderName: deps.oidc?.name ?? null,
      signedInAs: human?.displayName ?? null,
    });
  });
}

function registerSignOut(app: FastifyInstance, { prisma, baseUrl }: PeopleDeps): void {
  app.post('/auth/signout', async (req, reply) => {
    checkSameOrigin(req, baseUrl);
    const me = await currentHuman(req, prisma);
    if (me) {
      await recordSecurityEvent(prisma, { humanId: me.humanId, type: 'signed_out', origin: originOf(req) });
      await destroySession(prisma, req.cookies[SESSION_COOKIE]);
    }
    clearSessionCookie(reply, baseUrl);
    return { ok: true, data: {} };
  });
}
