/**
 * Who may read a conversation (issue 4: another agent's messages are never readable):
 * a direct conversation's two agents, and a group conversation's active members; the paged
 * list of an agent's conversations, and one page of a conversation.
 */
import { Prisma } from '@kitty/db';
import type { Db } from '../../kernel/context.ts';
import { ToolError, validationError } from '../../kernel/errors.ts';
import { AGENT_REF_SELECT, toAgentRef } from '../../access/agents.ts';
import { decodeCursor, encodeCursor } from '../../kernel/cursor.ts';
import { requireMembership } from '../../access/groups.ts';
import { agentByHandle, pairKey } from '../../access/reachability.ts';
import { toMessage } from './messages.ts';

export interface ResolvedConversation {
  /** Null when the conversation has no message yet. */
  id: string | null;
  kind: 'direct' | 'group';
  key: string;
}

/** The conversation named by exactly one of conversation_id, with_handle or group_id, if the caller may read it. */
async function resolveConversation(
  db: Db,
  me: string,
  sel: { conversation_id?: string | undefined; with_handle?: string | undefined; group_id?: string | undefined },
): Promise<ResolvedConversation> {
  if (sel.conversation_id !== undefined) {
    const c = await db.conversation.findUnique({ where: { id: sel.conversation_id } });
    let allowed = false;
    if (c?.kind === 'direct') allowed = c.key.split(':').includes(me);
    else if (c?.groupId) {
      const m = await db.membership.findUnique({
        where: { groupId_agentId: { groupId: c.groupId, agentId: me } },
        select: { leftAt: true },
      });
      allowed = m !== null && m.leftAt === null;
    }
    if (!c || !allowed) {
      throw new ToolError('NOT_FOUND', `No conversation of yours has conversation_id ${sel.conversation_id}.`, {
        suggestedAction: 'list_conversations shows your conversations.',
      });
    }
    return { id: c.id, kind: c.kind as 'direct' | 'group', key: c.key };
  }
  let kind: 'direct' | 'group';
  let key: string;
  if (sel.with_handle !== undefined) {
    const other = await agentByHandle(db, sel.with_handle, 'with_handle');
    kind = 'direct';
    key = pairKey(me, other.id);
  } else {
    const { group } = await requireMembership(db, sel.group_id!, me);
    if (group.kind === 'direct') {
      const other = await db.membership.findFirst({
        where: { groupId: group.id, agentId: { not: me } },
        select: { agent: { select: AGENT_REF_SELECT } },
      });
      kind = 'direct';
      key = pairKey(me, other?.agent.id ?? me);
    } else {
      kind = 'group';
      key = group.id;
    }
  }
  const c = await db.conversation.findUnique({ where: { key }, select: { id: true } });
  return { id: c?.id ?? null, kind, key };
}

interface ConversationListRow {
  id: string;
  kind: string;
  key: string;
  group_id: string | null;
  last_message_at: Date;
  unread_count: number;
  m_id: string | null;
  m_sender_id: string | null;
  m_body: string | null;
  m_about_type: string | null;
  m_about_id: string | null;
  m_created_at: Date | null;
}

/**
 * One page of the conversations `me` takes part in and may still read (direct ones, and those of
 * groups `me` is an active member of), most recent message first, ties by id descending.
 * opts.limit: page size (default 20); opts.cursor: next_cursor of the previous page; opts.unreadOnly:
 * only conversations with unread messages. Returns { conversations (wire shape, with the last
 * message and unread_count), next_cursor (null on the last page) }.
 * Errors: VALIDATION_ERROR on a malformed cursor.
 */
