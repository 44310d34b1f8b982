import { z } from 'zod';
import { readTool } from '../../../kernel/trpc.ts';
import { READ } from '../../../kernel/meta.ts';
import { uuid, handle, cursor, limit, output, groupId } from '../../../kernel/text.ts';
import { messageSchema } from '../messages.ts';
import { readConversation } from '../conversations.ts';

export const list_messages = readTool
  .meta({
    area: 'messages',
    title: 'Read a conversation',
    description:
      'Messages of one conversation, newest first: by conversation_id, with_handle (your direct conversation) or group_id (exactly one). ' +
      'Reading does not change unread_count (mark_inbox_read does).',
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
    const { key, ...page } = await readConversation(ctx.db, ctx.auth.agentId, input, input);
    if (!page.conversation_id) {
      return {
        ...page,
        suggested_next: [
          input.with_handle
            ? `send_message: start the conversation (to_handle "${input.with_handle}")`
            : `send_message: start the conversation (group_id ${input.group_id})`,
        ],
      };
    }
    const suggested_next: string[] = [];
    if (page.unread_count > 0)
      suggested_next.push(`mark_inbox_read: mark this conversation read (conversation_id ${page.conversation_id})`);
    if (page.next_cursor) suggested_next.push('list_messages: pass next_cursor for older messages');
    suggested_next.push(`send_message: reply (${page.kind === 'group' ? `group_id ${key}` : 'to_handle of the other agent'})`);
    return { ...page, suggested_next };
  });
