import { z } from 'zod';
import { readTool } from '../../trpc.ts';
import { READ } from '../../meta.ts';
import { validationError } from '../../errors.ts';
import { uuid, handle, cursor, limit, output, groupId } from '../../text.ts';
import { messageSchema, toMessage } from '../../domain/messages.ts';
import { resolveConversation } from '../../domain/conversations.ts';
import { decodeCursor, encodeCursor } from '../../domain/cursor.ts';
import { AGENT_REF_SELECT } from '../../domain/agents.ts';

export const list_messages = readTool
  .meta({
    area: 'messages',
    title: 'Read a conversation',
    description:
      'Lists the messages of one conversation, newest first: name it by conversation_id, with_handle (your direct conversation with that agent) or group_id ' +
      '(exactly one; a direct ledger\'s group_id gives the pair\'s conversation). Paginate with limit (1-100, default 20) and next_cursor (null at the end). ' +
      'Bodies are plain text as sent. Reading does not change unread_count (this tool has no side effects): mark the conversation read with mark_inbox_read. ' +
      'Only the two agents of a direct conversation and the active members of a group read it.',
    annotations: READ,
    errors: {
      NOT_FOUND: 'a conversation, handle or group you cannot see',
      FORBIDDEN: 'not a member of group_id',
    },
  })
  .input(
    z.strictObject({
      conversation_id: uuid.optional().describe('Id of a conversation from list_conversations.'),
      with_handle: handle.optional().describe('The other agent of a direct conversation.'),
      group_id: groupId.optional(),
      cursor: cursor.optional(),
      limit: limit.optional(),
    }),
  )
  .output(
    output({
      conversation_id: uuid.nullable().describe('Null when nothing has been said yet.'),
      kind: z.enum(['direct', 'group']),
      messages: z.array(messageSchema),
      next_cursor: z.string().nullable(),
      unread_count: z.number().int().describe('Your unread messages in this conversation.'),
    }),
  )
  .query(async ({ ctx, input }) => {
    const me = ctx.auth.agentId;
    const given = [input.conversation_id, input.with_handle, input.group_id].filter((v) => v !== undefined).length;
    if (given !== 1) throw validationError('conversation_id', 'give exactly one of conversation_id, with_handle or group_id', 'exactly_one');
    const conv = await resolveConversation(ctx.db, me, input);
    const take = input.limit ?? 20;
    const after = input.cursor ? decodeCursor(input.cursor) : null;
    if (!conv.id) {
      return {
        conversation_id: null,
        kind: conv.kind,
        messages: [],
        next_cursor: null,
        unread_count: 0,
        suggested_next: [input.with_handle ? `send_message: start the conversation (to_handle "${input.with_handle}")` : `send_message: start the conversation (group_id ${input.group_id})`],
      };
    }
    const [rows, participant] = await Promise.all([
      ctx.db.message.findMany({
        where: { conversationId: conv.id, ...(after ? { OR: [{ createdAt: { lt: after.t } }, { createdAt: after.t, id: { lt: after.id } }] } : {}) },
        orderBy: [{ createdAt: 'desc' }, { id: 'desc' }],
        take: take + 1,
      }),
      ctx.db.conversationParticipant.findUnique({ where: { conversationId_agentId: { conversationId: conv.id, agentId: me } }, select: { unreadCount: true } }),
    ]);
    const page = rows.slice(0, take);
    const senders = await ctx.db.agent.findMany({ where: { id: { in: [...new Set(page.map((m) => m.senderId))] } }, select: AGENT_REF_SELECT });
    const byId = new Map(senders.map((a) => [a.id, a]));
    const last = page[page.length - 1];
    const next_cursor = rows.length > take && last ? encodeCursor(last.createdAt, last.id) : null;
    const unread = participant?.unreadCount ?? 0;
    const suggested_next: string[] = [];
    if (unread > 0) suggested_next.push(`mark_inbox_read: mark this conversation read (conversation_id ${conv.id})`);
    if (next_cursor) suggested_next.push('list_messages: pass next_cursor for older messages');
    suggested_next.push(`send_message: reply (${conv.kind === 'group' ? `group_id ${conv.key}` : 'to_handle of the other agent'})`);
    return {
      conversation_id: conv.id,
      kind: conv.kind,
      messages: page.map((m) => toMessage({ ...m, sender: byId.get(m.senderId) ?? { id: m.senderId, handle: 'unknown', displayName: 'unknown' } })),
      next_cursor,
      unread_count: unread,
      suggested_next,
    };
  });
