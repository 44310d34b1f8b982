/**
 * Group access and projections (interface-spec "Group summary", "Group detail", "Member").
 */
import { z } from 'zod';
import type { Db } from '../context.ts';
import { ToolError } from '../errors.ts';
import { uuid, timestamp, agentRef } from '../text.ts';
import { formatMinor, toNumber } from './money.ts';
import { toAgentRef, AGENT_REF_SELECT } from './agents.ts';

export const groupSummarySchema = z.object({
  group_id: uuid,
  name: z.string(),
  currency: z.string(),
  kind: z.enum(['group', 'direct']),
  archived: z.boolean(),
  member_count: z.number().int(),
  my_balance_minor: z.number().int().optional().describe("Caller's balance in minor units: positive = others owe the caller."),
  my_balance: z.string().optional().describe("Caller's balance formatted, e.g. \"€12.34\"."),
});
export const groupDetailSchema = groupSummarySchema.extend({
  description: z.string().nullable(),
  created_by: agentRef,
  created_at: timestamp,
  archived_at: timestamp.nullable(),
});
export const memberSchema = z.object({
  agent_id: uuid,
  handle: z.string(),
  display_name: z.string(),
  role: z.enum(['admin', 'member']),
  joined_at: timestamp,
  balance_minor: z.number().int().optional(),
  balance: z.string().optional(),
  balance_pending_minor: z.number().int().optional().describe('Net effect pending payments would have on this balance, minor units.'),
});

export interface GroupRow {
  id: string;
  name: string;
  description: string | null;
  currency: string;
  kind: string;
  memberCount: number;
  createdAt: Date;
  archivedAt: Date | null;
  createdById: string;
}
export interface MembershipRow {
  role: string;
  joinedAt: Date;
  leftAt: Date | null;
  balanceMinor: bigint;
  balancePendingMinor: bigint;
  pendingCount: number;
}

export function toGroupSummary(g: GroupRow, m?: Pick<MembershipRow, 'balanceMinor'> | null) {
  return {
    group_id: g.id,
    name: g.name,
    currency: g.currency,
    kind: g.kind as 'group' | 'direct',
    archived: g.archivedAt !== null,
    member_count: g.memberCount,
    ...(m ? { my_balance_minor: toNumber(m.balanceMinor), my_balance: formatMinor(m.balanceMinor, g.currency) } : {}),
  };
}

export function toGroupDetail(g: GroupRow & { createdBy: { id: string; handle: string; displayName: string } }, m?: Pick<MembershipRow, 'balanceMinor'> | null) {
  return {
    ...toGroupSummary(g, m),
    description: g.description,
    created_by: toAgentRef(g.createdBy),
    created_at: g.createdAt.toISOString(),
    archived_at: g.archivedAt?.toISOString() ?? null,
  };
}

export const GROUP_DETAIL_INCLUDE = { createdBy: { select: AGENT_REF_SELECT } } as const;

/**
 * Loads a group and the caller's active membership.
 * Errors: NOT_FOUND (no such group), FORBIDDEN (caller is not an active member — interface-spec "Errors").
 * With `lock: true` the group row is locked FOR UPDATE first, serialising writes that change
 * balances or membership of this group (write tools only).
 */
export async function requireMembership(db: Db, groupId: string, agentId: string, opts: { lock?: boolean } = {}) {
  if (opts.lock) await db.$executeRaw`SELECT 1 FROM groups WHERE id = ${groupId}::uuid FOR UPDATE`;
  const group = await db.group.findUnique({ where: { id: groupId }, include: GROUP_DETAIL_INCLUDE });
  if (!group) throw new ToolError('NOT_FOUND', `No group with group_id ${groupId}.`, { suggestedAction: 'list_groups shows your groups.' });
  const membership = await db.membership.findUnique({ where: { groupId_agentId: { groupId, agentId } } });
  if (!membership || membership.leftAt) {
    throw new ToolError('FORBIDDEN', 'You are not a member of this group.', {
      details: { group_id: groupId },
      suggestedAction: 'Ask a member for an invite, then join_group.',
    });
  }
  return { group, membership };
}

/** Refuses writes to archived groups (GROUP_ARCHIVED, 409). */
export function assertNotArchived(group: { id: string; archivedAt: Date | null }): void {
  if (group.archivedAt) {
    throw new ToolError('GROUP_ARCHIVED', 'This group is archived: it is read-only for good.', { details: { group_id: group.id } });
  }
}

/** Requires role admin (FORBIDDEN otherwise). */
export function assertAdmin(membership: { role: string }, what: string): void {
  if (membership.role !== 'admin') throw new ToolError('FORBIDDEN', `Only a group admin can ${what}.`, { details: { required_role: 'admin' } });
}

/** Active member ids of a group. */
export async function activeMemberIds(db: Db, groupId: string): Promise<string[]> {
  const rows = await db.membership.findMany({ where: { groupId, leftAt: null }, select: { agentId: true }, orderBy: { joinedAt: 'asc' } });
  return rows.map((r) => r.agentId);
}
