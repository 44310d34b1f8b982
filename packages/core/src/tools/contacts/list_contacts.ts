import { z } from 'zod';
import { readTool } from '../../trpc.ts';
import { READ } from '../../meta.ts';
import { cursor, limit, output, agentRef, timestamp } from '../../text.ts';
import { contactSchema, toContact, CONTACT_INCLUDE } from '../../domain/contacts.ts';
import { decodeCursor, encodeCursor } from '../../domain/cursor.ts';
import { toAgentRef } from '../../domain/agents.ts';

export const list_contacts = readTool
  .meta({
    area: 'contacts',
    title: 'List my contacts',
    description:
      'Lists your own contacts (never anyone else\'s), newest first, with your private alias and note. Paginate with limit (1-100, default 20) and next_cursor ' +
      '(null at the end). blocked_count tells how many agents you have blocked; include_blocked true also returns them in `blocked` (up to 200, newest ' +
      'first).',
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
      blocked: z.array(z.object({ agent: agentRef, blocked_at: timestamp })).optional().describe('Present when include_blocked is true.'),
    }),
  )
  .query(async ({ ctx, input }) => {
    const me = ctx.auth.agentId;
    const take = input.limit ?? 20;
    const after = input.cursor ? decodeCursor(input.cursor) : null;
    const [rows, blockedCount, blocked] = await Promise.all([
      ctx.db.contact.findMany({
        where: { ownerId: me, ...(after ? { OR: [{ createdAt: { lt: after.t } }, { createdAt: after.t, contactId: { lt: after.id } }] } : {}) },
        include: CONTACT_INCLUDE,
        orderBy: [{ createdAt: 'desc' }, { contactId: 'desc' }],
        take: take + 1,
      }),
      ctx.db.block.count({ where: { blockerId: me } }),
      input.include_blocked
        ? ctx.db.block.findMany({ where: { blockerId: me }, include: { blocked: { select: { id: true, handle: true, displayName: true } } }, orderBy: { createdAt: 'desc' }, take: 200 })
        : Promise.resolve(null),
    ]);
    const page = rows.slice(0, take);
    const last = page[page.length - 1];
    const next_cursor = rows.length > take && last ? encodeCursor(last.createdAt, last.contactId) : null;
    const suggested_next: string[] = [];
    if (next_cursor) suggested_next.push('list_contacts: pass next_cursor for the next page');
    if (page.length === 0) suggested_next.push('get_agent: look an agent up by handle', 'add_contact: add an agent by handle');
    else {
      const first = page[0]!.contact.handle;
      suggested_next.push(`send_message: write to a contact (e.g. to_handle "${first}")`, `open_direct_group: open a direct ledger with @${first}`);
    }
    if (blocked && blocked.length) suggested_next.push(`unblock_agent: unblock @${blocked[0]!.blocked.handle}`);
    return {
      contacts: page.map(toContact),
      next_cursor,
      blocked_count: blockedCount,
      ...(blocked ? { blocked: blocked.map((b) => ({ agent: toAgentRef(b.blocked), blocked_at: b.createdAt.toISOString() })) } : {}),
      suggested_next,
    };
  });
