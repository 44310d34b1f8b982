/**
 * Leaving a group (leave_group): a settled member leaves; when the last admin leaves, the
 * longest-standing member becomes admin. The others are told, in the caller's transaction.
 */
import type { Db } from '../../kernel/context.ts';
import type { Actor } from '../../kernel/actor.ts';
import { ToolError } from '../../kernel/errors.ts';
import type { GroupAccess } from '../../access/groups.ts';
import { appendActivity } from '../../kernel/activity.ts';
import { appendEvent } from '../../kernel/events.ts';
import { notifyAll } from '../../kernel/notify.ts';
import { toNumber } from '../../kernel/money.ts';

/**
 * `actor` leaves the group (`access`, read holding the group lock) at `now`. Their balance must be
 * zero with no pending payment. The leaver gets the event of their own departure and nothing after.
 * Errors: INVALID_STATE (a direct ledger cannot be left), NOT_SETTLED (details: balance_minor,
 * pending_payments).
 */
export async function leaveGroup(db: Db, actor: Pick<Actor, 'agentId' | 'handle'>, { group, membership }: GroupAccess, now: Date) {
  const agentId = actor.agentId;
  if (group.kind === 'direct') throw new ToolError('INVALID_STATE', 'A direct ledger cannot be left; settle it and archive it instead.');
  if (membership.balanceMinor !== 0n || membership.pendingCount > 0) {
    throw new ToolError('NOT_SETTLED', 'You can leave only with a zero balance and no pending payments.', {
      details: { balance_minor: toNumber(membership.balanceMinor), pending_payments: membership.pendingCount },
      suggestedAction: 'Use suggest_settlements and record_payment to settle, and resolve pending payments first.',
    });
  }
  await db.membership.update({ where: { groupId_agentId: { groupId: group.id, agentId } }, data: { leftAt: now } });
  await db.group.update({ where: { id: group.id }, data: { memberCount: { decrement: 1 } } });
  const remaining = await db.membership.findMany({ where: { groupId: group.id, leftAt: null }, orderBy: { joinedAt: 'asc' } });
  if (membership.role === 'admin' && remaining.length > 0 && !remaining.some((m) => m.role === 'admin')) {
    const heir = remaining[0]!;
    await db.membership.update({ where: { groupId_agentId: { groupId: group.id, agentId: heir.agentId } }, data: { role: 'admin' } });
    await appendActivity(db, {
      groupId: group.id,
      actorId: agentId,
      action: 'member.role_changed',
      entityType: 'member',
      entityId: heir.agentId,
      before: { role: 'member' },
      after: { role: 'admin' },
    });
    await appendEvent(db, {
      type: 'member.role_changed',
      groupId: group.id,
      actorId: agentId,
      recipients: remaining.map((m) => m.agentId),
      data: { agent_id: heir.agentId, role: 'admin', previous_role: 'member' },
    });
  }
  await appendActivity(db, {
    groupId: group.id,
    actorId: agentId,
    action: 'member.left',
    entityType: 'member',
    entityId: agentId,
    before: { role: membership.role },
  });
  await notifyAll(
    db,
    remaining.map((m) => m.agentId),
    agentId,
    {
      kind: 'member_left',
      text: `@${actor.handle} left "${group.name}"`,
      entityType: 'group',
      entityId: group.id,
      groupId: group.id,
    },
  );
  // The leaver gets the event of their own departure and nothing after.
  await appendEvent(db, {
    type: 'member.left',
    groupId: group.id,
    actorId: agentId,
    recipients: [agentId, ...remaining.map((m) => m.agentId)],
    data: { agent_id: agentId },
    link: { entityType: 'group', entityId: group.id },
  });
}
