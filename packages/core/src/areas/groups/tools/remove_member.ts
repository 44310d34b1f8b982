import { z } from 'zod';
import { DESTRUCTIVE } from '../../../kernel/meta.ts';
import { output, agentRef, groupId } from '../../../kernel/text.ts';
import { memberRefShape } from '../../../access/members.ts';
import { groupAdminTool } from '../../../access/tools/group_tools.ts';
import { removeMember } from '../remove-member.ts';

export const remove_member = groupAdminTool('remove members')
  .meta({
    area: 'groups',
    title: 'Remove a member',
    description:
      'Removes another member (admins only; to remove yourself use leave_group). They must be settled. Give agent_id or handle. Everyone ' +
      'gets an inbox item; history stays. Removal holds: only a new invite targeted at them (create_invite target_handle) lets them back in.',
    annotations: DESTRUCTIVE,
    errors: {
      NOT_FOUND: 'no such group, or the agent is not a member',
      NOT_SETTLED: 'the member has a balance or a pending payment; details has the balance',
      GROUP_ARCHIVED: '',
      INVALID_STATE: 'yourself, or a direct ledger, which always has its two members',
    },
  })
  .input(z.strictObject({ group_id: groupId, ...memberRefShape }))
  .output(output({ removed: agentRef, member_count: z.number().int() }))
  .mutation(async ({ ctx, input }) => {
    const { removed, member_count, group } = await removeMember(ctx.db, ctx.auth, ctx, input, ctx.services.now());
    return {
      removed,
      member_count,
      suggested_next: [`get_group: see the remaining members of "${group.name}"`, `create_invite: invite someone new to "${group.name}"`],
    };
  });
