/**
 * Managing an agent's API keys: the functions the account page (people/account-router.ts) and the key tools
 * (create_api_key, list_api_keys, revoke_api_key, rotate_api_key) share.
 *
 * - A key is read-only (`svc:read`) or read+write (`svc:read svc:write`), with an optional label and expiry.
 * - The secret exists only in the answer that creates it; only its SHA-256 digest and first characters are stored.
 * - From a tool, keys are managed only with a current API key (`lockKeysForManagement`): never with an OAuth
 *   token (it acts for a person, who manages keys on the account page), never with a key in its rotation grace
 *   (a leaked old key must not mint a permanent one), and changes need svc:write (the scope rule).
 */
import { z } from 'zod';
import type { Prisma } from '@kitty/db';
import type { AuthInfo, Db, Services } from '../../kernel/context.ts';
import { timestamp } from '../../kernel/text.ts';
import { recordSecurityEvent } from '../../access/person-sessions.ts';
import { ToolError } from '../../kernel/errors.ts';
import { generateApiKey } from '../../access/api-keys.ts';

/** Scopes of the two kinds of key. */
export const KEY_ACCESS = { read: ['svc:read'], read_write: ['svc:read', 'svc:write'] } as const;
export type KeyAccess = keyof typeof KEY_ACCESS;
/** Longest expiry of a new key, days. */
export const MAX_KEY_EXPIRY_DAYS = 3650;

export interface KeyRow {
  id: string;
  prefix: string;
  label: string | null;
  scopes: string[];
  createdAt: Date;
  lastUsedAt: Date | null;
  expiresAt: Date | null;
  rotatedAt: Date | null;
}

type KeyStatus = 'active' | 'rotated' | 'expired';

/** A key as it is shown (never the secret, only its first characters). */
export function toKey(k: KeyRow, now: Date) {
  const expired = k.expiresAt !== null && k.expiresAt.getTime() <= now.getTime();
  return {
    key_id: k.id,
    prefix: k.prefix,
    label: k.label,
    scopes: k.scopes,
    access: (k.scopes.includes('svc:write') ? 'read_write' : 'read') as KeyAccess,
    created_at: k.createdAt.toISOString(),
    last_used_at: k.lastUsedAt?.toISOString() ?? null,
    expires_at: k.expiresAt?.toISOString() ?? null,
    rotated_at: k.rotatedAt?.toISOString() ?? null,
    /** active: works; rotated: works until expires_at (grace), then stops; expired: no longer works. */
    status: (expired ? 'expired' : k.rotatedAt ? 'rotated' : 'active') as KeyStatus,
  };
}
export type KeyOut = ReturnType<typeof toKey>;

/**
 * Creates a key for `agentId` (call inside the caller's transaction).
 * @returns the stored row and the secret (show it once; it is not stored)
 */
export async function createApiKey(
  db: Db,
  opts: { agentId: string; access: KeyAccess; label?: string | null; expiresAt?: Date | null; now: Date },
): Promise<{ row: KeyRow; apiKey: string }> {
  const key = generateApiKey();
  const row = await db.apiKey.create({
    data: {
      agentId: opts.agentId,
      digest: key.digest,
      prefix: key.prefix,
      scopes: [...KEY_ACCESS[opts.access]],
      label: opts.label ?? null,
      expiresAt: opts.expiresAt ?? null,
      createdAt: opts.now,
    },
  });
  return { row, apiKey: key.key };
}

/** An agent's keys, newest first, including rotated and expired ones (until they are cleaned up). */
export async function listApiKeys(db: Db, agentId: string, now: Date): Promise<KeyOut[]> {
  const rows = await db.apiKey.findMany({ where: { agentId }, orderBy: [{ createdAt: 'desc' }, { id: 'desc' }] });
  return rows.map((k) => toKey(k, now));
}

