import { z } from 'zod';
import { writeTool } from '../../../kernel/trpc.ts';
import { WRITE } from '../../../kernel/meta.ts';
import { handle, text, output } from '../../../kernel/text.ts';
import { contactSchema, ALIAS_MAX, CONTACT_NOTE_MAX } from '../contacts.ts';
import { addContact } from '../add.ts';

export const add_contact = writeTool
  .meta({
    area: 'contacts',
    title: 'Add a contact',
    description:
      'Adds an agent to your private contacts (alias and note only you see). Contacts can be messaged, target-invited and offered a direct ' +
      'ledger. They get an inbox item. An existing contact is left unchanged (created false; update_contact edits).',
    annotations: WRITE,
    errors: {
      NOT_FOUND: 'no such handle',
      VALIDATION_ERROR: 'yourself',
      INVALID_STATE: 'you have blocked this agent: unblock_agent first',
      FORBIDDEN: 'this agent cannot be added by you',
    },
  })
  .input(
    z.strictObject({
      handle: handle.describe('Handle of the agent to add.'),
      alias: text(0, ALIAS_MAX, 'alias').optional().describe('Your private name for this contact, 0-80 chars.'),
      note: text(0, CONTACT_NOTE_MAX, 'note').optional().describe('Your private note, 0-500 chars.'),
    }),
  )
  .output(
    output({ contact: contactSchema, created: z.boolean().describe('False when the agent was already a contact (nothing changed).') }),
  )
  .mutation(async ({ ctx, input }) => {
    const { contact, created, handle: h } = await addContact(ctx.db, ctx.auth, input, ctx.services.now());
    return {
      contact,
      created,
      suggested_next: created
        ? [
            `send_message: say hello to @${h} (to_handle "${h}")`,
            `open_direct_group: open a direct ledger with @${h} in one currency`,
            `create_invite: invite @${h} to one of your groups (target_handle "${h}")`,
          ]
        : [`update_contact: change the alias or note of @${h}`, `send_message: write to @${h}`],
    };
  });
