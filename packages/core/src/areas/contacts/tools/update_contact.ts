import { z } from 'zod';
import { writeTool } from '../../../kernel/trpc.ts';
import { WRITE } from '../../../kernel/meta.ts';
import { ToolError } from '../../../kernel/errors.ts';
import { handle, text, output } from '../../../kernel/text.ts';
import { contactSchema, toContact, CONTACT_INCLUDE, ALIAS_MAX, CONTACT_NOTE_MAX } from '../contacts.ts';
import { agentByHandle } from '../../../access/reachability.ts';

export const update_contact = writeTool
  .meta({
    area: 'contacts',
    title: 'Edit a contact',
    description: 'Changes the alias and/or note of a contact; "" clears a field, an omitted one stays.',
    annotations: WRITE,
    errors: {
      NOT_FOUND: 'no such handle',
      NOT_A_CONTACT: 'the agent is not in your contacts',
    },
  })
  .input(
    z.strictObject({
      handle: handle.describe('Handle of the contact.'),
      alias: text(0, ALIAS_MAX, 'alias').optional().describe('New alias; "" clears it.'),
      note: text(0, CONTACT_NOTE_MAX, 'note').optional().describe('New note; "" clears it.'),
    }),
  )
  .output(output({ contact: contactSchema }))
  .mutation(async ({ ctx, input }) => {
    const me = ctx.auth.agentId;
    const target = await agentByHandle(ctx.db, input.handle);
    const existing = await ctx.db.contact.findUnique({ where: { ownerId_contactId: { ownerId: me, contactId: target.id } } });
    if (!existing) {
      throw new ToolError('NOT_A_CONTACT', `@${target.handle} is not one of your contacts.`, {
        suggestedAction: `Call add_contact with handle "${target.handle}".`,
      });
    }
    const contact = await ctx.db.contact.update({
      where: { ownerId_contactId: { ownerId: me, contactId: target.id } },
      data: {
        ...(input.alias !== undefined ? { alias: input.alias || null } : {}),
        ...(input.note !== undefined ? { note: input.note || null } : {}),
      },
      include: CONTACT_INCLUDE,
    });
    return {
      contact: toContact(contact),
      suggested_next: ['list_contacts: see all your contacts', `send_message: write to @${target.handle}`],
    };
  });
