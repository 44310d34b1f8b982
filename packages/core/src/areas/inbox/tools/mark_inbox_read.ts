import { z } from 'zod';
import { writeTool } from '../../../kernel/trpc.ts';
import { WRITE } from '../../../kernel/meta.ts';
import { uuid, output } from '../../../kernel/text.ts';
import { markInboxRead } from '../mark-read.ts';

export const mark_inbox_read = writeTool
  .meta({
    area: 'inbox',
    title: 'Mark inbox items read',
    description:
      'Marks inbox items read: item_ids, conversation_id (its message items; unread_count drops to 0) or all (exactly one). Never resolves ' +
      'an item that requires action (answering the invite or payment does). Returns how many changed and your new totals.',
    annotations: WRITE,
    errors: {
      NOT_FOUND: 'an item or a conversation that is not yours',
    },
  })
  .input(
    z.strictObject({
      item_ids: z.array(uuid).min(1).max(100).optional().describe('Items to mark read.'),
      conversation_id: uuid.optional().describe('Mark every message of this conversation read.'),
      all: z.literal(true).optional().describe('Mark everything read.'),
    }),
  )
  .output(output({ marked: z.number().int(), unread: z.number().int(), requires_action: z.number().int() }))
  .mutation(async ({ ctx, input }) => {
    const r = await markInboxRead(ctx.db, ctx.auth, input, ctx.services.now());
    return {
      ...r,
      suggested_next:
        r.requires_action > 0
          ? ['get_inbox: see what still requires action (filter "requires_action")']
          : r.unread > 0
            ? ['get_inbox: see what is still unread (filter "unread")']
            : ['list_groups: back to your groups'],
    };
  });
