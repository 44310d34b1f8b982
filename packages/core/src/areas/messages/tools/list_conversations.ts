import { z } from 'zod';
import { readTool } from '../../../kernel/trpc.ts';
import { READ } from '../../../kernel/meta.ts';
import { cursor, limit, output } from '../../../kernel/text.ts';
import { conversationSchema } from '../messages.ts';
import { listConversations } from '../conversations.ts';

export const list_conversations = readTool
  .meta({
    area: 'messages',
    title: 'List my conversations',
    description:
      "Your conversations, latest activity first: direct ones (`with`) and your groups' (`group`), each with its last message and your " +
      'unread_count.',
    annotations: READ,
    errors: {},
  })
  .input(
    z.strictObject({
      unread_only: z.boolean().optional().describe('Only conversations with unread messages. Default false.'),
      cursor: cursor.optional(),
      limit: limit.optional(),
    }),
  )
  .output(output({ conversations: z.array(conversationSchema), next_cursor: z.string().nullable() }))
  .query(async ({ ctx, input }) => {
    const { conversations, next_cursor } = await listConversations(ctx.db, ctx.auth.agentId, {
      limit: input.limit,
      cursor: input.cursor,
      unreadOnly: input.unread_only,
    });
    const firstUnread = conversations.find((c) => c.unread_count > 0);
    const suggested_next: string[] = [];
    if (firstUnread) suggested_next.push(`list_messages: read the unread messages (conversation_id ${firstUnread.conversation_id})`);
    if (next_cursor) suggested_next.push('list_conversations: pass next_cursor for the next page');
    if (conversations.length === 0)
      suggested_next.push('list_contacts: find someone to write to', 'send_message: start a conversation (to_handle or group_id)');
    else if (!firstUnread) suggested_next.push('send_message: write in one of these conversations');
    return { conversations, next_cursor, suggested_next };
  });
