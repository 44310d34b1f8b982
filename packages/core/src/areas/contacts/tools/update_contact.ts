import { z } from 'zod';
import { updateContact } from '../change.ts';
import { writeTool } from '../../../kernel/trpc.ts';
import { WRITE } from '../../../kernel/meta.ts';
import { handle, text, output } from '../../../kernel/text.ts';
import { contactSchema, ALIAS_MAX, CONTACT_NOTE_MAX } from '../contacts.ts';

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
    const { contact, handle: h } = await updateContact(ctx.db, ctx.auth, input);
    return { contact, suggested_next: ['list_contacts: see all your contacts', `send_message: write to @${h}`] };
  });
