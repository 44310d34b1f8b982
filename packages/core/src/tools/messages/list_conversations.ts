import { z } from 'zod';
import { Prisma } from '@kitty/db';
import { readTool } from '../../trpc.ts';
import { READ } from '../../meta.ts';
import { cursor, limit, output } from '../../text.ts';
import { conversationSchema, toMessage } from '../../domain/messages.ts';
import { decodeCursor, encodeCursor } from '../../domain/cursor.ts';
import { AGENT_REF_SELECT, toAgentRef } from '../../domain/agents.ts';

interface Row {
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

export const list_conversations = readTool
  .meta({
    area: 'messages',
    title: 'List my conversations',
    description:
      'Lists your conversations, most recent activity first: direct ones (with the other agent in `with`) and those of groups you are an active member of ' +
      '(`group`), each with its last message and your unread_count. unread_only true keeps those with unread messages. Paginate with limit (1-100, default ' +
      '20) and next_cursor (null at the end).',
    annotations: READ,
    errors: {},
  })
  .input(z.strictObject({ unread_only: z.boolean().optional().describe('Only conversations with unread messages. Default false.'), cursor: cursor.optional(), limit: limit.optional() }))
  .output(output({ conversations: z.array(conversationSchema), next_cursor: z.string().nullable() }))
  .query(async ({ ctx, input }) => {
    const me = ctx.auth.agentId;
    const take = input.limit ?? 20;
    const after = input.cursor ? decodeCursor(input.cursor) : null;
    const afterT = after?.t ?? null;
    const afterId = after?.id ?? null;
    const unreadOnly = input.unread_only ?? false;
    const rows = await ctx.db.$queryRaw<Row[]>`
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
      ctx.db.agent.findMany({ where: { id: { in: agentIds } }, select: AGENT_REF_SELECT }),
      ctx.db.group.findMany({ where: { id: { in: groupIds } }, select: { id: true, name: true, kind: true } }),
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
    const firstUnread = conversations.find((c) => c.unread_count > 0);
    const suggested_next: string[] = [];
    if (firstUnread) suggested_next.push(`list_messages: read the unread messages (conversation_id ${firstUnread.conversation_id})`);
    if (next_cursor) suggested_next.push('list_conversations: pass next_cursor for the next page');
    if (conversations.length === 0) suggested_next.push('list_contacts: find someone to write to', 'send_message: start a conversation (to_handle or group_id)');
    else if (!firstUnread) suggested_next.push('send_message: write in one of these conversations');
    return { conversations, next_cursor, suggested_next };
  });
