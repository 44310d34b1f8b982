/**
 * HTTP wiring of the human half: the authorization server (oidc-provider, a Koa app, handed the raw
 * Node request/response), its metadata documents, the consent page, and the sign-in routes
 * (people/routes.ts). Per-IP rate limits apply to all of them (stricter than the general limit).
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type Provider from 'oidc-provider';
import type { PrismaClient } from '@kitty/db';
import { ToolError, createAgentWithKey, validateNewAgent, recordSecurityEvent } from '@kitty/core';
import type { KittyRateLimiter } from '../rate-limit.ts';
import { registerPeopleRoutes, type OidcLoginConfig } from '../people/routes.ts';
import { PAGE_CSP, renderConsentPage, renderErrorPage } from '../people/pages.ts';
import { checkCsrfToken, checkSameOrigin, csrfToken, currentHuman, originOf } from '../people/web.ts';
import { ALL_SCOPES, RESOURCE_SCOPES, mcpResource } from './provider.ts';

export interface OAuthRouteDeps {
  provider: Provider;
  prisma: PrismaClient;
  baseUrl: string;
  csrfSecret: string;
  oidc: OidcLoginConfig | null;
  /** Per-IP limiter for sign-in, registration, consent and token endpoints. */
  authRateLimiter: KittyRateLimiter;
}

const SKIP_LIMIT = /^\/(auth\/assets\/|\.well-known\/|oauth\/jwks)/;

