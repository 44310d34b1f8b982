/**
 * The consent page: a signed-in person lets an app act as one of their agents (or a new one), with the
 * scopes they leave ticked. GET shows it, POST (same origin, a CSRF token bound to the session and the
 * interaction) finishes the authorization server's interaction with the grant, or with access_denied.
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type Provider from 'oidc-provider';
import { ToolError, createAgentWithKey, validateNewAgent, recordSecurityEvent, type RequestOrigin } from '@kitty/core';
import { PAGE_CSP, renderConsentPage, renderErrorPage } from '../people/pages.ts';
import { checkCsrfToken, checkSameOrigin, csrfToken, currentHuman, originOf } from '../people/web.ts';
import { ALL_SCOPES, RESOURCE_SCOPES, mcpResource } from './scopes.ts';
import type { PrismaClient } from '@kitty/db';

export interface ConsentDeps {
  /** The authorization server, created on first use (routes.ts `onFirstUse`); the same instance every call. */
  provider: () => Promise<Provider>;
  prisma: PrismaClient;
  baseUrl: string;
  /** Secret of the consent form's CSRF tokens (the authorization server's first cookie key). */
  csrfSecret: string;
}

type ConsentBody = Record<string, string | string[] | undefined>;
type Consent = NonNullable<Awaited<ReturnType<typeof loadConsent>>>;

const page = (reply: FastifyReply, html: string, status = 200) =>
  reply
    .code(status)
    .type('text/html; charset=utf-8')
    .header('Content-Security-Policy', PAGE_CSP)
    .header('Cache-Control', 'no-store')
    .header('X-Frame-Options', 'DENY')
    .send(html);

const expired = (reply: FastifyReply) =>
  page(reply, renderErrorPage({ title: 'This request has expired', message: 'Go back to the app and connect again.' }), 400);

const hostOf = (u: string | undefined) => {
  try {
    return u ? new URL(u).host : null;
  } catch {
    return null;
  }
};

