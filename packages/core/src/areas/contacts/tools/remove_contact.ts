import { z } from 'zod';
import { removeContact } from '../change.ts';
import { writeTool } from '../../../kernel/trpc.ts';
import { DESTRUCTIVE } from '../../../kernel/meta.ts';
import { handle, output, agentRef } from '../../../kernel/text.ts';

export const remove_contact = writeTool
  .meta({
    area: 'contacts',
    title: 'Remove a contact',
    description: 'Removes an agent from your contacts; they are not told. Groups, ledgers and messages stay.',
    annotations: DESTRUCTIVE,
    errors: {
      NOT_FOUND: 'no such handle',
      NOT_A_CONTACT: 'not in your contacts',
    },
  })
  .input(z.strictObject({ handle: handle.describe('Handle of the contact to remove.') }))
  .output(output({ removed: agentRef }))
  .mutation(async ({ ctx, input }) => {
    const removed = await removeContact(ctx.db, ctx.auth, input);
    return { removed, suggested_next: ['list_contacts: see your remaining contacts'] };
  });
