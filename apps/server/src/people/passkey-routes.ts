/**
 * Passkeys (WebAuthn, @simplewebauthn/server): sign-up, adding a passkey when signed in, and sign-in.
 *
 *   POST /auth/passkey/register/options {display_name?}   signed in: adds a passkey; else signs up
 *   POST /auth/passkey/register/verify  <registration response>   → {ok:true,data:{human_id}} + session cookie
 *   POST /auth/passkey/login/options
 *   POST /auth/passkey/login/verify     <authentication response> → {ok:true,data:{human_id}} + session cookie
 *
 * The challenge of each ceremony is kept server-side for 5 minutes (web.ts putState), used once.
 */
import { randomUUID } from 'node:crypto';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { AuthenticatorTransport, VerifiedRegistrationResponse } from '@simplewebauthn/server';
import type { PrismaClient } from '@kitty/db';
import { ToolError, createSession, recordSecurityEvent, type RequestOrigin } from '@kitty/core';

/** The WebAuthn library, loaded at the first passkey request: start-up and memory of a server nobody signs in to go without it. */
const webauthn = () => import('@simplewebauthn/server');
import { PASSKEY_ALGORITHMS } from './passkey-algorithms.ts';
import { passkeyName } from './passkey-names.ts';
import {
  checkSameOrigin,
  currentHuman,
  hasControl,
  originOf,
  putState,
  setSessionCookie,
  takeState,
  validationError,
  type PeopleDeps,
} from './web.ts';

interface WebAuthnState {
  challenge: string;
  mode: 'signup' | 'add' | 'login';
  humanId?: string;
  displayName?: string;
}

/** The relying party: this server's host name and origin. */
function relyingParty(baseUrl: string): { rpID: string; expectedOrigin: string } {
  const base = new URL(baseUrl);
  return { rpID: base.hostname, expectedOrigin: base.origin };
}

export function registerPasskeyRoutes(app: FastifyInstance, deps: PeopleDeps): void {
  registerPasskeyRegistration(app, deps);
  registerPasskeyLogin(app, deps);
}

/** Options of a registration: a new person (sign-up, with a display name) or one more passkey for the signed-in person. */
async function registrationState(
  prisma: PrismaClient,
  req: FastifyRequest<{ Body: { display_name?: unknown } | undefined }>,
): Promise<{ state: WebAuthnState; userName: string; exclude: Array<{ id: string; transports: AuthenticatorTransport[] }> }> {
  const me = await currentHuman(req, prisma);
  if (me) {
    const human = await prisma.human.findUniqueOrThrow({
      where: { id: me.humanId },
      include: { passkeys: { select: { id: true, transports: true } } },
    });
    return {
      state: { challenge: '', mode: 'add', humanId: human.id },
      userName: human.displayName,
      exclude: human.passkeys.map((p) => ({ id: p.id, transports: p.transports as AuthenticatorTransport[] })),
    };
  }
  const name = typeof req.body?.display_name === 'string' ? req.body.display_name.trim() : '';
  if (name.length < 1 || name.length > 80 || hasControl(name))
    throw validationError('display_name', 'display_name must be 1-80 characters without control characters.');
  return { state: { challenge: '', mode: 'signup', humanId: randomUUID(), displayName: name }, userName: name, exclude: [] };
}

/** Stores a verified passkey (and, on sign-up, the person) in one transaction; a sign-up also gets a session. */
function savePasskey(
  prisma: PrismaClient,
  state: WebAuthnState,
  info: NonNullable<VerifiedRegistrationResponse['registrationInfo']>,
  origin: RequestOrigin,
) {
  const humanId = state.humanId!;
  return prisma.$transaction(async (tx) => {
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
}

function registerPasskeyRegistration(app: FastifyInstance, { prisma, baseUrl }: PeopleDeps): void {
  const { rpID, expectedOrigin } = relyingParty(baseUrl);

  app.post<{ Body: { display_name?: unknown } | undefined }>('/auth/passkey/register/options', async (req, reply) => {
    checkSameOrigin(req, baseUrl);
    const { state, userName, exclude } = await registrationState(prisma, req);
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
    const session = await savePasskey(prisma, state, verification.registrationInfo, originOf(req));
    if (session) setSessionCookie(reply, baseUrl, session.cookieValue);
    return { ok: true, data: { human_id: state.humanId! } };
  });
}

function registerPasskeyLogin(app: FastifyInstance, { prisma, baseUrl }: PeopleDeps): void {
  const { rpID, expectedOrigin } = relyingParty(baseUrl);

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
}
