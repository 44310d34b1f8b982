/**
 * Creating a group (create_group): the group with the caller as its only member and admin, and
 * its first activity entry, in one batched write.
 */
import { randomUUID } from 'node:crypto';
import type { Actor } from '../../kernel/actor.ts';
import { toGroupDetail } from '../../access/groups.ts';
import { requireCurrency } from '../../kernel/money.ts';
import type { WriteBatch } from '../../kernel/write-batch.ts';

/**
 * Creates group `req.name` (1-80 characters) in `req.currency` (ISO 4217, fixed for good) with an
 * optional description (0-500) for `actor`, who becomes its admin: the group, the
 * membership and the first activity entry are staged in `batch` (one round trip, nothing to guard:
 * the group is new). Returns the group (wire detail, the caller's balance 0).
 * Errors: VALIDATION_ERROR (unknown currency).
 */
export function createGroup(
  batch: WriteBatch,
  actor: Actor,
  req: { name: string; currency: string; description?: string | undefined },
  now: Date,
) {
  requireCurrency(req.currency);
  const agentId = actor.agentId;
  const group = {
    id: randomUUID(),
    name: req.name,
    description: req.description || null,
    currency: req.currency,
    kind: 'group',
    memberCount: 1,
    createdById: agentId,
    createdAt: now,
    archivedAt: null,
  };
  batch.insert('groups', {
    id: group.id,
    name: group.name,
    description: group.description,
    currency: group.currency,
    member_count: 1,
    created_by: agentId,
    created_at: now.toISOString(),
    updated_at: now.toISOString(),
  });
  batch.insert('memberships', { group_id: group.id, agent_id: agentId, role: 'admin', joined_at: now.toISOString() });
  batch.activity({
    groupId: group.id,
    actorId: agentId,
    action: 'group.created',
    entityType: 'group',
    entityId: group.id,
    after: { name: group.name, currency: group.currency, description: group.description },
  });
  batch.event({
    type: 'group.created',
    groupId: group.id,
    actorId: agentId,
    recipients: [agentId],
    data: { group_id: group.id, name: group.name, currency: group.currency },
  });
  // The creator is the caller: no read-back of the agent row.
  return toGroupDetail(
    { ...group, createdBy: { id: agentId, handle: actor.handle, displayName: actor.displayName } },
    { balanceMinor: 0n },
  );
}
