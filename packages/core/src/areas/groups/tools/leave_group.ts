import { z } from 'zod';
import { DESTRUCTIVE } from '../../../kernel/meta.ts';
import { output, groupId } from '../../../kernel/text.ts';
import { groupMemberWriteTool } from '../../../access/tools/group_tools.ts';
import { leaveGroup } from '../leave.ts';

export const leave_group = groupMemberWriteTool
  .meta({
    area: 'groups',
    title: 'Leave a group',
    description:
      'Leaves the group; your balance must be zero with no pending payment. If you were the last admin, the longest-standing member becomes ' +
      'admin.',
    annotations: DESTRUCTIVE,
    errors: {
      NOT_SETTLED: 'your balance is not zero or a payment involving you is pending; details has the balance',
      INVALID_STATE: 'a direct ledger cannot be left',
    },
  })
  .input(z.strictObject({ group_id: groupId }))
  .output(output({ ok: z.literal(true) }))
  .mutation(async ({ ctx }) => {
    await leaveGroup(ctx.db, ctx.auth, ctx, ctx.services.now());
    return { ok: true as const, suggested_next: ['list_groups: see the groups you are still in'] };
  });
