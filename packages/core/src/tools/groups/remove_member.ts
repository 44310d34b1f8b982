import { z } from 'zod';
import { writeTool } from '../../trpc.ts';
import { DESTRUCTIVE } from '../../meta.ts';
import { ToolError } from '../../errors.ts';
import { output, agentRef, groupId } from '../../text.ts';
import { requireMembership, assertAdmin, assertNotArchived } from '../../domain/groups.ts';
import { appendActivity } from '../../domain/activity.ts';
import { notify, notifyAll } from '../../domain/inbox.ts';
import { toNumber } from '../../domain/money.ts';
import { toAgentRef } from '../../domain/agents.ts';
import { memberRefShape, resolveMember } from '../../domain/members.ts';

export const remove_member = writeTool
  .meta({
    area: 'groups',
    title: 'Remove a member',
    description:
      'Removes another member from a group (admins only). The member must be settled: zero balance and no pending payment, otherwise NOT_SETTLED (409) with ' +
      'the balance in details. Name the member by agent_id or handle (exactly one). The removed member and the remaining members get an inbox item; the ' +
      'history stays. Removal holds: the invites the member came in with, and every invite created before the removal or not addressed to them, no longer ' +
      'admit them; only a new invite targeted at them (create_invite with target_handle) lets them back in. To remove yourself use leave_group.',
    annotations: DESTRUCTIVE,
    errors: {
      NOT_FOUND: 'no such group, or the agent is not a member',
      FORBIDDEN: 'not a member, or not an admin',
      NOT_SETTLED: 'the member has a balance or a pending payment; details has the balance',
      GROUP_ARCHIVED: 'the group is archived',
      INVALID_STATE: 'yourself, or a direct ledger, which always has its two members',
    },
  })
  .input(z.strictObject({ group_id: groupId, ...memberRefShape}))
  .output(output({ removed: agentRef, member_count: z.number().int() }))
  .mutation(async ({ ctx, input }) => {
    const me = ctx.auth.agentId;
    const { group, membership } = await requireMembership(ctx.db, input.group_id, me, { lock: true });
    assertAdmin(membership, 'remove members');
    assertNotArchived(group);
    if (group.kind === 'direct') throw new ToolError('INVALID_STATE', 'A direct ledger always has its two members; nobody can be removed.');
    const { agent, membership: target } = await resolveMember(ctx.db, group.id, input);
    if (agent.id === me) throw new ToolError('INVALID_STATE', 'You cannot remove yourself.', { suggestedAction: 'Use leave_group to leave the group.' });
    if (target.balanceMinor !== 0n || target.pendingCount > 0) {
      throw new ToolError('NOT_SETTLED', `@${agent.handle} can be removed only with a zero balance and no pending payments.`, {
        details: { handle: agent.handle, balance_minor: toNumber(target.balanceMinor), pending_payments: target.pendingCount },
        suggestedAction: 'Use suggest_settlements and record_payment to settle, and resolve pending payments first.',
      });
    }
    const now = ctx.services.now();
    await ctx.db.membership.update({ where: { groupId_agentId: { groupId: group.id, agentId: agent.id } }, data: { leftAt: now, removedAt: now } });
    const updated = await ctx.db.group.update({ where: { id: group.id }, data: { memberCount: { decrement: 1 } } });
    await appendActivity(ctx.db, { groupId: group.id, actorId: me, action: 'member.removed', entityType: 'member', entityId: agent.id, before: { role: target.role } });
    await notify(ctx.db, {
      agentId: agent.id,
      kind: 'member_removed',
      text: `@${ctx.auth.handle} removed you from "${group.name}"`,
      entityType: 'group',
      entityId: group.id,
      groupId: group.id,
    });
    const remaining = await ctx.db.membership.findMany({ where: { groupId: group.id, leftAt: null }, select: { agentId: true } });
    await notifyAll(ctx.db, remaining.map((m) => m.agentId), me, {
      kind: 'member_left',
      text: `@${agent.handle} was removed from "${group.name}"`,
      entityType: 'group',
      entityId: group.id,
      groupId: group.id,
    });
    return {
      removed: toAgentRef(agent),
      member_count: updated.memberCount,
      suggested_next: [`get_group: see the remaining members of "${group.name}"`, `create_invite: invite someone new to "${group.name}"`],
    };
  });
