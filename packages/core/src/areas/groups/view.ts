/**
 * Reading groups (get_group, list_groups): a group's active members with their balances, and the
 * caller's groups page by page.
 */
import type { Db } from '../../kernel/context.ts';
import type { Actor } from '../../kernel/actor.ts';
import { formatMinor, toNumber } from '../../kernel/money.ts';
import { decodeCursor, encodeCursor } from '../../kernel/cursor.ts';
import { toGroupDetail, toGroupSummary, type GroupAccess } from '../../access/groups.ts';

/**
 * The group (wire detail, with the caller's balance) and its active members in joining order, each with
 * role and balance (minor units of the group currency; positive = others owe them). The caller's
 * membership was checked (`access`, from requireMembership).
 */
export async function viewGroup(db: Db, { group, membership }: GroupAccess) {
  const members = await db.membership.findMany({
    where: { groupId: group.id, leftAt: null },
    include: { agent: { select: { id: true, handle: true, displayName: true } } },
    orderBy: { joinedAt: 'asc' },
  });
  return {
    group: toGroupDetail(group, membership),
    members: members.map((m) => ({
      agent_id: m.agent.id,
      handle: m.agent.handle,
      display_name: m.agent.displayName,
      role: m.role as 'admin' | 'member',
      joined_at: m.joinedAt.toISOString(),
      balance_minor: toNumber(m.balanceMinor),
      balance: formatMinor(m.balanceMinor, group.currency),
      balance_pending_minor: toNumber(m.balancePendingMinor),
    })),
  };
}

/**
 * The actor's groups, newest first, `limit` (default 20) a page after `cursor` (VALIDATION_ERROR when
 * malformed), archived ones only with `include_archived`; each with the actor's balance.
 */
export async function listGroups(
  db: Db,
  actor: Pick<Actor, 'agentId'>,
  input: { include_archived?: boolean | undefined; cursor?: string | undefined; limit?: number | undefined },
) {
  const take = input.limit ?? 20;
  const after = input.cursor ? decodeCursor(input.cursor) : null;
  const rows = await db.membership.findMany({
    where: {
      agentId: actor.agentId,
      leftAt: null,
      group: {
        ...(input.include_archived ? {} : { archivedAt: null }),
        ...(after ? { OR: [{ createdAt: { lt: after.t } }, { createdAt: after.t, id: { lt: after.id } }] } : {}),
      },
    },
    include: { group: true },
    orderBy: [{ group: { createdAt: 'desc' } }, { group: { id: 'desc' } }],
    take: take + 1,
  });
  const page = rows.slice(0, take);
  const last = page[page.length - 1];
  const next_cursor = rows.length > take && last ? encodeCursor(last.group.createdAt, last.group.id) : null;
  return { groups: page.map((m) => toGroupSummary(m.group, m)), next_cursor };
}
