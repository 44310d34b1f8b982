/**
 * Marking inbox items read (mark_inbox_read): by ids, by conversation, or all, keeping the
 * conversations' unread counts and the agent's inbox counters in step, in the caller's transaction.
 */
import { Prisma } from '@kitty/db';
import type { Db } from '../../kernel/context.ts';
import type { Actor } from '../../kernel/actor.ts';
import { ToolError, validationError } from '../../kernel/errors.ts';
import { changeInboxCounters, flushInboxCounters } from '../../kernel/notify.ts';

/**
 * Marks `actor`'s unread items read at `now`; `sel` gives exactly one of item_ids (1-100 ids,
 * all must be the caller's; items already read are skipped), conversation_id (every message item of
 * it; its unread_count drops to 0) or all: true. Items already read count once even under concurrent
 * marks. Returns { marked (items changed now), unread, requires_action (the caller's counters as they
 * will be committed) }.
 * Errors: VALIDATION_ERROR (not exactly one selector), NOT_FOUND (a conversation the caller is not
 * in; item ids not the caller's — nothing is marked then).
 */
export async function markInboxRead(
  db: Db,
  actor: Pick<Actor, 'agentId'>,
  sel: { item_ids?: string[] | undefined; conversation_id?: string | undefined; all?: true | undefined },
  now: Date,
) {
  const me = actor.agentId;
  const given = [sel.item_ids, sel.conversation_id, sel.all].filter((v) => v !== undefined).length;
  if (given !== 1) throw validationError('item_ids', 'give exactly one of item_ids, conversation_id or all', 'exactly_one');
  // Lock order as everywhere in the inbox: item rows first, in id order (as a combined batched write locks the items it
  // resolves: kernel/group-commit.ts), then the agent's counter row (last, see inbox.ts). `read_at IS NULL` in the
  // UPDATE makes a concurrent duplicate mark count each item once.
  let changed: Array<{ entity_type: string | null; entity_id: string | null; kind: string }>;
  if (sel.conversation_id !== undefined) {
    const p = await db.conversationParticipant.findUnique({
      where: { conversationId_agentId: { conversationId: sel.conversation_id, agentId: me } },
    });
    if (!p)
      throw new ToolError('NOT_FOUND', `No conversation of yours has conversation_id ${sel.conversation_id}.`, {
        suggestedAction: 'list_conversations shows your conversations.',
      });
    changed = await markUnread(
      db,
      me,
      now,
      Prisma.sql`AND kind = 'message' AND entity_type = 'conversation' AND entity_id = ${sel.conversation_id}`,
    );
    await db.conversationParticipant.update({
      where: { conversationId_agentId: { conversationId: sel.conversation_id, agentId: me } },
      data: { unreadCount: 0, lastReadAt: now },
    });
  } else if (sel.all) {
    changed = await markUnread(db, me, now, Prisma.empty);
    await db.conversationParticipant.updateMany({
      where: { agentId: me, unreadCount: { gt: 0 } },
      data: { unreadCount: 0, lastReadAt: now },
    });
  } else {
    const ids = [...new Set(sel.item_ids!)];
    const mine = await db.inboxItem.findMany({ where: { agentId: me, id: { in: ids } }, select: { id: true } });
    if (mine.length !== ids.length) {
      const found = new Set(mine.map((m) => m.id));
      const unknown = ids.filter((id) => !found.has(id));
      throw new ToolError(
        'NOT_FOUND',
        `${unknown.length} of item_ids ${unknown.length === 1 ? 'is' : 'are'} not among your inbox items; nothing was marked.`,
        {
          details: { item_ids: unknown },
          suggestedAction: 'get_inbox lists your items and their item_id.',
        },
      );
    }
    changed = await markUnread(db, me, now, Prisma.sql`AND id = ANY(${sel.item_ids!}::uuid[])`);
    const perConversation = new Map<string, number>();
    for (const c of changed)
      if (c.kind === 'message' && c.entity_type === 'conversation' && c.entity_id)
        perConversation.set(c.entity_id, (perConversation.get(c.entity_id) ?? 0) + 1);
    for (const [conversationId, n] of perConversation) {
      await db.$executeRaw`
        UPDATE conversation_participants SET unread_count = GREATEST(unread_count - ${n}, 0), last_read_at = ${now}
        WHERE conversation_id = ${conversationId}::uuid AND agent_id = ${me}::uuid`;
    }
  }
  await changeInboxCounters(db, me, -changed.length, 0);
  await flushInboxCounters(db); // the counters as they will be committed, for the answer
  const agent = await db.agent.findUniqueOrThrow({ where: { id: me }, select: { inboxUnread: true, inboxRequiresAction: true } });
  return { marked: changed.length, unread: agent.inboxUnread, requires_action: agent.inboxRequiresAction };
}

/**
 * Marks `agentId`'s unread items that also match `filter` (an `AND …` fragment, or Prisma.empty for all) read at `now`,
 * locking them in id order; returns what each marked item is about.
 */
function markUnread(db: Db, agentId: string, now: Date, filter: Prisma.Sql) {
  return db.$queryRaw<Array<{ entity_type: string | null; entity_id: string | null; kind: string }>>`
    UPDATE inbox_items i SET read_at = ${now} FROM (
      SELECT id FROM inbox_items WHERE agent_id = ${agentId}::uuid AND read_at IS NULL ${filter} ORDER BY id FOR UPDATE) t
    WHERE i.id = t.id AND i.read_at IS NULL
    RETURNING i.entity_type, i.entity_id, i.kind`;
}
