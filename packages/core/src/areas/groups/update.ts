/**
 * Changing a group (update_group, archive_group): its settings and the archive step, each with its
 * activity entry in the caller's transaction.
 */
import type { Db } from '../../kernel/context.ts';
import type { Actor } from '../../kernel/actor.ts';
import { ToolError } from '../../kernel/errors.ts';
import { toGroupDetail, assertNotArchived, assertAdmin, GROUP_DETAIL_INCLUDE, type GroupAccess } from '../../access/groups.ts';
import { appendActivity } from '../../kernel/activity.ts';
import { appendEvent, appendEvents, activeMemberIds } from '../../kernel/events.ts';
import { notifyAll, resolveAction } from '../../kernel/notify.ts';
import { toNumber } from '../../kernel/money.ts';

/**
 * Changes the given settings of the group on behalf of `actor`, a member (`access`, read holding the
 * group lock): name (1-80 characters), description (0-500; "" clears it),
 * members_can_edit_expenses (admins only). Returns the group (wire detail).
 * Errors: FORBIDDEN (not an admin for members_can_edit_expenses), GROUP_ARCHIVED, INVALID_STATE
 * (renaming a direct ledger).
 */
export async function updateGroup(
  db: Db,
  actor: Pick<Actor, 'agentId'>,
  { group, membership }: GroupAccess,
  req: { name?: string | undefined; description?: string | undefined; members_can_edit_expenses?: boolean | undefined },
) {
  const agentId = actor.agentId;
  assertNotArchived(group);
  if (req.members_can_edit_expenses !== undefined) assertAdmin(membership, 'change who may edit expenses');
  if (group.kind === 'direct' && req.name !== undefined) {
    throw new ToolError('INVALID_STATE', 'A direct ledger is named after its two members and cannot be renamed.');
  }
  const before = { name: group.name, description: group.description, members_can_edit_expenses: group.membersCanEdit };
  const updated = await db.group.update({
    where: { id: group.id },
    data: {
      ...(req.name !== undefined ? { name: req.name } : {}),
      ...(req.description !== undefined ? { description: req.description || null } : {}),
      ...(req.members_can_edit_expenses !== undefined ? { membersCanEdit: req.members_can_edit_expenses } : {}),
    },
    include: GROUP_DETAIL_INCLUDE,
  });
  await appendActivity(db, {
    groupId: group.id,
    actorId: agentId,
    action: 'group.updated',
    entityType: 'group',
    entityId: group.id,
    before,
    after: { name: updated.name, description: updated.description, members_can_edit_expenses: updated.membersCanEdit },
  });
  await appendEvent(db, {
    type: 'group.updated',
    groupId: group.id,
    actorId: agentId,
    recipients: await activeMemberIds(db, group.id),
    data: {
      group_id: group.id,
      ...(req.name !== undefined ? { name: updated.name } : {}),
      ...(req.description !== undefined ? { description: updated.description } : {}),
      ...(req.members_can_edit_expenses !== undefined ? { members_can_edit_expenses: updated.membersCanEdit } : {}),
    },
  });
  return toGroupDetail(updated, membership);
}

/**
 * Archives the group on behalf of `actor`, an admin (`access`, read holding the group lock), at `now`.
 * Every active member must be settled (zero balance, no pending payments). Active invites are
 * revoked (their open inbox items resolved), `group.archived` is logged and the members are told.
 * Already archived: nothing changes (`changed` false). Returns the group (wire detail) and `changed`.
 * Errors: NOT_SETTLED (details.unsettled lists each unsettled member with balance_minor and pending_payments).
 */
export async function archiveGroup(db: Db, actor: Pick<Actor, 'agentId' | 'handle'>, { group, membership }: GroupAccess, now: Date) {
  const agentId = actor.agentId;
  if (group.archivedAt) return { group: toGroupDetail(group, membership), changed: false };
  const members = await db.membership.findMany({
    where: { groupId: group.id, leftAt: null },
    include: { agent: { select: { handle: true } } },
  });
  const unsettled = members.filter((m) => m.balanceMinor !== 0n || m.pendingCount > 0);
  if (unsettled.length) {
    throw new ToolError(
      'NOT_SETTLED',
      'Every member must be settled (zero balance, no pending payments) before the group can be archived.',
      {
        details: {
          unsettled: unsettled.map((m) => ({
            handle: m.agent.handle,
            balance_minor: toNumber(m.balanceMinor),
            pending_payments: m.pendingCount,
          })),
        },
        suggestedAction: 'Use suggest_settlements and record_payment until every balance is zero and no payment is pending.',
      },
    );
  }
  const archived = await db.group.update({
    where: { id: group.id },
    data: { archivedAt: now },
    include: GROUP_DETAIL_INCLUDE,
  });
  const open = await db.invite.findMany({ where: { groupId: group.id, status: 'active' }, select: { id: true, targetId: true } });
  await db.invite.updateMany({ where: { groupId: group.id, status: 'active' }, data: { status: 'revoked' } });
  // A revoked invite no longer waits for its target (e.g. the request of a direct ledger nobody accepted).
  for (const inv of open)
    if (inv.targetId) await resolveAction(db, { entityType: 'invite', entityId: inv.id, resolution: `group archived by @${actor.handle}` });
  await appendActivity(db, {
    groupId: group.id,
    actorId: agentId,
    action: 'group.archived',
    entityType: 'group',
    entityId: group.id,
    before: { archived: false },
    after: { archived: true },
  });
  await notifyAll(
    db,
    members.map((m) => m.agentId),
    agentId,
    {
      kind: 'group_archived',
      text: `"${group.name}" was archived`,
      entityType: 'group',
      entityId: group.id,
      groupId: group.id,
    },
  );
  await appendEvents(db, [
    {
      type: 'group.archived',
      groupId: group.id,
      actorId: agentId,
      recipients: members.map((m) => m.agentId),
      data: { group_id: group.id },
      link: { entityType: 'group', entityId: group.id },
    },
    ...open.flatMap((inv) =>
      inv.targetId
        ? [
            {
              type: 'invite.revoked' as const,
              groupId: group.id,
              actorId: agentId,
              recipients: [inv.targetId],
              data: { invite_id: inv.id },
            },
          ]
        : [],
    ),
  ]);
  return { group: toGroupDetail(archived, membership), changed: true };
}
