/**
 * Shared helpers of the human-facing endpoints: cookies, CSRF (Origin check), return paths,
 * short-lived server-side state (WebAuthn challenges, OpenID login state) in `oauth_payloads`.
 */
import { createHash, createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { Prisma, PrismaClient } from '@kitty/db';
import { ToolError, SESSION_COOKIE, SESSION_TTL_SECONDS, resolveSession, type RequestOrigin } from '@kitty/core';
import type { KittyRateLimiter } from '../http/rate-limit.ts';

export interface PeopleDeps {
  prisma: PrismaClient;
  baseUrl: string;
}

/** Assets and discovery documents are not counted by the sign-in limit. */
const SKIP_LIMIT = /^\/(auth\/assets\/|\.well-known\/|oauth\/jwks)/;

/**
 * The per-IP limit of sign-in, registration, consent and the authorization server's endpoints (stricter than
 * the general limit): an onRequest hook for the plugins serving them, counting in one budget per IP.
 */
export function signInRateLimit(limiter: KittyRateLimiter) {
  return async (req: FastifyRequest, reply: FastifyReply): Promise<void> => {
    if (SKIP_LIMIT.test(req.url)) return;
    const decision = await limiter.consume('anon', `auth:${req.ip}`);
    reply
      .header('RateLimit-Policy', decision.policyHeader.replace('"anon"', '"auth"'))
      .header('RateLimit', decision.stateHeader.replace('"anon"', '"auth"'));
    if (!decision.allowed)
      throw new ToolError('RATE_LIMITED', `Too many sign-in or authorization requests; retry in ${decision.retryAfter} s.`, {
        retryAfter: decision.retryAfter,
      });
  };
}

/** Bodies of HTML forms (application/x-www-form-urlencoded) in this plugin scope: a repeated key becomes an array. */
export function addFormBodyParser(scope: FastifyInstance): void {
  scope.addContentTypeParser('application/x-www-form-urlencoded', { parseAs: 'string' }, (_req, body, done) => {
    const params = new URLSearchParams(String(body));
    const out: Record<string, string | string[]> = {};
    for (const key of new Set(params.keys())) {
      const all = params.getAll(key);
      out[key] = all.length > 1 ? all : all[0]!;
    }
    done(null, out);
  });
}

/** True when a string has a C0/C1 control character (names shown to people must not). */
export const hasControl = (s: string): boolean =>
  [...s].some((ch) => {
    const c = ch.codePointAt(0)!;
    return c < 0x20 || (c >= 0x7f && c <= 0x9f);
  });
export const stripControl = (s: string): string => [...s].filter((ch) => !hasControl(ch)).join('');

export function validationError(field: string, message: string): ToolError {
  return new ToolError('VALIDATION_ERROR', message, { details: { issues: [{ path: field, message, code: 'invalid' }] } });
}

const isSecure = (baseUrl: string) => baseUrl.startsWith('https:');

/**
 * The authorization server keeps its own login session (cookie `kitty_as_session`, oauth/provider.ts)
 * for the person who last consented. When the person behind the browser changes (sign-in, sign-out)
 * it is dropped, so the next consent starts a fresh one instead of meeting a different person's.
 */
function dropAuthServerSession(reply: FastifyReply, baseUrl: string): void {
  for (const name of ['kitty_as_session', 'kitty_as_session.sig'])
    reply.clearCookie(name, { path: '/', httpOnly: true, sameSite: 'lax', secure: isSecure(baseUrl) });
}

/** Session cookie attributes: HttpOnly, SameSite=Lax, Secure when the base URL is https, whole site. */
export function setSessionCookie(reply: FastifyReply, baseUrl: string, value: string): void {
  reply.setCookie(SESSION_COOKIE, value, {
    path: '/',
    httpOnly: true,
    sameSite: 'lax',
    secure: isSecure(baseUrl),
    maxAge: SESSION_TTL_SECONDS,
  });
  dropAuthServerSession(reply, baseUrl);
}

export function clearSessionCookie(reply: FastifyReply, baseUrl: string): void {
  reply.clearCookie(SESSION_COOKIE, { path: '/', httpOnly: true, sameSite: 'lax', secure: isSecure(baseUrl) });
  dropAuthServerSession(reply, baseUrl);
}

export function originOf(req: FastifyRequest): RequestOrigin {
  return { ip: req.ip, userAgent: typeof req.headers['user-agent'] === 'string' ? req.headers['user-agent'] : null };
}

/**
 * CSRF defence for every state-changing request from a browser: the `Origin` header must be this
 * server's own origin (browsers send it on every POST; OWASP CSRF cheat sheet "Verifying origin with
 * standard headers"). Together with SameSite=Lax cookies.
 * @throws ToolError FORBIDDEN when the Origin is missing or foreign
 */
export function checkSameOrigin(req: FastifyRequest, baseUrl: string): void {
  const origin = req.headers.origin;
  // A form POST from a page whose referrer policy hides origins sends "Origin: null"; the browser's
  // Sec-Fetch-Site (Fetch Metadata) then still says whether the request came from this origin.
  const sameSiteFetch = (origin === undefined || origin === 'null') && req.headers['sec-fetch-site'] === 'same-origin';
  if (origin !== new URL(baseUrl).origin && !sameSiteFetch) {
    throw new ToolError(
      'FORBIDDEN',
      'This request must come from a Kitty page (the Origin header is missing or belongs to another site).',
      {
        details: { reason: 'csrf' },
        suggestedAction: `Use the page at ${baseUrl}/signin.`,
      },
    );
  }
}

/** A CSRF token bound to a session and a purpose (HMAC-SHA256). */
export function csrfToken(secret: string, sessionId: string, purpose: string): string {
  return createHmac('sha256', secret).update(`${sessionId}\n${purpose}`).digest('base64url');
}

export function checkCsrfToken(secret: string, sessionId: string, purpose: string, presented: unknown): boolean {
  if (typeof presented !== 'string') return false;
  const a = Buffer.from(csrfToken(secret, sessionId, purpose));
  const b = Buffer.from(presented);
  return a.length === b.length && timingSafeEqual(a, b);
}

/** A safe local return path: starts with one "/", no scheme or host (open-redirect defence). */
export function safeReturnTo(value: unknown, dflt = '/account'): string {
  if (
    typeof value !== 'string' ||
    !value.startsWith('/') ||
    value.startsWith('//') ||
    value.startsWith('/\\') ||
    /[\r\n]/.test(value) ||
    value.length > 2000
  )
    return dflt;
  return value;
}

/** The signed-in human of this request, or null. */
export async function currentHuman(req: FastifyRequest, prisma: PrismaClient): Promise<{ sessionId: string; humanId: string } | null> {
  return resolveSession(prisma, req.cookies?.[SESSION_COOKIE]);
}

const STATE_TYPE = 'KittyBrowserState';
const stateRowId = (purpose: string, value: string) => `${purpose}:${createHash('sha256').update(value).digest('base64url')}`;

/**
 * Short-lived server-side state keyed by a random value kept in an HttpOnly cookie (WebAuthn
 * challenges, OpenID login state). One use: `takeState` deletes it.
 */
export async function putState(
  prisma: PrismaClient,
  reply: FastifyReply,
  baseUrl: string,
  purpose: string,
  payload: Prisma.InputJsonObject,
  ttlSeconds = 300,
): Promise<void> {
  const value = randomBytes(32).toString('base64url');
  await prisma.oAuthPayload.create({
    data: { type: STATE_TYPE, id: stateRowId(purpose, value), payload, expiresAt: new Date(Date.now() + ttlSeconds * 1000) },
  });
  reply.setCookie(`kitty_${purpose}`, value, {
    path: '/auth',
    httpOnly: true,
    sameSite: 'lax',
    secure: isSecure(baseUrl),
    maxAge: ttlSeconds,
  });
}

export async function takeState<T>(prisma: PrismaClient, req: FastifyRequest, reply: FastifyReply, purpose: string): Promise<T | null> {
  const value = req.cookies?.[`kitty_${purpose}`];
  if (!value) return null;
  reply.clearCookie(`kitty_${purpose}`, { path: '/auth' });
  const id = stateRowId(purpose, value);
  // DELETE … RETURNING: exactly one request can use a given state.
  const rows = await prisma.$queryRaw<
    Array<{ payload: unknown; expires_at: Date | null }>
  >`DELETE FROM oauth_payloads WHERE type = ${STATE_TYPE} AND id = ${id} RETURNING payload, expires_at`;
  const row = rows[0];
  if (!row || (row.expires_at && row.expires_at.getTime() <= Date.now())) return null;
  return row.payload as T;
}
