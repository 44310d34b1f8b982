/**
 * HTTP wiring of the OAuth authorization server: oidc-provider (a Koa app, handed the raw Node
 * request/response), its metadata documents and the consent page (consent.ts). Per-IP rate limits apply
 * to all of them (stricter than the general limit). Person sign-in is its own plugin (people/routes.ts),
 * registered with or without this one. Every route is registered at start-up; the provider behind them is created
 * on the first request that needs it (`deps.provider`, index.ts), so start-up and idle memory do not carry it.
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type Provider from 'oidc-provider';
import type { KittyRateLimiter } from '../http/rate-limit.ts';
import { CONSENT_SCRIPT } from '../people/page-scripts.ts';
import { addFormBodyParser, signInRateLimit } from '../people/web.ts';
import { registerConsentRoutes, type ConsentDeps } from './consent.ts';

export interface OAuthRouteDeps extends ConsentDeps {
  /** Per-IP limiter for consent and token endpoints (shared with sign-in). */
  authRateLimiter: KittyRateLimiter;
}

const PROVIDER_PATHS = [
  '/oauth/authorize',
  '/oauth/authorize/*',
  '/oauth/token',
  '/oauth/register',
  '/oauth/register/*',
  '/oauth/revoke',
  '/oauth/jwks',
];

/**
 * Registers the authorization server's routes and the consent page. `deps.provider` is called on the first request to
 * one of them (and its result kept); its server errors go to `app.log`.
 */
export async function registerOAuthRoutes(app: FastifyInstance, deps: OAuthRouteDeps): Promise<void> {
  const provider = onFirstUse(deps.provider, (p) => {
    // The library answers its own failures (server_error) without logging them: they go to the server's log.
    p.on('server_error', (_ctx: unknown, err: unknown) => app.log.error({ err }, 'authorization server error'));
    return { provider: p, callback: p.callback() };
  });
  const limit = signInRateLimit(deps.authRateLimiter);
  // The authorization server reads its own bodies (urlencoded/JSON): Fastify must not consume them.
  await app.register(async (as) => {
    as.removeAllContentTypeParsers();
    as.addContentTypeParser('*', (_req, _payload, done) => done(null, undefined));
    as.addHook('onRequest', limit);
    registerProviderEndpoints(as, async () => (await provider()).callback);
  });
  await app.register(async (web) => {
    addFormBodyParser(web);
    web.addHook('onRequest', limit);
    web.get('/auth/assets/consent.js', async (_req, reply) =>
      reply.type('text/javascript; charset=utf-8').header('Cache-Control', 'no-cache').send(CONSENT_SCRIPT),
    );
    registerConsentRoutes(web, { ...deps, provider: async () => (await provider()).provider });
  });
}

/** RFC 8414 metadata (the library's discovery document, served for both well-known names) and the library's endpoints. */
function registerProviderEndpoints(as: FastifyInstance, providerCallback: () => Promise<ReturnType<Provider['callback']>>): void {
  const passToProvider = async (req: FastifyRequest, reply: FastifyReply, url?: string) => {
    const callback = await providerCallback();
    reply.hijack();
    if (url) req.raw.url = url;
    // Headers Fastify's hooks already set (request id, rate-limit state) go out with the provider's response.
    for (const [k, v] of Object.entries(reply.getHeaders())) if (v !== undefined) reply.raw.setHeader(k, v as string);
    await callback(req.raw, reply.raw);
  };
  as.get('/.well-known/openid-configuration', (req, reply) => passToProvider(req, reply));
  as.get('/.well-known/oauth-authorization-server', (req, reply) => passToProvider(req, reply, '/.well-known/openid-configuration'));
  for (const path of PROVIDER_PATHS) {
    as.route({ method: ['GET', 'POST', 'PUT', 'DELETE', 'OPTIONS'], url: path, handler: (req, reply) => passToProvider(req, reply) });
  }
}

/**
 * `create()` once, on the first call, then `prepare` of its result; every later call gets the same prepared value.
 * A failed creation is not kept: the next call tries again.
 */
function onFirstUse<T, U>(create: () => Promise<T>, prepare: (value: T) => U): () => Promise<U> {
  let pending: Promise<U> | undefined;
  return () =>
    (pending ??= create()
      .then(prepare)
      .catch((e: unknown) => {
        pending = undefined;
        throw e;
      }));
}
