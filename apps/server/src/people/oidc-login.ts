/**
 * Sign-in with an OpenID Connect provider chosen by configuration (KITTY_OIDC_*), with openid-client:
 * authorization code + PKCE S256 + nonce.
 *
 *   GET /auth/oidc/start?return_to=/path   → the provider
 *   GET /auth/oidc/callback                → signs in (or up, or links the identity to the signed-in person)
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type * as Oidc from 'openid-client';
import type { PrismaClient } from '@kitty/db';
import { ToolError, createSession, recordSecurityEvent, type RequestOrigin } from '@kitty/core';
import { PAGE_CSP, renderErrorPage } from './pages.ts';
import { currentHuman, originOf, putState, safeReturnTo, setSessionCookie, stripControl, takeState, type PeopleDeps } from './web.ts';

/** A configured OpenID Connect provider for sign-in (KITTY_OIDC_*). */
export interface OidcLoginConfig {
  issuer: string;
  clientId: string;
  clientSecret: string | undefined;
  /** Shown as "Sign in with <name>". */
  name: string;
}

interface OidcState {
  codeVerifier: string;
  state: string;
  nonce: string;
  returnTo: string;
}

/** openid-client, imported on the first sign-in with the provider (most servers configure none). */
const openidClient = () => import('openid-client');

/** The provider's configuration, discovered on first use (a failed discovery is tried again next time). */
function discoverer(cfg: OidcLoginConfig | null): () => Promise<Oidc.Configuration> {
  let discovered: Promise<Oidc.Configuration> | undefined;
  return () => {
    if (!cfg) throw new ToolError('NOT_FOUND', 'No OpenID provider is configured on this server.');
    if (!discovered) {
      const issuer = new URL(cfg.issuer);
      // http is accepted only for a provider on this machine (development and tests).
      const local = issuer.protocol === 'http:' && ['localhost', '127.0.0.1', '[::1]'].includes(issuer.hostname);
      discovered = openidClient()
        .then((oidc) =>
          oidc.discovery(issuer, cfg.clientId, cfg.clientSecret, undefined, local ? { execute: [oidc.allowInsecureRequests] } : undefined),
        )
        .catch((e: unknown) => {
          discovered = undefined;
          throw e;
        });
    }
    return discovered;
  };
}

const htmlError = (reply: FastifyReply, status: number, message: string) =>
  reply
    .code(status)
    .type('text/html; charset=utf-8')
    .header('Content-Security-Policy', PAGE_CSP)
    .send(renderErrorPage({ title: 'Sign-in failed', message }));

/** The identity's person (found, linked to the signed-in person, or created), signed in with a new session. */
function signInIdentity(
  prisma: PrismaClient,
  me: { humanId: string } | null,
  identity: { issuer: string; subject: string; email: string | null; name: string },
  origin: RequestOrigin,
) {
  const { issuer, subject, email } = identity;
  return prisma.$transaction(async (tx) => {
    const known = await tx.externalIdentity.findUnique({ where: { issuer_subject: { issuer, subject } } });
    let humanId: string;
    if (known) humanId = known.humanId;
    else if (me) {
      // Signed in already: link this provider identity to the current person.
      humanId = me.humanId;
      await tx.externalIdentity.create({ data: { humanId, issuer, subject, email } });
    } else {
      const human = await tx.human.create({ data: { displayName: stripControl(identity.name).slice(0, 80), email } });
      humanId = human.id;
      await tx.externalIdentity.create({ data: { humanId, issuer, subject, email } });
      await recordSecurityEvent(tx, { humanId, type: 'signed_up', details: { method: 'oidc', issuer }, origin });
    }
    await recordSecurityEvent(tx, { humanId, type: 'signed_in', details: { method: 'oidc', issuer }, origin });
    return createSession(tx, humanId, origin);
  });
}

export function registerOidcLogin(app: FastifyInstance, deps: PeopleDeps & { oidc: OidcLoginConfig | null }): void {
  const { prisma, baseUrl } = deps;
  const oidcConfiguration = discoverer(deps.oidc);
  const redirectUri = `${baseUrl}/auth/oidc/callback`;

  app.get<{ Querystring: { return_to?: string } }>('/auth/oidc/start', async (req, reply) => {
    let config;
    try {
      config = await oidcConfiguration();
    } catch (e) {
      if (e instanceof ToolError) throw e;
      req.log.warn({ err: e }, 'OpenID provider discovery failed');
      return htmlError(reply, 502, 'The sign-in provider could not be reached. Try again later or use a passkey.');
    }
    const oidc = await openidClient();
    const codeVerifier = oidc.randomPKCECodeVerifier();
    const state = oidc.randomState();
    const nonce = oidc.randomNonce();
    await putState(prisma, reply, baseUrl, 'oidc', { codeVerifier, state, nonce, returnTo: safeReturnTo(req.query.return_to) }, 600);
    const url = oidc.buildAuthorizationUrl(config, {
      redirect_uri: redirectUri,
      scope: 'openid email profile',
      code_challenge: await oidc.calculatePKCECodeChallenge(codeVerifier),
      code_challenge_method: 'S256',
      state,
      nonce,
    });
    return reply.redirect(url.href, 303);
  });

  app.get('/auth/oidc/callback', async (req: FastifyRequest, reply) => {
    const config = await oidcConfiguration();
    const st = await takeState<OidcState>(prisma, req, reply, 'oidc');
    if (!st) return htmlError(reply, 400, 'The sign-in took too long or was already used. Start again.');
    const oidc = await openidClient();
    let claims;
    try {
      const tokens = await oidc.authorizationCodeGrant(config, new URL(req.url, baseUrl), {
        pkceCodeVerifier: st.codeVerifier,
        expectedState: st.state,
        expectedNonce: st.nonce,
        idTokenExpected: true,
      });
      claims = tokens.claims();
      // Code-flow ID tokens usually carry only `sub`: name and email come from the UserInfo endpoint (OpenID Connect Core 5.3).
      if (claims && !claims.name && !claims.email && config.serverMetadata().userinfo_endpoint) {
        const info = await oidc.fetchUserInfo(config, tokens.access_token, claims.sub);
        claims = { ...claims, ...info, sub: claims.sub };
      }
    } catch (e) {
      req.log.warn({ err: e }, 'OpenID sign-in refused');
      return htmlError(reply, 400, `The sign-in provider's answer was refused: ${(e as Error).message}`);
    }
    if (!claims) return htmlError(reply, 400, 'The sign-in provider returned no identity.');
    const email = typeof claims.email === 'string' ? claims.email : null;
    const name =
      [claims.name, claims.preferred_username, email].find((v): v is string => typeof v === 'string' && v.trim() !== '') ?? 'Member';
    const session = await signInIdentity(
      prisma,
      await currentHuman(req, prisma),
      { issuer: config.serverMetadata().issuer, subject: claims.sub, email, name },
      originOf(req),
    );
    setSessionCookie(reply, baseUrl, session.cookieValue);
    return reply.redirect(st.returnTo, 303);
  });
}
