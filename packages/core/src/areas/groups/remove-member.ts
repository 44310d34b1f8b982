/**
 * Removing a member (remove_member): an admin removes a settled member; the member and the
 * remaining members are told, in the caller's transaction.
 */
import type { Db } from '../../kernel/context.ts';
import type { Actor } from '../../kernel/actor.ts';
import { ToolError } from '../../kernel/errors.ts';
import { assertNotArchived, type GroupAccess } from '../../access/groups.ts';
import { appendActivity } from '../../kernel/activity.ts';
import { appendEvent } from '../../kernel/events.ts';
import { notify, notifyAll } from '../../kernel/notify.ts';
import { toNumber } from '../../kernel/money.ts';
import { toAgentRef } from '../../access/agents.ts';
import { resolveMember } from '../../access/members.ts';

/**
 * Removes the member named by req.agent_id or req.handle from the group on behalf of `actor`, an
 * admin (`access`, read holding the group lock), at `now`. The member must have a zero balance and no
 * pending payments; removal marks them removed (rejoining then needs an invite addressed to them,
 * created after the removal). Returns `removed` (agent reference), `member_count` after, and the group.
 * Errors: NOT_FOUND (not an active member), GROUP_ARCHIVED, INVALID_STATE (a direct ledger; removing yourself), NOT_SETTLED (balance or
 * pending payments; details say which), VALIDATION_ERROR (neither or both of agent_id/handle).
 */
export async function removeMember(
  db: Db,
  actor: Pick<Actor, 'agentId' | 'handle'>,
  { group }: GroupAccess,
  req: { agent_id?: string | undefined; handle?: string | undefined },
  now: Date,
) {
  const me = actor.agentId;
  assertNotArchived(group);
  if (group.kind === 'direct') throw new ToolError('INVALID_STATE', 'A direct ledger always has its two members; nobody can be removed.');
  const { agent, membership: target } = await resolveMember(db, group.id, req);
  if (agent.id === me)
    throw new ToolError('INVALID_STATE', 'You cannot remove yourself.', { suggestedAction: 'Use leave_group to leave the group.' });
  if (target.balanceMinor !== 0n || target.pendingCount > 0) {
    throw new ToolError('NOT_SETTLED', `@${agent.handle} can be removed only with a zero balance and no pending payments.`, {
      details: { handle: agent.handle, balance_minor: toNumber(target.balanceMinor), pending_payments: target.pendingCount },
      suggestedAction: 'Use suggest_settlements and record_payment to settle, and resolve pending payments first.',
    });
  }
  await db.membership.update({
    where: { groupId_agentId: { groupId: group.id, agentId: agent.id } },
    data: { leftAt: now, removedAt: now },
  });
  const updated = await db.group.update({ where: { id: group.id }, data: { memberCount: { decrement: 1 } } });
  await appendActivity(db, {
    groupId: group.id,
    actorId: me,
    action: 'member.removed',
    entityType: 'member',
    entityId: agent.id,
    before: { role: target.role },
  });
  await notify(db, {
    agentId: agent.id,
    kind: 'member_removed',
    text: `@${actor.handle} removed you from "${group.name}"`,
    entityType: 'group',
    entityId: group.id,
    groupId: group.id,
  });
  const remaining = await db.membership.findMany({ where: { groupId: group.id, leftAt: null }, select: { agentId: true } });
  await notifyAll(
    db,
    remaining.map((m) => m.agentId),
    me,
    {
      kind: 'member_left',
      text: `@${agent.handle} was removed from "${group.name}"`,
      entityType: 'group',
      entityId: group.id,
      groupId: group.id,
    },
  );
  // The removed member gets the event of their own removal and nothing after.
  await appendEvent(db, {
    type: 'member.removed',
    groupId: group.id,
    actorId: me,
    recipients: [agent.id, ...remaining.map((m) => m.agentId)],
    data: { agent_id: agent.id },
    link: { entityType: 'group', entityId: group.id },
  });
  return { removed: toAgentRef(agent), member_count: updated.memberCount, group };
}