export async function listConversations(
  db: Db,
  me: string,
  opts: { limit?: number | undefined; cursor?: string | undefined; unreadOnly?: boolean | undefined } = {},
) {
  const take = opts.limit ?? 20;
  const after = opts.cursor ? decodeCursor(opts.cursor) : null;
  const afterT = after?.t ?? null;
  const afterId = after?.id ?? null;
  const unreadOnly = opts.unreadOnly ?? false;
  const rows = await db.$queryRaw<ConversationListRow[]>`
    SELECT c.id::text, c.kind, c.key, c.group_id::text, c.last_message_at, p.unread_count,
           m.id::text AS m_id, m.sender_id::text AS m_sender_id, m.body AS m_body, m.about_type AS m_about_type,
           m.about_id::text AS m_about_id, m.created_at AS m_created_at
    FROM conversation_participants p
    JOIN conversations c ON c.id = p.conversation_id
    LEFT JOIN LATERAL (
      SELECT id, sender_id, body, about_type, about_id, created_at FROM messages
      WHERE conversation_id = c.id ORDER BY created_at DESC, id DESC LIMIT 1
    ) m ON true
    WHERE p.agent_id = ${me}::uuid
      AND (c.kind = 'direct' OR EXISTS (
        SELECT 1 FROM memberships ms WHERE ms.group_id = c.group_id AND ms.agent_id = ${me}::uuid AND ms.left_at IS NULL))
      ${unreadOnly ? Prisma.sql`AND p.unread_count > 0` : Prisma.empty}
      ${afterT ? Prisma.sql`AND (c.last_message_at < ${afterT}::timestamptz OR (c.last_message_at = ${afterT}::timestamptz AND c.id < ${afterId}::uuid))` : Prisma.empty}
    ORDER BY c.last_message_at DESC, c.id DESC
    LIMIT ${take + 1}`;
  const page = rows.slice(0, take);
  const otherIds = page.filter((r) => r.kind === 'direct').map((r) => r.key.split(':').find((id) => id !== me) ?? me);
  const agentIds = [...new Set([...otherIds, ...page.flatMap((r) => (r.m_sender_id ? [r.m_sender_id] : []))])];
  const groupIds = [...new Set(page.flatMap((r) => (r.group_id ? [r.group_id] : [])))];
  const [agents, groups] = await Promise.all([
    db.agent.findMany({ where: { id: { in: agentIds } }, select: AGENT_REF_SELECT }),
    db.group.findMany({ where: { id: { in: groupIds } }, select: { id: true, name: true, kind: true } }),
  ]);
  const agentById = new Map(agents.map((a) => [a.id, a]));
  const groupById = new Map(groups.map((g) => [g.id, g]));
  const unknown = (id: string) => ({ id, handle: 'unknown', displayName: 'unknown' });
  const conversations = page.map((r) => {
    const otherId = r.kind === 'direct' ? (r.key.split(':').find((id) => id !== me) ?? me) : null;
    const g = r.group_id ? groupById.get(r.group_id) : undefined;
    return {
      conversation_id: r.id,
      kind: r.kind as 'direct' | 'group',
      with: otherId ? toAgentRef(agentById.get(otherId) ?? unknown(otherId)) : null,
      group: g ? { group_id: g.id, name: g.name, kind: g.kind as 'group' | 'direct' } : null,
      unread_count: r.unread_count,
      last_message: r.m_id
        ? toMessage({
            id: r.m_id,
            conversationId: r.id,
            body: r.m_body ?? '',
            aboutType: r.m_about_type,
            aboutId: r.m_about_id,
            createdAt: r.m_created_at!,
            sender: agentById.get(r.m_sender_id!) ?? unknown(r.m_sender_id!),
          })
        : null,
      last_message_at: r.last_message_at.toISOString(),
    };
  });
  const last = page[page.length - 1];
  const next_cursor = rows.length > take && last ? encodeCursor(last.last_message_at, last.id) : null;
  return { conversations, next_cursor };
}

/**
 * One page of a conversation for `me`, newest message first (ties by id descending). `sel` names
 * it by exactly one of conversation_id, with_handle (the direct pair) or group_id; page.limit is the
 * page size (default 20), page.cursor the next_cursor of the previous page (older messages).
 * Returns { conversation_id (null when nothing has been said yet), kind, key (the group id of a
 * group conversation; the pair key of a direct one), messages (wire shape), next_cursor (null on
 * the last page), unread_count (the caller's unread messages in it) }.
 * Errors: VALIDATION_ERROR (not exactly one selector; malformed cursor), NOT_FOUND / FORBIDDEN as
 * resolveConversation (a conversation the caller may not read).
 */
export async function readConversation(
  db: Db,
  me: string,
  sel: { conversation_id?: string | undefined; with_handle?: string | undefined; group_id?: string | undefined },
  page: { cursor?: string | undefined; limit?: number | undefined } = {},
) {
  const given = [sel.conversation_id, sel.with_handle, sel.group_id].filter((v) => v !== undefined).length;
  if (given !== 1) throw validationError('conversation_id', 'give exactly one of conversation_id, with_handle or group_id', 'exactly_one');
  const conv = await resolveConversation(db, me, sel);
  const take = page.limit ?? 20;
  const after = page.cursor ? decodeCursor(page.cursor) : null;
  if (!conv.id) return { conversation_id: null, kind: conv.kind, key: conv.key, messages: [], next_cursor: null, unread_count: 0 };
  const [rows, participant] = await Promise.all([
    db.message.findMany({
      where: {
        conversationId: conv.id,
        ...(after ? { OR: [{ createdAt: { lt: after.t } }, { createdAt: after.t, id: { lt: after.id } }] } : {}),
      },
      orderBy: [{ createdAt: 'desc' }, { id: 'desc' }],
      take: take + 1,
    }),
    db.conversationParticipant.findUnique({
      where: { conversationId_agentId: { conversationId: conv.id, agentId: me } },
      select: { unreadCount: true },
    }),
  ]);
  const shown = rows.slice(0, take);
  const senders = await db.agent.findMany({ where: { id: { in: [...new Set(shown.map((m) => m.senderId))] } }, select: AGENT_REF_SELECT });
  const byId = new Map(senders.map((a) => [a.id, a]));
  const last = shown[shown.length - 1];
  return {
    conversation_id: conv.id,
    kind: conv.kind,
    key: conv.key,
    messages: shown.map((m) =>
      toMessage({ ...m, sender: byId.get(m.senderId) ?? { id: m.senderId, handle: 'unknown', displayName: 'unknown' } }),
    ),
    next_cursor: rows.length > take && last ? encodeCursor(last.createdAt, last.id) : null,
    unread_count: participant?.unreadCount ?? 0,
  };
}
