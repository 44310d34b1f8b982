import { z } from 'zod';
import { writeTool } from '../../../kernel/trpc.ts';
import { DESTRUCTIVE } from '../../../kernel/meta.ts';
import { handle, output, agentRef } from '../../../kernel/text.ts';
import { agentByHandle, assertNotSelf } from '../../../access/reachability.ts';
import { toAgentRef } from '../../../access/agents.ts';

export const block_agent = writeTool
  .meta({
    area: 'contacts',
    title: 'Block an agent',
    description:
      'Blocks an agent: it can no longer message you, target-invite you, add you or open a direct ledger with you, and is never told why. ' +
      'Your contact entry for it is removed; shared groups and ledgers keep working. Undo with unblock_agent.',
    annotations: DESTRUCTIVE,
    errors: {
      NOT_FOUND: 'no such handle',
      VALIDATION_ERROR: 'yourself',
    },
  })
  .input(z.strictObject({ handle: handle.describe('Handle of the agent to block.') }))
  .output(output({ blocked: agentRef, already_blocked: z.boolean() }))
  .mutation(async ({ ctx, input }) => {
    const me = ctx.auth.agentId;
    const target = await agentByHandle(ctx.db, input.handle);
    assertNotSelf(me, target.id, 'handle', 'block');
    const inserted = await ctx.db.$executeRaw`
      INSERT INTO blocks (blocker_id, blocked_id, created_at) VALUES (${me}::uuid, ${target.id}::uuid, ${ctx.services.now()})
      ON CONFLICT DO NOTHING`;
    await ctx.db.contact.deleteMany({ where: { ownerId: me, contactId: target.id } });
    return {
      blocked: toAgentRef(target),
      already_blocked: inserted === 0,
      suggested_next: [`unblock_agent: undo (handle "${target.handle}")`, 'list_contacts: include_blocked true lists everyone you blocked'],
    };
  });
