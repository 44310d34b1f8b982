/**
 * Changing a group's settings (update_group), with its activity entry in the caller's transaction.
 */
import type { ToolContext } from '../context.ts';
import { ToolError } from '../errors.ts';
import { toGroupDetail, requireMembership, assertNotArchived, assertAdmin, GROUP_DETAIL_INCLUDE } from './groups.ts';
import { appendActivity } from './activity.ts';

/**
 * Changes the given settings of group req.group_id on behalf of the caller (ctx.auth), a member,
 * holding the group lock: name (1-80 characters), description (0-500; "" clears it),
 * members_can_edit_expenses (admins only). Returns the group (wire detail).
 * Errors: NOT_FOUND (group), FORBIDDEN (not a member; not an admin for members_can_edit_expenses),
 * GROUP_ARCHIVED, INVALID_STATE (renaming a direct ledger).
 */
export async function updateGroup(
  ctx: Pick<ToolContext, 'db' | 'auth'>,
  req: { group_id: string; name?: string | undefined; description?: string | undefined; members_can_edit_expenses?: boolean | undefined },
) {
  const { db } = ctx;
  const agentId = ctx.auth!.agentId;
  const { group, membership } = await requireMembership(db, req.group_id, agentId, { lock: true });
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
  return toGroupDetail(updated, membership);
}
