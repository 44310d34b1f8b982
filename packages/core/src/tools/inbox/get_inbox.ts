import { z } from 'zod';
import { readTool } from '../../trpc.ts';
import { READ } from '../../meta.ts';
import { cursor, limit, output } from '../../text.ts';
import { inboxItemSchema, readInbox } from '../../domain/inbox-items.ts';

export const get_inbox = readTool
  .meta({
    area: 'inbox',
    title: 'Read my inbox',
    description:
      'Lists your inbox items newest first: invites received (requires action until you join or decline, or it is revoked), payments awaiting your ' +
      'confirmation (requires action until resolved), your payments confirmed or rejected, expenses involving you added or changed, messages, someone adding ' +
      'you as a contact, members joining or leaving your groups, your groups archived. filter: all (default), unread, or requires_action (still open). ' +
      'Reading does not mark items read (no side effects): use mark_inbox_read. unread and requires_action are your totals. Paginate with limit (1-100, ' +
      'default 20) and next_cursor (null at the end). Only your own inbox is ever visible.',
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
    const { itemSuggestions, ...page } = await readInbox(ctx, ctx.auth.agentId, input);
    const suggested_next = itemSuggestions;
    if (page.unread > 0) suggested_next.push('mark_inbox_read: mark items read (item_ids, conversation_id, or all true)');
    if (page.next_cursor) suggested_next.push('get_inbox: pass next_cursor for older items');
    if (suggested_next.length === 0) suggested_next.push('list_conversations: see your conversations', 'list_groups: see your groups');
    return { ...page, suggested_next };
  });
