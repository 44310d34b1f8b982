import { z } from 'zod';
import { writeTool } from '../../trpc.ts';
import { WRITE } from '../../meta.ts';
import { ToolError } from '../../errors.ts';
import { output, groupId } from '../../text.ts';
import { requireMembership, assertAdmin, assertNotArchived, memberSchema } from '../../domain/groups.ts';
import { appendActivity } from '../../domain/activity.ts';
import { notify } from '../../domain/inbox.ts';
import { formatMinor, toNumber } from '../../domain/money.ts';
import { memberRefShape, resolveMember, memberRole } from '../../domain/members.ts';

export const set_member_role = writeTool
  .meta({
    area: 'groups',
    title: 'Change a member\'s role',
    description:
      'Sets a member\'s role to admin or member (admins only). A group always keeps at least one admin: demoting the last admin is LAST_ADMIN (409). Name the ' +
      'member by agent_id or handle (exactly one); setting the role it already has changes nothing (changed false). The member gets an inbox item.',
    annotations: WRITE,
    errors: {
      NOT_FOUND: 'no such group, or the agent is not a member',
      FORBIDDEN: 'not a member, or not an admin',
      LAST_ADMIN: 'demoting the last admin',
      GROUP_ARCHIVED: 'the group is archived',
      INVALID_STATE: 'a direct ledger: both members are admins for good',
    },
  })
  .input(z.strictObject({ group_id: groupId, ...memberRefShape, role: memberRole.describe('admin or member.') }))
  .output(output({ member: memberSchema, changed: z.boolean() }))
  .mutation(async ({ ctx, input }) => {
    const me = ctx.auth.agentId;
    const { group, membership } = await requireMembership(ctx.db, input.group_id, me, { lock: true });
    assertAdmin(membership, 'change roles');
    assertNotArchived(group);
    if (group.kind === 'direct') throw new ToolError('INVALID_STATE', 'In a direct ledger both members are admins; roles cannot change.');
    const { agent, membership: target } = await resolveMember(ctx.db, group.id, input);
    let current = target;
    const changed = target.role !== input.role;
    if (changed) {
      if (target.role === 'admin') {
        const admins = await ctx.db.membership.count({ where: { groupId: group.id, leftAt: null, role: 'admin' } });
        if (admins <= 1) {
          throw new ToolError('LAST_ADMIN', `@${agent.handle} is the only admin of "${group.name}"; a group always keeps one admin.`, {
            details: { group_id: group.id, handle: agent.handle },
          });
        }
      }
      current = await ctx.db.membership.update({ where: { groupId_agentId: { groupId: group.id, agentId: agent.id } }, data: { role: input.role } });
      await appendActivity(ctx.db, { groupId: group.id, actorId: me, action: 'member.role_changed', entityType: 'member', entityId: agent.id, before: { role: target.role }, after: { role: input.role } });
      if (agent.id !== me) {
        await notify(ctx.db, {
          agentId: agent.id,
          kind: 'role_changed',
          text: `@${ctx.auth.handle} made you ${input.role === 'admin' ? 'an admin' : 'a member'} of "${group.name}"`,
          entityType: 'group',
          entityId: group.id,
          groupId: group.id,
        });
      }
    }
    const stillAdmin = agent.id === me ? input.role === 'admin' : true;
    return {
      member: {
        agent_id: agent.id,
        handle: agent.handle,
        display_name: agent.displayName,
        role: current.role as 'admin' | 'member',
        joined_at: current.joinedAt.toISOString(),
        balance_minor: toNumber(current.balanceMinor),
        balance: formatMinor(current.balanceMinor, group.currency),
        balance_pending_minor: toNumber(current.balancePendingMinor),
      },
      changed,
      suggested_next: stillAdmin
        ? [`get_group: see the members and roles of "${group.name}"`, `set_member_role: change another member's role in "${group.name}"`]
        : [`get_group: see the members and roles of "${group.name}"`],
    };
  });
