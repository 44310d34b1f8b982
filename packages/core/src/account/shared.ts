/** What the account router's pages share: key kinds, the change transaction with its log entry, ownership checks, projections. */
import type { Prisma } from '@kitty/db';
import type { Db } from '../context.ts';
import { ToolError } from '../errors.ts';
import { text } from '../text.ts';
import { recordSecurityEvent, type SecurityEventType } from '../people/sessions.ts';
import { type AccountContext } from './trpc.ts';

/** Scopes of the two kinds of key a person can create. */
export const KEY_ACCESS = { read: ['svc:read'], read_write: ['svc:read', 'svc:write'] } as const;
export type KeyAccess = keyof typeof KEY_ACCESS;
/** Longest expiry a person can choose for a new key, days. */
export const MAX_KEY_EXPIRY_DAYS = 3650;

export type PersonCtx = AccountContext & { session: { humanId: string; sessionId: string } };

/** One transaction for a change, with its security-log entry. */
export async function change<T>(
  ctx: PersonCtx,
  fn: (tx: Db, log: (type: SecurityEventType, agentId: string | null, details: Prisma.InputJsonObject) => Promise<void>) => Promise<T>,
): Promise<T> {
  return ctx.services.prisma.$transaction(async (tx) => {
    const log = (type: SecurityEventType, agentId: string | null, details: Prisma.InputJsonObject) =>
      recordSecurityEvent(tx, { humanId: ctx.session.humanId, type, agentId, details, origin: ctx.origin });
    return fn(tx, log);
  });
}

export function notFound(what: string): ToolError {
  return new ToolError('NOT_FOUND', `No such ${what} among yours.`, { suggestedAction: 'Reload the account page to see what exists now.' });
}

/** The agent, if this person owns it. @throws NOT_FOUND otherwise (also for other people's agents). */
export async function ownAgent(db: Db, humanId: string, agentId: string) {
  const agent = await db.agent.findFirst({ where: { id: agentId, humanId }, select: { id: true, handle: true, displayName: true } });
  if (!agent) throw notFound('agent');
  return agent;
}

/** The key, if its agent belongs to this person. @throws NOT_FOUND otherwise. */
export async function ownKey(db: Db, humanId: string, keyId: string) {
  const key = await db.apiKey.findFirst({
    where: { id: keyId, agent: { humanId } },
    include: { agent: { select: { id: true, handle: true } } },
  });
  if (!key) throw notFound('key');
  return key;
}

export type KeyRow = {
  id: string;
  prefix: string;
  label: string | null;
  scopes: string[];
  createdAt: Date;
  lastUsedAt: Date | null;
  expiresAt: Date | null;
  rotatedAt: Date | null;
};

/** A key as the page shows it (never the secret, only its first characters). */
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
    status: (expired ? 'expired' : k.rotatedAt ? 'rotated' : 'active') as 'active' | 'rotated' | 'expired',
  };
}

export function toAgentOut(a: {
  id: string;
  handle: string;
  displayName: string;
  description: string | null;
  createdAt: Date;
  lastActiveAt: Date | null;
}) {
  return {
    agent_id: a.id,
    handle: a.handle,
    display_name: a.displayName,
    description: a.description,
    created_at: a.createdAt.toISOString(),
    last_active_at: a.lastActiveAt?.toISOString() ?? null,
  };
}

export const keyLabel = text(1, 60, 'label');
