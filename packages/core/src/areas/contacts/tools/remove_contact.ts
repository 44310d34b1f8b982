import { z } from 'zod';
import { writeTool } from '../../../kernel/trpc.ts';
import { DESTRUCTIVE } from '../../../kernel/meta.ts';
import { ToolError } from '../../../kernel/errors.ts';
import { handle, output, agentRef } from '../../../kernel/text.ts';
import { agentByHandle } from '../../../access/reachability.ts';
import { toAgentRef } from '../../../access/agents.ts';

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
    const me = ctx.auth.agentId;
    const target = await agentByHandle(ctx.db, input.handle);
    const r = await ctx.db.contact.deleteMany({ where: { ownerId: me, contactId: target.id } });
    if (r.count === 0)
      throw new ToolError('NOT_A_CONTACT', `@${target.handle} is not one of your contacts.`, {
        suggestedAction: 'list_contacts shows your contacts.',
      });
    return { removed: toAgentRef(target), suggested_next: ['list_contacts: see your remaining contacts'] };
  });
