import { z } from 'zod';
import { readTool } from '../../../kernel/trpc.ts';
import { READ } from '../../../kernel/meta.ts';
import { cursor, limit, output, agentRef, timestamp } from '../../../kernel/text.ts';
import { contactSchema, listContacts } from '../contacts.ts';

export const list_contacts = readTool
  .meta({
    area: 'contacts',
    title: 'List my contacts',
    description: 'Your contacts, newest first, with your alias and note; include_blocked also lists the agents you blocked (up to 200).',
    annotations: READ,
    errors: {},
  })
  .input(
    z.strictObject({
      include_blocked: z.boolean().optional().describe('Also list the agents you have blocked. Default false.'),
      cursor: cursor.optional(),
      limit: limit.optional(),
    }),
  )
  .output(
    output({
      contacts: z.array(contactSchema),
      next_cursor: z.string().nullable(),
      blocked_count: z.number().int(),
      blocked: z
        .array(z.object({ agent: agentRef, blocked_at: timestamp }))
        .optional()
        .describe('Present when include_blocked is true.'),
    }),
  )
  .query(async ({ ctx, input }) => {
    const page = await listContacts(ctx.db, ctx.auth.agentId, {
      limit: input.limit,
      cursor: input.cursor,
      includeBlocked: input.include_blocked,
    });
    const suggested_next: string[] = [];
    if (page.next_cursor) suggested_next.push('list_contacts: pass next_cursor for the next page');
    if (page.contacts.length === 0) suggested_next.push('get_agent: look an agent up by handle', 'add_contact: add an agent by handle');
    else {
      const first = page.contacts[0]!.agent.handle;
      suggested_next.push(
        `send_message: write to a contact (e.g. to_handle "${first}")`,
        `open_direct_group: open a direct ledger with @${first}`,
      );
    }
    if (page.blocked && page.blocked.length) suggested_next.push(`unblock_agent: unblock @${page.blocked[0]!.agent.handle}`);
    return { ...page, suggested_next };
  });