/** Deletes one of the agent's keys at once. @returns the deleted key's prefix, or null when it is not one of the agent's. */
export async function deleteApiKey(db: Db, agentId: string, keyId: string): Promise<{ prefix: string } | null> {
  const rows = await db.$queryRaw<Array<{ prefix: string }>>`
    DELETE FROM api_keys WHERE id = ${keyId}::uuid AND agent_id = ${agentId}::uuid RETURNING prefix`;
  return rows[0] ?? null;
}

/**
 * The rule for managing keys from a tool: the caller's credential (`auth`) must be a current API key. Locks the
 * agent's key rows in id order (key changes of one agent serialise) and reads them from the database,
 * not the authentication cache (which may be another instance's).
 * @throws FORBIDDEN naming why: an OAuth token, another kind of credential, or a key in its rotation grace
 * @returns the caller's key id
 */
export async function lockKeysForManagement(db: Db, auth: AuthInfo, services: Pick<Services, 'config'>): Promise<{ keyId: string }> {
  const { keyId } = assertKeyCredential(auth, services);
  const keys = await db.$queryRaw<Array<{ id: string; rotated_at: Date | null; expires_at: Date | null }>>`
    SELECT id, rotated_at, expires_at FROM api_keys WHERE agent_id = ${auth.agentId}::uuid ORDER BY id FOR UPDATE`;
  const mine = keys.find((k) => k.id === keyId);
  if (!mine || mine.rotated_at !== null) throw inGrace(mine?.expires_at ?? null);
  return { keyId };
}

/**
 * The credential part of the rule, without the database: an API key, not an OAuth token, not known to be in
 * its rotation grace (list_api_keys; changes also re-read the key under a lock: `lockKeysForManagement`).
 */
export function assertKeyCredential(auth: AuthInfo, services: Pick<Services, 'config'>): { keyId: string } {
  if (auth.credential === 'oauth') {
    throw new ToolError('FORBIDDEN', 'API keys cannot be created, listed, rotated or revoked with an OAuth access token.', {
      details: { credential: 'oauth' },
      suggestedAction: `The person who owns this agent manages its API keys on the account page: ${services.config.baseUrl}/account`,
    });
  }
  if (auth.credential !== 'api_key' || !auth.keyId) {
    throw new ToolError('FORBIDDEN', 'API keys are managed with an API key; this credential is not one.', {
      suggestedAction: "Call the tool with the agent's current API key as the Bearer token.",
    });
  }
  if (auth.retired) throw inGrace(null);
  return { keyId: auth.keyId };
}

function inGrace(until: Date | null): ToolError {
  return new ToolError(
    'FORBIDDEN',
    'This API key was replaced by rotation and is in its grace period' +
      (until ? ` (until ${until.toISOString()})` : '') +
      ': it still works for other tools, but a key in grace never manages keys.',
    { details: { key_state: 'in_grace' }, suggestedAction: 'Use the newest key (the one the last rotation returned).' },
  );
}

/** A key on the wire (list_api_keys, create_api_key). */
export const apiKeySchema = z.object({
  key_id: z.uuid(),
  prefix: z.string().describe('First characters of the secret, to recognise it.'),
  label: z.string().nullable(),
  scopes: z.array(z.string()),
  access: z.enum(['read', 'read_write']),
  created_at: timestamp,
  last_used_at: timestamp.nullable().describe('Updated at most once a minute.'),
  expires_at: timestamp.nullable(),
  rotated_at: timestamp.nullable(),
  status: z.enum(['active', 'rotated', 'expired']).describe('rotated: works until expires_at, then stops.'),
});

/** Writes a key change to the security log of the person who owns the agent, if any (as the account page does). */
export async function logKeyEvent(
  db: Db,
  agentId: string,
  type: 'key_created' | 'key_revoked',
  details: Prisma.InputJsonObject,
): Promise<void> {
  const agent = await db.agent.findUnique({ where: { id: agentId }, select: { humanId: true, handle: true } });
  if (agent?.humanId)
    await recordSecurityEvent(db, { humanId: agent.humanId, type, agentId, details: { handle: agent.handle, via: 'api', ...details } });
}
