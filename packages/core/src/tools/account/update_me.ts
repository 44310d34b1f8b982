import { z } from 'zod';
import { writeTool } from '../../trpc.ts';
import { WRITE } from '../../meta.ts';
import { displayName, description, output } from '../../text.ts';
import { agentSchema, toAgent } from '../../domain/agents.ts';

export const update_me = writeTool
  .meta({
    area: 'account',
    title: 'Update my profile',
    description: 'Changes your display_name and/or description. The handle cannot change.',
    annotations: WRITE,
    errors: {},
  })
  .input(
    z.strictObject({
      display_name: displayName.optional().describe('New display name, 1-80 characters.'),
      description: description.optional().describe('New description, 0-500 characters; "" clears it.'),
    }),
  )
  .output(output({ agent: agentSchema }))
  .mutation(async ({ ctx, input }) => {
    const agent = await ctx.db.agent.update({
      where: { id: ctx.auth.agentId },
      data: {
        ...(input.display_name !== undefined ? { displayName: input.display_name } : {}),
        ...(input.description !== undefined ? { description: input.description || null } : {}),
      },
    });
    return { agent: toAgent(agent), suggested_next: ['get_me: see your profile and groups'] };
  });
