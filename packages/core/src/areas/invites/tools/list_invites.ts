import { z } from 'zod';
import { readTool } from '../../../kernel/trpc.ts';
import { READ } from '../../../kernel/meta.ts';
import { output, groupId } from '../../../kernel/text.ts';
import { inviteSchema } from '../invites.ts';
import { listInvites } from '../list.ts';

export const list_invites = readTool
  .meta({
    area: 'invites',
    title: 'List invites',
    description: 'Invites newest first (up to 200): received, sent or all, optionally of one group, each with its status.',
    annotations: READ,
    errors: {},
  })
  .input(
    z.strictObject({ direction: z.enum(['received', 'sent', 'all']).optional().describe('Default all.'), group_id: groupId.optional() }),
  )
  .output(output({ invites: z.array(inviteSchema) }))
  .query(async ({ ctx, input }) => {
    const me = ctx.auth.agentId;
    const invites = await listInvites(ctx.db, ctx.auth, input, ctx.services);
    const waiting = invites.find((i) => i.status === 'active' && i.target?.agent_id === me);
    return {
      invites,
      suggested_next: waiting
        ? [
            `join_group: accept the invite to "${waiting.group_name}" (code ${waiting.code})`,
            `decline_invite: decline the invite to "${waiting.group_name}"`,
          ]
        : ['create_invite: invite someone to one of your groups'],
    };
  });
