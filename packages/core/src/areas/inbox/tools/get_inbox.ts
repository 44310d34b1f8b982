import { z } from 'zod';
import { readTool } from '../../../kernel/trpc.ts';
import { READ } from '../../../kernel/meta.ts';
import { cursor, limit, output } from '../../../kernel/text.ts';
import { inboxItemSchema, readInbox } from '../items.ts';

export const get_inbox = readTool
  .meta({
    area: 'inbox',
    title: 'Read my inbox',
    description:
      'Your inbox, newest first: invites and payments awaiting you (requires_action until resolved), payments confirmed or rejected, expenses ' +
      'involving you, messages, contacts added, members joining or leaving, groups archived. Reading marks nothing read (mark_inbox_read does).',
    annotations: READ,
    errors: {},
  })
  .input(
    z.strictObject({
      filter: z.enum(['all', 'unread', 'requires_action']).optional().describe('Default all.'),
      cursor: cursor.optional(),
      limit: limit.optional(),
    }),
  )
  .output(
    output({
      items: z.array(inboxItemSchema),
      next_cursor: z.string().nullable(),
      unread: z.number().int().describe('Your unread items in total.'),
      requires_action: z.number().int().describe('Your items still requiring action in total.'),
    }),
  )
  .query(async ({ ctx, input }) => {
    const { itemSuggestions, ...page } = await readInbox(ctx.db, ctx.auth, input, ctx.services.now());
    const suggested_next = itemSuggestions;
    if (page.unread > 0) suggested_next.push('mark_inbox_read: mark items read (item_ids, conversation_id, or all true)');
    if (page.next_cursor) suggested_next.push('get_inbox: pass next_cursor for older items');
    if (suggested_next.length === 0) suggested_next.push('list_conversations: see your conversations', 'list_groups: see your groups');
    return { ...page, suggested_next };
  });
