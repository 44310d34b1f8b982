/**
 * HTTP wiring of the OAuth authorization server: oidc-provider (a Koa app, handed the raw Node
 * request/response), its metadata documents and the consent page (consent.ts). Per-IP rate limits apply
 * to all of them (stricter than the general limit). Person sign-in is its own plugin (people/routes.ts),
 * registered with or without this one.
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

export async function registerOAuthRoutes(app: FastifyInstance, deps: OAuthRouteDeps): Promise<void> {
  // The library answers its own failures (server_error) without logging them: they go to the server's log.
  deps.provider.on('server_error', (_ctx: unknown, err: unknown) => app.log.error({ err }, 'authorization server error'));
  const limit = signInRateLimit(deps.authRateLimiter);
  // The authorization server reads its own bodies (urlencoded/JSON): Fastify must not consume them.
  await app.register(async (as) => {
    as.removeAllContentTypeParsers();
    as.addContentTypeParser('*', (_req, _payload, done) => done(null, undefined));
    as.addHook('onRequest', limit);
    registerProviderEndpoints(as, deps.provider);
  });
  await app.register(async (web) => {
    addFormBodyParser(web);
    web.addHook('onRequest', limit);
    web.get('/auth/assets/consent.js', async (_req, reply) =>
      reply.type('text/javascript; charset=utf-8').header('Cache-Control', 'no-cache').send(CONSENT_SCRIPT),
    );
    registerConsentRoutes(web, deps);
  });
}

/** RFC 8414 metadata (the library's discovery document, served for both well-known names) and the library's endpoints. */
function registerProviderEndpoints(as: FastifyInstance, provider: Provider): void {
  const callback = provider.callback();
  const passToProvider = async (req: FastifyRequest, reply: FastifyReply, url?: string) => {
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
