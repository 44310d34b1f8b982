/**
 * Reading a group's activity log (list_activity): newest entry first, filtered and paged.
 */
import type { Prisma } from '@kitty/db';
import type { Db } from '../../kernel/context.ts';
import type { GroupAccess } from '../../access/groups.ts';
import { decodeCursor, pageOf, parseUpdatedAfter, SERIAL_CURSOR_ID } from '../../kernel/cursor.ts';
import { toAgentRef } from '../../access/agents.ts';
import { agentsById } from '../expenses/view.ts';

/** Which entries to list: entity_type/entity_id narrow to one kind or entity; updated_after is an RFC 3339 timestamp; limit defaults to 20; cursor is the previous page's next_cursor. */
export interface ActivityQuery {
  group_id: string;
  updated_after?: string | undefined;
  entity_type?: 'group' | 'member' | 'invite' | 'expense' | 'payment' | 'message' | undefined;
  entity_id?: string | undefined;
  cursor?: string | undefined;
  limit?: number | undefined;
}

/**
 * One page of the group's activity (`access`: the caller is a member), by id descending.
 * Returns { activities (wire shape: activity_id as a decimal string, actor, action, entity_type,
 * entity_id, before/after JSON objects or null, created_at), next_cursor (null on the last page),
 * more (whether older entries exist) }.
 * Errors: VALIDATION_ERROR (malformed cursor or updated_after).
 */
export async function listActivity(db: Db, { group }: GroupAccess, req: ActivityQuery) {
  const take = req.limit ?? 20;
  const where: Prisma.ActivityWhereInput = { groupId: group.id };
  if (req.entity_type) where.entityType = req.entity_type;
  if (req.entity_id) where.entityId = req.entity_id;
  if (req.updated_after) where.createdAt = { gt: parseUpdatedAfter(req.updated_after) };
  if (req.cursor) where.id = { lt: BigInt(decodeCursor(req.cursor, SERIAL_CURSOR_ID).id) };
  const rows = await db.activity.findMany({ where, orderBy: { id: 'desc' }, take: take + 1 });
  const { page, next_cursor } = pageOf(rows, take);
  const agents = await agentsById(
    db,
    page.map((r) => r.actorId),
  );
  return {
    activities: page.map((r) => ({
      activity_id: r.id.toString(),
      actor: toAgentRef(agents.get(r.actorId) ?? { id: r.actorId, handle: 'unknown', displayName: 'unknown' }),
      action: r.action,
      entity_type: r.entityType,
      entity_id: r.entityId,
      before: (r.before ?? null) as Record<string, unknown> | null,
      after: (r.after ?? null) as Record<string, unknown> | null,
      created_at: r.createdAt.toISOString(),
    })),
    next_cursor,
    more: rows.length > take,
  };
}
