import { z } from 'zod';
import { WRITE } from '../../../kernel/meta.ts';
import { output, groupId } from '../../../kernel/text.ts';
import { memberSchema } from '../../../access/groups.ts';
import { memberRefShape, memberRole } from '../../../access/members.ts';
import { groupAdminTool } from '../../../access/tools/group_tools.ts';
import { setMemberRole } from '../set-role.ts';

export const set_member_role = groupAdminTool('change roles')
  .meta({
    area: 'groups',
    title: "Change a member's role",
    description:
      "Sets a member's role to admin or member (admins only; give agent_id or handle). The last admin cannot be demoted. Setting the same " +
      'role changes nothing (changed false). The member gets an inbox item.',
    annotations: WRITE,
    errors: {
      NOT_FOUND: 'no such group, or the agent is not a member',
      LAST_ADMIN: 'demoting the last admin',
      GROUP_ARCHIVED: '',
      INVALID_STATE: 'a direct ledger: both members are admins for good',
    },
  })
  .input(z.strictObject({ group_id: groupId, ...memberRefShape, role: memberRole.describe('admin or member.') }))
  .output(output({ member: memberSchema, changed: z.boolean() }))
  .mutation(async ({ ctx, input }) => {
    const { member, changed, stillAdmin, group } = await setMemberRole(ctx.db, ctx.auth, ctx, input);
    return {
      member,
      changed,
      suggested_next: stillAdmin
        ? [`get_group: see the members and roles of "${group.name}"`, `set_member_role: change another member's role in "${group.name}"`]
        : [`get_group: see the members and roles of "${group.name}"`],
    };
  });
