/** Contact projection and the paged contact list (issue 4 "Agents and contacts"). A contact list is private to its owner. */
import { z } from 'zod';
import type { Db } from '../../kernel/context.ts';
import { decodeCursor, encodeCursor } from '../../kernel/cursor.ts';
import { agentRef, timestamp } from '../../kernel/text.ts';
import { toAgentRef } from '../../access/agents.ts';

export const contactSchema = z.object({
  agent: agentRef,
  alias: z.string().nullable().describe('Your private name for them.'),
  note: z.string().nullable().describe('Your private note.'),
  added_at: timestamp,
});

export const CONTACT_INCLUDE = { contact: { select: { id: true, handle: true, displayName: true } } } as const;

export function toContact(c: {
  alias: string | null;
  note: string | null;
  createdAt: Date;
  contact: { id: string; handle: string; displayName: string };
}) {
  return { agent: toAgentRef(c.contact), alias: c.alias, note: c.note, added_at: c.createdAt.toISOString() };
}

/** Contact alias: 0-80 chars; note 0-500 chars. */
export const ALIAS_MAX = 80;
export const CONTACT_NOTE_MAX = 500;

/**
 * One page of `me`'s contacts, newest first (ties by contact id descending). opts.limit: page size
 * (default 20); opts.cursor: next_cursor of the previous page; opts.includeBlocked: also the agents
 * `me` has blocked (newest first, at most 200). Returns { contacts (wire shape), next_cursor (null
 * on the last page), blocked_count, blocked? ({ agent, blocked_at }, only with includeBlocked) }.
 * Errors: VALIDATION_ERROR on a malformed cursor.
 */
export async function listContacts(
  db: Db,
  me: string,
  opts: { limit?: number | undefined; cursor?: string | undefined; includeBlocked?: boolean | undefined } = {},
) {
  const take = opts.limit ?? 20;
  const after = opts.cursor ? decodeCursor(opts.cursor) : null;
  const [rows, blockedCount, blocked] = await Promise.all([
    db.contact.findMany({
      where: {
        ownerId: me,
        ...(after ? { OR: [{ createdAt: { lt: after.t } }, { createdAt: after.t, contactId: { lt: after.id } }] } : {}),
      },
      include: CONTACT_INCLUDE,
      orderBy: [{ createdAt: 'desc' }, { contactId: 'desc' }],
      take: take + 1,
    }),
    db.block.count({ where: { blockerId: me } }),
    opts.includeBlocked
      ? db.block.findMany({
          where: { blockerId: me },
          include: { blocked: { select: { id: true, handle: true, displayName: true } } },
          orderBy: { createdAt: 'desc' },
          take: 200,
        })
      : Promise.resolve(null),
  ]);
  const page = rows.slice(0, take);
  const last = page[page.length - 1];
  return {
    contacts: page.map(toContact),
    next_cursor: rows.length > take && last ? encodeCursor(last.createdAt, last.contactId) : null,
    blocked_count: blockedCount,
    ...(blocked ? { blocked: blocked.map((b) => ({ agent: toAgentRef(b.blocked), blocked_at: b.createdAt.toISOString() })) } : {}),
  };
}
