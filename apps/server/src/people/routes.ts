/**
 * Sign-in of people: passkeys (WebAuthn, @simplewebauthn/server) as the embedded default, and any
 * OpenID Connect provider by configuration (openid-client, authorization code + PKCE S256 + nonce).
 *
 * Routes (the account page calls the JSON ones with @simplewebauthn/browser):
 *   GET  /signin?return_to=/path                 sign-in page
 *   POST /auth/passkey/register/options {display_name?}   signed in: adds a passkey; else signs up
 *   POST /auth/passkey/register/verify  <registration response>   → {ok:true,data:{human_id}} + session cookie
 *   POST /auth/passkey/login/options
 *   POST /auth/passkey/login/verify     <authentication response> → {ok:true,data:{human_id}} + session cookie
 *   POST /auth/signout
 *   GET  /auth/oidc/start?return_to=/path, GET /auth/oidc/callback
 * Every POST requires this server's Origin (CSRF); cookies are HttpOnly + SameSite=Lax (+ Secure on https).
 */
import { randomUUID } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import path from 'node:path';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { AuthenticatorTransport } from '@simplewebauthn/server';
import * as oidc from 'openid-client';
import { ToolError, createSession, destroySession, recordSecurityEvent, SESSION_COOKIE } from '@kitty/core';
import { PAGE_CSP, PAGES_CSS, renderErrorPage, renderSignInPage } from './pages.ts';
import { CONSENT_SCRIPT, SIGNIN_SCRIPT } from './page-scripts.ts';
import { PASSKEY_ALGORITHMS } from './passkey-algorithms.ts';
import {
  checkSameOrigin,
  clearSessionCookie,
  currentHuman,
  originOf,
  putState,
  safeReturnTo,
  setSessionCookie,
  takeState,
  type PeopleDeps,
} from './web.ts';
import { passkeyName } from './passkey-names.ts';

/** The WebAuthn library, loaded at the first passkey request: start-up and memory of a server nobody signs in to go without it. */
const webauthn = () => import('@simplewebauthn/server');

/** A configured OpenID Connect provider for sign-in (KITTY_OIDC_*). */
export interface OidcLoginConfig {
  issuer: string;
  clientId: string;
  clientSecret: string | undefined;
  /** Shown as "Sign in with <name>". */
  name: string;
}

interface WebAuthnState {
  challenge: string;
  mode: 'signup' | 'add' | 'login';
  humanId?: string;
  displayName?: string;
}

interface OidcState {
  codeVerifier: string;
  state: string;
  nonce: string;
  returnTo: string;
}

/** True when a string has a C0/C1 control character (names shown to people must not). */
const hasControl = (s: string) =>
  [...s].some((ch) => {
    const c = ch.codePointAt(0)!;
    return c < 0x20 || (c >= 0x7f && c <= 0x9f);
  });
const stripControl = (s: string) => [...s].filter((ch) => !hasControl(ch)).join('');

function validationError(field: string, message: string): ToolError {
  return new ToolError('VALIDATION_ERROR', message, { details: { issues: [{ path: field, message, code: 'invalid' }] } });
}

