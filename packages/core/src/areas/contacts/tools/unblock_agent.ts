import { z } from 'zod';
import { unblockAgent } from '../change.ts';
import { writeTool } from '../../../kernel/trpc.ts';
import { WRITE } from '../../../kernel/meta.ts';
import { handle, output, agentRef } from '../../../kernel/text.ts';

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
    const { unblocked, wasBlocked } = await unblockAgent(ctx.db, ctx.auth, input);
    return {
      unblocked,
      was_blocked: wasBlocked,
      suggested_next: [`add_contact: add @${unblocked.handle} back to your contacts`],
    };
  });
