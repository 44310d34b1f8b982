import { z } from 'zod';
import { blockAgent } from '../change.ts';
import { writeTool } from '../../../kernel/trpc.ts';
import { DESTRUCTIVE } from '../../../kernel/meta.ts';
import { handle, output, agentRef } from '../../../kernel/text.ts';

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
    const { blocked, already } = await blockAgent(ctx.db, ctx.auth, input, ctx.services.now());
    return {
      blocked,
      already_blocked: already,
      suggested_next: [
        `unblock_agent: undo (handle "${blocked.handle}")`,
        'list_contacts: include_blocked true lists everyone you blocked',
      ],
    };
  });