export async function registerPeopleRoutes(app: FastifyInstance, deps: PeopleDeps & { oidc: OidcLoginConfig | null }): Promise<void> {
  const { prisma, baseUrl } = deps;
  const base = new URL(baseUrl);
  const rpID = base.hostname;
  const expectedOrigin = base.origin;

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
  app.get('/auth/assets/consent.js', async (_req, reply) =>
    reply.type('text/javascript; charset=utf-8').header('Cache-Control', 'no-cache').send(CONSENT_SCRIPT),
  );
  // The account page's own stylesheet (apps/account/src/styles.css), so sign-in and consent look like it.
  const stylesheet = `${await readFile(path.join(path.dirname(require.resolve('@kitty/account/package.json')), 'src', 'styles.css'), 'utf8')}${PAGES_CSS}`;
  app.get('/auth/assets/kitty.css', async (_req, reply) =>
    reply.type('text/css; charset=utf-8').header('Cache-Control', 'no-cache').send(stylesheet),
  );

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

  // ---- Passkeys -------------------------------------------------------------------------------
  app.post<{ Body: { display_name?: unknown } | undefined }>('/auth/passkey/register/options', async (req, reply) => {
    checkSameOrigin(req, baseUrl);
    const me = await currentHuman(req, prisma);
    let state: WebAuthnState;
    let userName: string;
    let exclude: Array<{ id: string; transports: AuthenticatorTransport[] }> = [];
    if (me) {
      const human = await prisma.human.findUniqueOrThrow({
        where: { id: me.humanId },
        include: { passkeys: { select: { id: true, transports: true } } },
      });
      userName = human.displayName;
      exclude = human.passkeys.map((p) => ({ id: p.id, transports: p.transports as AuthenticatorTransport[] }));
      state = { challenge: '', mode: 'add', humanId: human.id };
    } else {
      const name = typeof req.body?.display_name === 'string' ? req.body.display_name.trim() : '';
      if (name.length < 1 || name.length > 80 || hasControl(name))
        throw validationError('display_name', 'display_name must be 1-80 characters without control characters.');
      userName = name;
      state = { challenge: '', mode: 'signup', humanId: randomUUID(), displayName: name };
    }
    const options = await (
      await webauthn()
    ).generateRegistrationOptions({
      rpName: 'Kitty',
      rpID,
      userName,
      userDisplayName: userName,
      userID: new TextEncoder().encode(state.humanId!),
      attestationType: 'none',
      excludeCredentials: exclude,
      authenticatorSelection: { residentKey: 'required', userVerification: 'required' },
      supportedAlgorithmIDs: PASSKEY_ALGORITHMS,
    });
    state.challenge = options.challenge;
    await putState(prisma, reply, baseUrl, 'webauthn', { ...state });
    return { ok: true, data: options };
  });

  app.post<{ Body: Record<string, unknown> | undefined }>('/auth/passkey/register/verify', async (req, reply) => {
    checkSameOrigin(req, baseUrl);
    const state = await takeState<WebAuthnState>(prisma, req, reply, 'webauthn');
    if (!state || (state.mode !== 'signup' && state.mode !== 'add'))
      throw validationError('(root)', 'No passkey registration is in progress (or it expired after 5 minutes); start again.');
    const me = await currentHuman(req, prisma);
    if (state.mode === 'add' && me?.humanId !== state.humanId) throw new ToolError('UNAUTHENTICATED', 'Sign in again to add a passkey.');
    let verification;
    try {
      verification = await (
        await webauthn()
      ).verifyRegistrationResponse({
        response: req.body as never,
        expectedChallenge: state.challenge,
        expectedOrigin,
        expectedRPID: rpID,
        requireUserVerification: true,
        supportedAlgorithmIDs: PASSKEY_ALGORITHMS,
      });
    } catch (e) {
      throw validationError('(root)', `The passkey registration could not be verified: ${(e as Error).message}`);
    }
    if (!verification.verified || !verification.registrationInfo)
      throw validationError('(root)', 'The passkey registration could not be verified.');
    const info = verification.registrationInfo;
    const humanId = state.humanId!;
    const origin = originOf(req);
    const session = await prisma.$transaction(async (tx) => {
      if (state.mode === 'signup') {
        await tx.human.create({ data: { id: humanId, displayName: state.displayName! } });
        await recordSecurityEvent(tx, { humanId, type: 'signed_up', details: { method: 'passkey' }, origin });
      }
      const taken = (await tx.passkey.findMany({ where: { humanId }, select: { name: true } })).map((p) => p.name);
      const name = passkeyName(info.aaguid, taken);
      await tx.passkey.create({
        data: {
          id: info.credential.id,
          humanId,
          publicKey: new Uint8Array(info.credential.publicKey),
          counter: BigInt(info.credential.counter),
          transports: info.credential.transports ?? [],
          deviceType: info.credentialDeviceType,
          backedUp: info.credentialBackedUp,
          name,
        },
      });
      await recordSecurityEvent(tx, {
        humanId,
        type: 'passkey_added',
        details: { passkey_id: info.credential.id, passkey_name: name },
        origin,
      });
      return state.mode === 'signup' ? createSession(tx, humanId, origin) : null;
    });
    if (session) setSessionCookie(reply, baseUrl, session.cookieValue);
    return { ok: true, data: { human_id: humanId } };
  });

  app.post('/auth/passkey/login/options', async (req, reply) => {
    checkSameOrigin(req, baseUrl);
    const options = await (await webauthn()).generateAuthenticationOptions({ rpID, userVerification: 'required' });
    await putState(prisma, reply, baseUrl, 'webauthn', { challenge: options.challenge, mode: 'login' });
    return { ok: true, data: options };
  });

  app.post<{ Body: Record<string, unknown> | undefined }>('/auth/passkey/login/verify', async (req, reply) => {
    checkSameOrigin(req, baseUrl);
    const state = await takeState<WebAuthnState>(prisma, req, reply, 'webauthn');
    if (!state || state.mode !== 'login')
      throw validationError('(root)', 'No passkey sign-in is in progress (or it expired after 5 minutes); start again.');
    const id = typeof req.body?.id === 'string' ? req.body.id : '';
    const passkey = id ? await prisma.passkey.findUnique({ where: { id } }) : null;
    if (!passkey)
      throw new ToolError('UNAUTHENTICATED', 'This passkey is not registered with Kitty.', {
        suggestedAction: 'Create an account with a passkey first.',
      });
    let verification;
    try {
      verification = await (
        await webauthn()
      ).verifyAuthenticationResponse({
        response: req.body as never,
        expectedChallenge: state.challenge,
        expectedOrigin,
        expectedRPID: rpID,
        credential: {
          id: passkey.id,
          publicKey: new Uint8Array(passkey.publicKey),
          counter: Number(passkey.counter),
          transports: passkey.transports as AuthenticatorTransport[],
        },
        requireUserVerification: true,
      });
    } catch (e) {
      throw new ToolError('UNAUTHENTICATED', `The passkey could not be verified: ${(e as Error).message}`);
    }
    if (!verification.verified) throw new ToolError('UNAUTHENTICATED', 'The passkey could not be verified.');
    const origin = originOf(req);
    const session = await prisma.$transaction(async (tx) => {
      await tx.passkey.update({
        where: { id: passkey.id },
        data: { counter: BigInt(verification.authenticationInfo.newCounter), lastUsedAt: new Date() },
      });
      await recordSecurityEvent(tx, { humanId: passkey.humanId, type: 'signed_in', details: { method: 'passkey' }, origin });
      return createSession(tx, passkey.humanId, origin);
    });
    setSessionCookie(reply, baseUrl, session.cookieValue);
    return { ok: true, data: { human_id: passkey.humanId } };
  });

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

  // ---- OpenID Connect provider ----------------------------------------------------------------
  const oidcCfg = deps.oidc;
  let discovered: Promise<oidc.Configuration> | undefined;
  const oidcConfiguration = () => {
    if (!oidcCfg) throw new ToolError('NOT_FOUND', 'No OpenID provider is configured on this server.');
    if (!discovered) {
      const issuer = new URL(oidcCfg.issuer);
      // http is accepted only for a provider on this machine (development and tests).
      const local = issuer.protocol === 'http:' && ['localhost', '127.0.0.1', '[::1]'].includes(issuer.hostname);
      discovered = oidc
        .discovery(issuer, oidcCfg.clientId, oidcCfg.clientSecret, undefined, local ? { execute: [oidc.allowInsecureRequests] } : undefined)
        .catch((e: unknown) => {
          discovered = undefined;
          throw e;
        });
    }
    return discovered;
  };
  const redirectUri = `${baseUrl}/auth/oidc/callback`;
  const htmlError = (reply: FastifyReply, status: number, message: string) =>
    reply
      .code(status)
      .type('text/html; charset=utf-8')
      .header('Content-Security-Policy', PAGE_CSP)
      .send(renderErrorPage({ title: 'Sign-in failed', message }));

  app.get<{ Querystring: { return_to?: string } }>('/auth/oidc/start', async (req, reply) => {
    let config;
    try {
      config = await oidcConfiguration();
    } catch (e) {
      if (e instanceof ToolError) throw e;
      req.log.warn({ err: e }, 'OpenID provider discovery failed');
      return htmlError(reply, 502, 'The sign-in provider could not be reached. Try again later or use a passkey.');
    }
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
    const issuer = config.serverMetadata().issuer;
    const subject = claims.sub;
    const email = typeof claims.email === 'string' ? claims.email : null;
    const name =
      [claims.name, claims.preferred_username, email].find((v): v is string => typeof v === 'string' && v.trim() !== '') ?? 'Member';
    const origin = originOf(req);
    const me = await currentHuman(req, prisma);
    const session = await prisma.$transaction(async (tx) => {
      const identity = await tx.externalIdentity.findUnique({ where: { issuer_subject: { issuer, subject } } });
      let humanId: string;
      if (identity) humanId = identity.humanId;
      else if (me) {
        // Signed in already: link this provider identity to the current person.
        humanId = me.humanId;
        await tx.externalIdentity.create({ data: { humanId, issuer, subject, email } });
      } else {
        const human = await tx.human.create({ data: { displayName: stripControl(name).slice(0, 80), email } });
        humanId = human.id;
        await tx.externalIdentity.create({ data: { humanId, issuer, subject, email } });
        await recordSecurityEvent(tx, { humanId, type: 'signed_up', details: { method: 'oidc', issuer }, origin });
      }
      await recordSecurityEvent(tx, { humanId, type: 'signed_in', details: { method: 'oidc', issuer }, origin });
      return createSession(tx, humanId, origin);
    });
    setSessionCookie(reply, baseUrl, session.cookieValue);
    return reply.redirect(st.returnTo, 303);
  });
}