/** Everything the consent page shows, or null with a reply already sent (redirect to sign-in, error page). */
async function loadConsent(deps: ConsentDeps, req: FastifyRequest<{ Params: { uid: string } }>, reply: FastifyReply) {
  const { prisma } = deps;
  const provider = await deps.provider();
  let details;
  try {
    details = await provider.interactionDetails(req.raw, reply.raw);
  } catch {
    expired(reply);
    return null;
  }
  if (details.uid !== req.params.uid) {
    expired(reply);
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
}

/** What the consent page shows for a loaded interaction (a fresh CSRF token bound to the session and the interaction). */
const consentView = (csrfSecret: string, c: Consent) => ({
  uid: c.details.uid,
  csrf: csrfToken(csrfSecret, c.me.sessionId, `consent:${c.details.uid}`),
  humanName: c.human.displayName,
  clientName: c.clientName,
  clientHost: c.clientHost,
  clientId: c.clientId,
  requestedScopes: c.requestedScopes,
  agents: c.agents,
});

/** The agent the app will act as: one of the person's, or a new one made here (same rules as register_agent). */
async function chooseAgent(deps: ConsentDeps, c: Consent, body: ConsentBody, origin: RequestOrigin): Promise<string> {
  if (body.agent !== 'new') {
    const agent = c.agents.find((a) => a.id === body.agent);
    if (!agent)
      throw new ToolError('VALIDATION_ERROR', 'Pick one of your agents or "A new agent".', {
        details: { issues: [{ path: 'agent', message: 'not one of your agents', code: 'invalid' }] },
      });
    return agent.id;
  }
  return deps.prisma.$transaction(async (tx) => {
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
    return agent.id;
  });
}

/** The grant (the person is the subject; unticked scopes rejected so the library does not ask again) and its connection row. */
async function saveGrant(deps: ConsentDeps, c: Consent, chosen: string[], agentId: string, origin: RequestOrigin): Promise<string> {
  const resource = mcpResource(deps.baseUrl);
  const resourceScopes = chosen.filter((s) => (RESOURCE_SCOPES as readonly string[]).includes(s));
  // The token's subject is the person; which agent it acts as is the connection's (grant id → agent).
  const grant = new (await deps.provider()).Grant({ accountId: c.me.humanId, clientId: c.clientId });
  grant.addResourceScope(resource, resourceScopes.join(' '));
  const unticked = c.requestedScopes.filter((s) => !chosen.includes(s));
  const requestedParam = ((c.details.params as Record<string, string | undefined>).scope ?? '').split(' ');
  grant.addOIDCScope([...chosen, ...(requestedParam.includes('openid') ? ['openid'] : [])].join(' '));
  if (unticked.length) {
    grant.rejectOIDCScope(unticked.join(' '));
    const rejectedResource = unticked.filter((s) => (RESOURCE_SCOPES as readonly string[]).includes(s));
    if (rejectedResource.length) grant.rejectResourceScope(resource, rejectedResource.join(' '));
  }
  const grantId = await grant.save();
  await deps.prisma.$transaction(async (tx) => {
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
  return grantId;
}

/** A refused choice as the form's error line ("Handle: …; Display name: …"). */
function choiceError(e: ToolError): string {
  const issues = (e.details?.issues as Array<{ path: string; message: string }> | undefined) ?? [];
  if (!issues.length) return e.message;
  return issues
    .map((i) => `${i.path === 'display_name' ? 'Display name' : i.path === 'handle' ? 'Handle' : i.path}: ${i.message}`)
    .join('; ');
}

export function registerConsentRoutes(web: FastifyInstance, deps: ConsentDeps): void {
  web.get<{ Params: { uid: string } }>('/oauth/consent/:uid', async (req, reply) => {
    const c = await loadConsent(deps, req, reply);
    if (!c) return reply;
    return page(reply, renderConsentPage(consentView(deps.csrfSecret, c)));
  });

  web.post<{ Params: { uid: string }; Body: ConsentBody | undefined }>('/oauth/consent/:uid', async (req, reply) => {
    checkSameOrigin(req, deps.baseUrl);
    const c = await loadConsent(deps, req, reply);
    if (!c) return reply;
    const body = req.body ?? {};
    if (!checkCsrfToken(deps.csrfSecret, c.me.sessionId, `consent:${c.details.uid}`, body.csrf)) {
      throw new ToolError('FORBIDDEN', 'The form has expired (CSRF token mismatch); reload the page.', { details: { reason: 'csrf' } });
    }
    const finish = async (result: Parameters<Provider['interactionFinished']>[2]) => {
      reply.hijack();
      await (await deps.provider()).interactionFinished(req.raw, reply.raw, result, { mergeWithLastSubmission: false });
    };
    if (body.decision !== 'allow') return finish({ error: 'access_denied', error_description: 'The person declined the request.' });

    const chosen = (Array.isArray(body.scope) ? body.scope : body.scope ? [body.scope] : []).filter((s) => c.requestedScopes.includes(s));
    const rerender = (error: string) =>
      page(
        reply,
        renderConsentPage({
          ...consentView(deps.csrfSecret, c),
          error,
          values: {
            agent: typeof body.agent === 'string' ? body.agent : undefined,
            handle: typeof body.handle === 'string' ? body.handle : undefined,
            display_name: typeof body.display_name === 'string' ? body.display_name : undefined,
          },
        }),
        400,
      );
    if (!chosen.some((s) => (RESOURCE_SCOPES as readonly string[]).includes(s)))
      return rerender('Allow at least svc:read or svc:write, or deny the request.');

    const origin = originOf(req);
    let agentId: string;
    try {
      agentId = await chooseAgent(deps, c, body, origin);
    } catch (e) {
      if (e instanceof ToolError) return rerender(choiceError(e));
      throw e;
    }
    const grantId = await saveGrant(deps, c, chosen, agentId, origin);
    return finish({ login: { accountId: c.me.humanId }, consent: { grantId } });
  });
}
