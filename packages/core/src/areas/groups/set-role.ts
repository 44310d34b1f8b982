/**
 * Changing a member's role (set_member_role), with the rule that a group always keeps one admin.
 */
import type { Db } from '../../kernel/context.ts';
import type { Actor } from '../../kernel/actor.ts';
import { ToolError } from '../../kernel/errors.ts';
import { assertNotArchived, type GroupAccess } from '../../access/groups.ts';
import { appendActivity } from '../../kernel/activity.ts';
import { appendEvent, activeMemberIds } from '../../kernel/events.ts';
import { notify } from '../../kernel/notify.ts';
import { formatMinor, toNumber } from '../../kernel/money.ts';
import { resolveMember } from '../../access/members.ts';

/**
 * Sets the role of the member named by req.agent_id or req.handle in the group to req.role, on
 * behalf of `actor`, an admin (`access`, read holding the group lock). No change when
 * the role is already that; otherwise logs `member.role_changed` and tells the member (unless it is
 * the caller). Returns `member` (wire shape; balances in minor units of the group currency),
 * `changed`, `stillAdmin` (whether the caller is still an admin) and the group.
 * Errors: NOT_FOUND (not an active member), GROUP_ARCHIVED, INVALID_STATE (a direct ledger's roles are fixed), LAST_ADMIN (demoting the only
 * admin), VALIDATION_ERROR (neither or both of agent_id/handle).
 */
export async function setMemberRole(
  db: Db,
  actor: Pick<Actor, 'agentId' | 'handle'>,
  { group }: GroupAccess,
  req: { agent_id?: string | undefined; handle?: string | undefined; role: 'admin' | 'member' },
) {
  const me = actor.agentId;
  assertNotArchived(group);
  if (group.kind === 'direct') throw new ToolError('INVALID_STATE', 'In a direct ledger both members are admins; roles cannot change.');
  const { agent, membership: target } = await resolveMember(db, group.id, req);
  let current = target;
  const changed = target.role !== req.role;
  if (changed) {
    if (target.role === 'admin') {
      const admins = await db.membership.count({ where: { groupId: group.id, leftAt: null, role: 'admin' } });
      if (admins <= 1) {
        throw new ToolError('LAST_ADMIN', `@${agent.handle} is the only admin of "${group.name}"; a group always keeps one admin.`, {
          details: { group_id: group.id, handle: agent.handle },
        });
      }
    }
    current = await db.membership.update({
      where: { groupId_agentId: { groupId: group.id, agentId: agent.id } },
      data: { role: req.role },
    });
    await appendActivity(db, {
      groupId: group.id,
      actorId: me,
      action: 'member.role_changed',
      entityType: 'member',
      entityId: agent.id,
      before: { role: target.role },
      after: { role: req.role },
    });
    if (agent.id !== me) {
      await notify(db, {
        agentId: agent.id,
        kind: 'role_changed',
        text: `@${actor.handle} made you ${req.role === 'admin' ? 'an admin' : 'a member'} of "${group.name}"`,
        entityType: 'group',
        entityId: group.id,
        groupId: group.id,
      });
    }
    await appendEvent(db, {
      type: 'member.role_changed',
      groupId: group.id,
      actorId: me,
      recipients: await activeMemberIds(db, group.id),
      data: { agent_id: agent.id, role: req.role, previous_role: target.role },
      link: { entityType: 'group', entityId: group.id },
    });
  }
  const stillAdmin = agent.id === me ? req.role === 'admin' : true;
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
    stillAdmin,
    group,
  };
}
