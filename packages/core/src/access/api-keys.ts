/**
 * API keys (DESIGN.md §4 "Auth"): `kitty_` + 43 base62 chars of 256-bit randomness + 6 base62
 * chars of CRC-32 checksum, so secret scanners can recognise a Kitty key and reject typos offline
 * (the GitHub token format idea). Stored only as SHA-256: the key is high-entropy, so a slow
 * password hash (argon2) adds latency without adding security; lookup is by digest (an index
 * equality match, no secret-dependent comparison in our code).
 */
import { hash, randomBytes } from 'node:crypto';
import { crc32 } from 'node:zlib';
import type { Db } from '../kernel/context.ts';

export const API_KEY_PREFIX = 'kitty_';
const ALPHABET = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';
const BODY_LENGTH = 43; // ceil(256 / log2(62))
const CHECKSUM_LENGTH = 6; // 62^6 > 2^32

function base62(n: bigint, width: number): string {
  let out = '';
  for (let i = 0; i < width; i++) {
    out = ALPHABET[Number(n % 62n)]! + out;
    n /= 62n;
  }
  return out;
}

/** CRC-32 of `body` in CHECKSUM_LENGTH base62 digits (number arithmetic: a CRC-32 is below 2^32). */
function checksum(body: string): string {
  let n = crc32(body);
  let out = '';
  for (let i = 0; i < CHECKSUM_LENGTH; i++) {
    out = ALPHABET[n % 62]! + out;
    n = Math.floor(n / 62);
  }
  return out;
}

/** `kitty_`, then the body and checksum in base62. */
const KEY_SHAPE = new RegExp(`^${API_KEY_PREFIX}[0-9A-Za-z]{${BODY_LENGTH + CHECKSUM_LENGTH}}$`);

/** Scopes every API key carries (interface-spec "Authentication"). */
export const API_KEY_SCOPES = ['svc:read', 'svc:write'] as const;
/** How long a rotated-out key keeps working (interface-spec "API key" state table): 10 minutes. */
export const ROTATION_GRACE_SECONDS = 600;

/** A new key: the secret (show once), its digest (store) and display prefix. */
export function generateApiKey(): { key: string; digest: Uint8Array<ArrayBuffer>; prefix: string } {
  const body = base62(BigInt('0x' + randomBytes(32).toString('hex')), BODY_LENGTH);
  const key = `${API_KEY_PREFIX}${body}${checksum(body)}`;
  return { key, digest: digestApiKey(key), prefix: key.slice(0, API_KEY_PREFIX.length + 6) };
}

/** True when the string has the shape and checksum of a Kitty key (cheap rejection before any DB work). */
export function isWellFormedApiKey(key: string): boolean {
  if (!KEY_SHAPE.test(key)) return false;
  return checksum(key.slice(API_KEY_PREFIX.length, API_KEY_PREFIX.length + BODY_LENGTH)) === key.slice(API_KEY_PREFIX.length + BODY_LENGTH);
}

/** SHA-256 of the key: what is stored and looked up. */
export function digestApiKey(key: string): Uint8Array<ArrayBuffer> {
  return new Uint8Array(hash('sha256', key, 'buffer'));
}

/** The same SHA-256 as `digestApiKey`, as 64 hex digits (an in-memory cache key). */
export function digestApiKeyHex(key: string): string {
  return hash('sha256', key, 'hex');
}

/**
 * Rotation (interface-spec "API key" states): the targeted keys are marked rotated (`rotated_at`)
 * and keep working for ROTATION_GRACE_SECONDS (a key already expiring sooner keeps its earlier
 * expiry); one new key is issued. Used by rotate_api_key (every key of the agent, full scopes)
 * and the account page (one key; the new key keeps its scopes, label and expiry).
 * Call inside the caller's transaction, then `Services.onCredentialsChanged(agentId)`.
 * @returns the new key's secret (show once), its id and prefix, and when the old key(s) stop working
 */
export async function rotateApiKeys(
  db: Db,
  opts: { agentId: string; now: Date; keyIds?: string[]; newKey: { scopes: string[]; label?: string | null; expiresAt?: Date | null } },
): Promise<{ apiKey: string; keyId: string; prefix: string; oldKeyExpiresAt: Date }> {
  const graceEnd = new Date(opts.now.getTime() + ROTATION_GRACE_SECONDS * 1000);
  // Every targeted key not yet retired becomes "in grace": rotated_at = now, expiry at most graceEnd.
  if (opts.keyIds) {
    await db.$executeRaw`
      UPDATE api_keys SET rotated_at = ${opts.now}::timestamptz, expires_at = LEAST(COALESCE(expires_at, ${graceEnd}::timestamptz), ${graceEnd}::timestamptz)
      WHERE agent_id = ${opts.agentId}::uuid AND rotated_at IS NULL AND id = ANY(${opts.keyIds}::uuid[])`;
  } else {
    await db.$executeRaw`
      UPDATE api_keys SET rotated_at = ${opts.now}::timestamptz, expires_at = LEAST(COALESCE(expires_at, ${graceEnd}::timestamptz), ${graceEnd}::timestamptz)
      WHERE agent_id = ${opts.agentId}::uuid AND rotated_at IS NULL`;
  }
  const key = generateApiKey();
  const row = await db.apiKey.create({
    data: {
      agentId: opts.agentId,
      digest: key.digest,
      prefix: key.prefix,
      scopes: opts.newKey.scopes,
      label: opts.newKey.label ?? null,
      expiresAt: opts.newKey.expiresAt ?? null,
    },
    select: { id: true },
  });
  return { apiKey: key.key, keyId: row.id, prefix: key.prefix, oldKeyExpiresAt: graceEnd };
}
