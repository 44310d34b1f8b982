/**
 * The account page: its tRPC router at `/trpc` (tRPC's Fastify adapter) and the built page at `/account`.
 *
 * - Context per request: the person from the `kitty_session` cookie (resolveSession), IP and user agent
 *   for the security log, and the Origin/Host headers the router's CSRF rule checks on every mutation.
 * - No CORS headers are sent: other origins can neither read answers nor pass the Origin check.
 * - The page (apps/account, built by `pnpm build`, which `pnpm start` runs first) is served from its
 *   dist folder; every /account/* path that is not a file gets index.html (client-side routes).
 *   Hashed assets are cached for a year, index.html never.
 * These routes are registered in their own Fastify plugin scope, so nothing here touches the tool routes.
 */
import { existsSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import type { FastifyInstance, FastifyReply } from 'fastify';
import fastifyStatic from '@fastify/static';
import { parseCookie } from 'cookie';
import { fastifyTRPCPlugin, type FastifyTRPCPluginOptions } from '@trpc/server/adapters/fastify';
import { accountRouter, resolveSession, SESSION_COOKIE, type AccountContext, type AccountRouter, type Services } from '@kitty/core';

/** Where the built page lives (apps/account/dist). */
function accountDistDir(): string {
  const pkg = createRequire(import.meta.url).resolve('@kitty/account/package.json');
  return join(dirname(pkg), 'dist');
}

/** Security headers of the page: only its own scripts and styles, never framed. */
const PAGE_HEADERS = {
  'content-security-policy': "default-src 'self'; img-src 'self' data:; frame-ancestors 'none'; base-uri 'none'; form-action 'self'",
  'x-content-type-options': 'nosniff',
  'referrer-policy': 'same-origin',
  'x-frame-options': 'DENY',
} as const;

export async function registerAccountRoutes(app: FastifyInstance, deps: { services: Services; distDir?: string }): Promise<void> {
  const { services } = deps;
  await app.register(async (scope) => {
    await scope.register(fastifyTRPCPlugin, {
      prefix: '/trpc',
      trpcOptions: {
        router: accountRouter,
        createContext: async ({ req }): Promise<AccountContext> => {
          const cookies = req.headers.cookie ? parseCookie(req.headers.cookie) : {};
          const session = await resolveSession(services.prisma, cookies[SESSION_COOKIE], services.now());
          return {
            services,
            session,
            origin: { ip: req.ip, userAgent: req.headers['user-agent'] ?? null },
            headers: { origin: req.headers.origin, host: req.headers.host },
            requestId: req.id,
          };
        },
        onError: ({ error, req }) => {
          if (error.code === 'INTERNAL_SERVER_ERROR' && (error as { name?: string }).name !== 'ToolError')
            req.log.error({ err: error.cause ?? error }, 'account router internal error');
        },
      } satisfies FastifyTRPCPluginOptions<AccountRouter>['trpcOptions'],
    });
    scope.addHook('onSend', async (_req, reply) => {
      reply.header('cache-control', 'no-store');
    });
  });

  const dist = deps.distDir ?? accountDistDir();
  const built = existsSync(join(dist, 'index.html'));
  await app.register(async (scope) => {
    const sendIndex = (reply: FastifyReply) => {
      if (!built) {
        return reply
          .code(503)
          .type('text/plain; charset=utf-8')
          .send('The account page has not been built. Run "pnpm build" (or "pnpm start", which builds it first) and reload.');
      }
      return reply.headers(PAGE_HEADERS).header('cache-control', 'no-cache').sendFile('index.html', dist);
    };
    if (built) {
      await scope.register(fastifyStatic, {
        root: dist,
        prefix: '/account/',
        wildcard: false,
        index: false,
        setHeaders: (res, path) => {
          res.headers(PAGE_HEADERS);
          res.header('cache-control', path.includes('/assets/') ? 'public, max-age=31536000, immutable' : 'no-cache');
        },
      });
    } else {
      scope.log.warn({ dist }, 'account page not built: /account answers 503 until "pnpm build" runs');
    }
    scope.get('/account', (_req, reply) => sendIndex(reply));
    scope.get('/account/', (_req, reply) => sendIndex(reply));
    scope.get('/account/*', (_req, reply) => sendIndex(reply));
  });
}