export async function registerOAuthRoutes(app: FastifyInstance, deps: OAuthRouteDeps): Promise<void> {
  const { provider, prisma, baseUrl } = deps;
  const resource = mcpResource(baseUrl);
  const limit = async (req: FastifyRequest, reply: FastifyReply) => {
    if (SKIP_LIMIT.test(req.url)) return;
    const decision = await deps.authRateLimiter.consume('anon', `auth:${req.ip}`);
    reply
      .header('RateLimit-Policy', decision.policyHeader.replace('"anon"', '"auth"'))
      .header('RateLimit', decision.stateHeader.replace('"anon"', '"auth"'));
    if (!decision.allowed)
      throw new ToolError('RATE_LIMITED', `Too many sign-in or authorization requests; retry in ${decision.retryAfter} s.`, {
        retryAfter: decision.retryAfter,
      });
  };

  // The library answers its own failures (server_error) without logging them: they go to the server's log.
  provider.on('server_error', (_ctx: unknown, err: unknown) => app.log.error({ err }, 'authorization server error'));

  // RFC 8414 metadata = the library's discovery document (served for both well-known names).
  const callback = provider.callback();
  const passToProvider = async (req: FastifyRequest, reply: FastifyReply, url?: string) => {
    reply.hijack();
    if (url) req.raw.url = url;
    // Headers Fastify's hooks already set (request id, rate-limit state) go out with the provider's response.
    for (const [k, v] of Object.entries(reply.getHeaders())) if (v !== undefined) reply.raw.setHeader(k, v as string);
    await callback(req.raw, reply.raw);
  };

  // The authorization server reads its own bodies (urlencoded/JSON): Fastify must not consume them.
  await app.register(async (as) => {
    as.removeAllContentTypeParsers();
    as.addContentTypeParser('*', (_req, _payload, done) => done(null, undefined));
    as.addHook('onRequest', limit);
    as.get('/.well-known/openid-configuration', (req, reply) => passToProvider(req, reply));
    as.get('/.well-known/oauth-authorization-server', (req, reply) => passToProvider(req, reply, '/.well-known/openid-configuration'));
    for (const path of [
      '/oauth/authorize',
      '/oauth/authorize/*',
      '/oauth/token',
      '/oauth/register',
      '/oauth/register/*',
      '/oauth/revoke',
      '/oauth/jwks',
    ]) {
      as.route({ method: ['GET', 'POST', 'PUT', 'DELETE', 'OPTIONS'], url: path, handler: (req, reply) => passToProvider(req, reply) });
    }
  });

  await app.register(async (web) => {
    web.addContentTypeParser('application/x-www-form-urlencoded', { parseAs: 'string' }, (_req, body, done) => {
      const params = new URLSearchParams(String(body));
      const out: Record<string, string | string[]> = {};
      for (const key of new Set(params.keys())) {
        const all = params.getAll(key);
        out[key] = all.length > 1 ? all : all[0]!;
      }
      done(null, out);
    });
    web.addHook('onRequest', limit);
    await registerPeopleRoutes(web, { prisma, baseUrl, csrfSecret: deps.csrfSecret, oidc: deps.oidc });

    const page = (reply: FastifyReply, html: string, status = 200) =>
      reply
        .code(status)
        .type('text/html; charset=utf-8')
        .header('Content-Security-Policy', PAGE_CSP)
        .header('Cache-Control', 'no-store')
        .header('X-Frame-Options', 'DENY')
        .send(html);

    /** Everything the consent page shows, or a reply already sent (redirect to sign-in, error page). */
    const loadConsent = async (req: FastifyRequest<{ Params: { uid: string } }>, reply: FastifyReply) => {
      let details;
      try {
        details = await provider.interactionDetails(req.raw, reply.raw);
      } catch {
        page(reply, renderErrorPage({ title: 'This request has expired', message: 'Go back to the app and connect again.' }), 400);
        return null;
      }
      if (details.uid !== req.params.uid) {
        page(reply, renderErrorPage({ title: 'This request has expired', message: 'Go back to the app and connect again.' }), 400);
        return null;
      }
      const me = await currentHuman(req, prisma);
      if (!me) {
        reply.redirect(`/signin?return_to=${encodeURIComponent(`/oauth/consent/${details.uid}`)}`, 303);
        return null;
      }
      const params = details.params as Record<string, string | undefined>;
      const client = await provider.Client.find(params.client_id!);
      if (!client) {
        page(reply, renderErrorPage({ title: 'Unknown app', message: 'The app is not registered with Kitty.' }), 400);
        return null;
      }
      const requested = (params.scope ?? '').split(' ').filter((s) => (ALL_SCOPES as readonly string[]).includes(s));
      // An app that names no Kitty scope asks for the resource's scopes (read and write); the person can narrow them.
      const requestedScopes = requested.some((s) => (RESOURCE_SCOPES as readonly string[]).includes(s))
        ? requested
        : [...RESOURCE_SCOPES, ...requested];
      const hostOf = (u: string | undefined) => {
        try {
          return u ? new URL(u).host : null;
        } catch {
          return null;
        }
      };
      const clientId = client.clientId;
      const clientHost =
        hostOf(/^https?:\/\//.test(clientId) ? clientId : undefined) ?? hostOf(client.clientUri) ?? hostOf(params.redirect_uri);
      const human = await prisma.human.findUniqueOrThrow({ where: { id: me.humanId }, select: { id: true, displayName: true } });
      const agents = await prisma.agent.findMany({
        where: { humanId: me.humanId },
        select: { id: true, handle: true, displayName: true },
        orderBy: { createdAt: 'asc' },
      });
      return {
        details,
        me,
        client,
        clientId,
        clientName: client.clientName ?? clientHost ?? clientId,
        clientHost,
        requestedScopes,
        human,
        agents,
      };
    };

    /** What the consent page shows for a loaded interaction (a fresh CSRF token bound to the session and the interaction). */
    const consentView = (c: NonNullable<Awaited<ReturnType<typeof loadConsent>>>) => ({
      uid: c.details.uid,
      csrf: csrfToken(deps.csrfSecret, c.me.sessionId, `consent:${c.details.uid}`),
      humanName: c.human.displayName,
      clientName: c.clientName,
      clientHost: c.clientHost,
      clientId: c.clientId,
      requestedScopes: c.requestedScopes,
      agents: c.agents,
    });

    web.get<{ Params: { uid: string } }>('/oauth/consent/:uid', async (req, reply) => {
      const c = await loadConsent(req, reply);
      if (!c) return reply;
      return page(reply, renderConsentPage(consentView(c)));
    });

    web.post<{ Params: { uid: string }; Body: Record<string, string | string[] | undefined> | undefined }>(
      '/oauth/consent/:uid',
      async (req, reply) => {
        checkSameOrigin(req, baseUrl);
        const c = await loadConsent(req, reply);
        if (!c) return reply;
        const body = req.body ?? {};
        if (!checkCsrfToken(deps.csrfSecret, c.me.sessionId, `consent:${c.details.uid}`, body.csrf)) {
          throw new ToolError('FORBIDDEN', 'The form has expired (CSRF token mismatch); reload the page.', { details: { reason: 'csrf' } });
        }
        const finish = async (result: Parameters<Provider['interactionFinished']>[2]) => {
          reply.hijack();
          await provider.interactionFinished(req.raw, reply.raw, result, { mergeWithLastSubmission: false });
        };
        if (body.decision !== 'allow') return finish({ error: 'access_denied', error_description: 'The person declined the request.' });

        const chosen = (Array.isArray(body.scope) ? body.scope : body.scope ? [body.scope] : []).filter((s) =>
          c.requestedScopes.includes(s),
        );
        const resourceScopes = chosen.filter((s) => (RESOURCE_SCOPES as readonly string[]).includes(s));
        const rerender = (error: string) =>
          page(
            reply,
            renderConsentPage({
              ...consentView(c),
              error,
              values: {
                agent: typeof body.agent === 'string' ? body.agent : undefined,
                handle: typeof body.handle === 'string' ? body.handle : undefined,
                display_name: typeof body.display_name === 'string' ? body.display_name : undefined,
              },
            }),
            400,
          );
        if (resourceScopes.length === 0) return rerender('Allow at least svc:read or svc:write, or deny the request.');

        const origin = originOf(req);
        let agentId: string;
        try {
          agentId = await prisma.$transaction(async (tx) => {
            let id: string;
            if (body.agent === 'new') {
              const details = { handle: String(body.handle ?? '').trim(), displayName: String(body.display_name ?? '').trim() };
              validateNewAgent(details);
              // Same domain function as register_agent and the account page; the key it also makes is never shown
              // here (apps get no API keys) — the person can rotate it on the account page.
              const { agent } = await createAgentWithKey(tx, details, { humanId: c.me.humanId });
              await recordSecurityEvent(tx, {
                humanId: c.me.humanId,
                agentId: agent.id,
                type: 'agent_created',
                details: { handle: agent.handle, via: 'oauth_consent', client_id: c.clientId },
                origin,
              });
              id = agent.id;
            } else {
              const agent = c.agents.find((a) => a.id === body.agent);
              if (!agent)
                throw new ToolError('VALIDATION_ERROR', 'Pick one of your agents or "A new agent".', {
                  details: { issues: [{ path: 'agent', message: 'not one of your agents', code: 'invalid' }] },
                });
              id = agent.id;
            }
            return id;
          });
        } catch (e) {
          if (e instanceof ToolError) {
            const issues = (e.details?.issues as Array<{ path: string; message: string }> | undefined) ?? [];
            return rerender(
              issues.length
                ? issues
                    .map((i) => `${i.path === 'display_name' ? 'Display name' : i.path === 'handle' ? 'Handle' : i.path}: ${i.message}`)
                    .join('; ')
                : e.message,
            );
          }
          throw e;
        }

        // The token's subject is the person; which agent it acts as is the connection's (grant id → agent).
        const grant = new provider.Grant({ accountId: c.me.humanId, clientId: c.clientId });
        grant.addResourceScope(resource, resourceScopes.join(' '));
        // What the person unticked is rejected (not "missing"), so the library does not ask again.
        const unticked = c.requestedScopes.filter((s) => !chosen.includes(s));
        const requestedParam = ((c.details.params as Record<string, string | undefined>).scope ?? '').split(' ');
        const oidcScopes = [...chosen, ...(requestedParam.includes('openid') ? ['openid'] : [])];
        grant.addOIDCScope(oidcScopes.join(' '));
        if (unticked.length) {
          grant.rejectOIDCScope(unticked.join(' '));
          const rejectedResource = unticked.filter((s) => (RESOURCE_SCOPES as readonly string[]).includes(s));
          if (rejectedResource.length) grant.rejectResourceScope(resource, rejectedResource.join(' '));
        }
        const grantId = await grant.save();
        await prisma.$transaction(async (tx) => {
          await tx.oAuthConnection.create({
            data: {
              id: grantId,
              humanId: c.me.humanId,
              agentId,
              clientId: c.clientId,
              clientName: c.clientName,
              clientHost: c.clientHost,
              scopes: chosen,
            },
          });
          await recordSecurityEvent(tx, {
            humanId: c.me.humanId,
            agentId,
            type: 'app_connected',
            details: { client_id: c.clientId, client_name: c.clientName, scopes: chosen },
            origin,
          });
        });
        return finish({ login: { accountId: c.me.humanId }, consent: { grantId } });
      },
    );
  });
}
