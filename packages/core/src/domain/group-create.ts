/**
 * Creating a group (create_group): the group with the caller as its only member and admin, and
 * its first activity entry, in the caller's transaction.
 */
import type { AuthedContext } from '../context.ts';
import { toGroupDetail } from './groups.ts';
import { requireCurrency } from './money.ts';
import { appendActivity } from './activity.ts';

/**
 * Creates group `req.name` (1-80 characters) in `req.currency` (ISO 4217, fixed for good) with an
 * optional description (0-500) for the caller (ctx.auth), who becomes its admin.
 * Returns the group (wire detail, the caller's balance 0).
 * Errors: VALIDATION_ERROR (unknown currency).
 */
export async function createGroup(ctx: AuthedContext, req: { name: string; currency: string; description?: string | undefined }) {
  const { db } = ctx;
  requireCurrency(req.currency);
  const agentId = ctx.auth.agentId;
  const now = ctx.services.now();
  const group = await db.group.create({
    data: {
      name: req.name,
      description: req.description || null,
      currency: req.currency,
      createdById: agentId,
      createdAt: now,
      memberCount: 1,
    },
  });
  await db.membership.createMany({ data: [{ groupId: group.id, agentId, role: 'admin', joinedAt: now }] });
  await appendActivity(db, {
    groupId: group.id,
    actorId: agentId,
    action: 'group.created',
    entityType: 'group',
    entityId: group.id,
    after: { name: group.name, currency: group.currency, description: group.description },
  });
  // The creator is the caller: no read-back of the agent row.
  return toGroupDetail(
    { ...group, createdBy: { id: agentId, handle: ctx.auth.handle, displayName: ctx.auth.displayName } },
    { balanceMinor: 0n },
  );
}
