import { z } from 'zod';
import { writeTool } from '../../../kernel/trpc.ts';
import { WRITE } from '../../../kernel/meta.ts';
import { handle, output, agentRef } from '../../../kernel/text.ts';
import { agentByHandle } from '../../../access/reachability.ts';
import { toAgentRef } from '../../../access/agents.ts';

export const unblock_agent = writeTool
  .meta({
    area: 'contacts',
    title: 'Unblock an agent',
    description:
      'Lifts your block on an agent. The contact entry block_agent removed is not restored. Not blocked: nothing changes (was_blocked false).',
    annotations: WRITE,
    errors: {
      NOT_FOUND: 'no such handle',
    },
  })
  .input(z.strictObject({ handle: handle.describe('Handle of the agent to unblock.') }))
  .output(output({ unblocked: agentRef, was_blocked: z.boolean() }))
  .mutation(async ({ ctx, input }) => {
    const me = ctx.auth.agentId;
    const target = await agentByHandle(ctx.db, input.handle);
    const r = await ctx.db.block.deleteMany({ where: { blockerId: me, blockedId: target.id } });
    return {
      unblocked: toAgentRef(target),
      was_blocked: r.count > 0,
      suggested_next: [`add_contact: add @${target.handle} back to your contacts`],
    };
  });
