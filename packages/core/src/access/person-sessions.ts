/**
 * Browser sessions of people (humans) and their security log.
 *
 * A session is a random 256-bit value in the `kitty_session` cookie (HttpOnly, SameSite=Lax,
 * Secure when the base URL is https); only its SHA-256 digest is stored (table human_sessions),
 * so a database leak yields no usable cookie. Used by the sign-in (passkeys, OpenID provider),
 * the OAuth consent step and the account page's tRPC router.
 */
import { createHash, randomBytes } from 'node:crypto';
import type { PrismaClient, Prisma } from '@kitty/db';

/** Name of the session cookie. */
export const SESSION_COOKIE = 'kitty_session';
/** Lifetime of a session, seconds (30 days, sliding: see resolveSession). */
export const SESSION_TTL_SECONDS = 30 * 24 * 3600;
/** `last_seen_at` / expiry are written at most this often per session, milliseconds. */
const TOUCH_INTERVAL_MS = 60_000;

type DbLike = PrismaClient | Prisma.TransactionClient;

/** Where a request came from, for the security log. */
export interface RequestOrigin {
  ip?: string | null;
  userAgent?: string | null;
}

/** SHA-256 of a session cookie value. */
export function sessionDigest(cookieValue: string): Uint8Array<ArrayBuffer> {
  return new Uint8Array(createHash('sha256').update(cookieValue, 'utf8').digest());
}

/**
 * Starts a session for a human.
 * @returns the cookie value (show it to the browser once, never store it) and the expiry
 */
export async function createSession(
  db: DbLike,
  humanId: string,
  origin: RequestOrigin,
  now = new Date(),
): Promise<{ cookieValue: string; sessionId: string; expiresAt: Date }> {
  const cookieValue = randomBytes(32).toString('base64url');
  const expiresAt = new Date(now.getTime() + SESSION_TTL_SECONDS * 1000);
  const row = await db.humanSession.create({
    data: {
      humanId,
      digest: sessionDigest(cookieValue),
      expiresAt,
      ip: origin.ip ?? null,
      userAgent: origin.userAgent?.slice(0, 512) ?? null,
      createdAt: now,
      lastSeenAt: now,
    },
    select: { id: true },
  });
  return { cookieValue, sessionId: row.id, expiresAt };
}

/**
 * The human behind a session cookie, or null when the cookie is missing, malformed, unknown or expired.
 * Slides the expiry forward (at most once a minute per session).
 */
export async function resolveSession(
  db: DbLike,
  cookieValue: string | undefined | null,
  now = new Date(),
): Promise<{ sessionId: string; humanId: string } | null> {
  if (!cookieValue || !/^[A-Za-z0-9_-]{43}$/.test(cookieValue)) return null;
  const row = await db.humanSession.findUnique({
    where: { digest: sessionDigest(cookieValue) },
    select: { id: true, humanId: true, expiresAt: true, lastSeenAt: true },
  });
  if (!row || row.expiresAt.getTime() <= now.getTime()) return null;
  if (now.getTime() - row.lastSeenAt.getTime() > TOUCH_INTERVAL_MS) {
    await db.humanSession.update({
      where: { id: row.id },
      data: { lastSeenAt: now, expiresAt: new Date(now.getTime() + SESSION_TTL_SECONDS * 1000) },
    });
  }
  return { sessionId: row.id, humanId: row.humanId };
}

/** Ends a session (sign-out). Unknown cookies are ignored. */
export async function destroySession(db: DbLike, cookieValue: string | undefined | null): Promise<void> {
  if (!cookieValue) return;
  await db.humanSession.deleteMany({ where: { digest: sessionDigest(cookieValue) } });
}

/** Security event types shown in the account page's security log. */
export type SecurityEventType =
  | 'signed_up'
  | 'signed_in'
  | 'signed_out'
  | 'passkey_added'
  | 'passkey_removed'
  | 'passkey_renamed'
  | 'agent_created'
  | 'agent_claimed'
  | 'key_created'
  | 'key_rotated'
  | 'key_revoked'
  | 'app_connected'
  | 'app_disconnected'
  | 'webhook_paused'
  | 'webhook_resumed'
  | 'webhook_deleted';

/** Appends an entry to a human's security log (call it inside the transaction of the change it records). */
export async function recordSecurityEvent(
  db: DbLike,
  event: { humanId: string; type: SecurityEventType; agentId?: string | null; details?: Prisma.InputJsonObject; origin?: RequestOrigin },
): Promise<void> {
  await db.securityEvent.create({
    data: {
      humanId: event.humanId,
      agentId: event.agentId ?? null,
      type: event.type,
      ip: event.origin?.ip ?? null,
      userAgent: event.origin?.userAgent?.slice(0, 512) ?? null,
      details: event.details ?? {},
    },
  });
}
