import { z } from 'zod';
import type { Prisma } from '@kitty/db';
import { readTool } from '../../trpc.ts';
import { READ } from '../../meta.ts';
import { cursor, limit, timestamp, agentRef, output, groupId } from '../../text.ts';
import { requireMembership } from '../../domain/groups.ts';
import { decodeCursor, pageOf, parseUpdatedAfter, SERIAL_CURSOR_ID } from '../../domain/cursor.ts';
import { toAgentRef } from '../../domain/agents.ts';
import { agentsById } from '../../domain/ledger/expense-view.ts';

export const list_activity = readTool
  .meta({
    area: 'records',
    title: 'List group activity',
    description:
      'The group\'s activity log, newest first: every write (expenses, payments, members, invites, group changes) with actor, action (e.g. expense.added, ' +
      'expense.updated, payment.confirmed), entity_type, entity_id and the before/after values (money as minor-unit strings). Filters: updated_after (ISO ' +
      'timestamp: entries after it, for sync), entity_type, entity_id. Pagination: limit 1-100 (default 20), next_cursor.',
    annotations: READ,
    errors: {
      NOT_FOUND: 'no such group',
      FORBIDDEN: 'not a member',
      VALIDATION_ERROR: 'bad cursor',
    },
  })
  .input(
    z.strictObject({
      group_id: groupId,
      updated_after: timestamp.optional(),
      entity_type: z.enum(['group', 'member', 'invite', 'expense', 'payment', 'message']).optional().describe('Only entries about this kind of entity.'),
      entity_id: z.string().max(64).optional().describe('Only entries about this entity (its id).'),
      cursor: cursor.optional(),
      limit: limit.optional(),
    }),
  )
  .output(
    output({
      activities: z.array(
        z.object({
          activity_id: z.string(),
          actor: agentRef,
          action: z.string(),
          entity_type: z.string(),
          entity_id: z.string(),
          before: z.record(z.string(), z.unknown()).nullable().describe('The changed fields before (a JSON object), or null for a creation.'),
          after: z.record(z.string(), z.unknown()).nullable().describe('The changed fields after (a JSON object), or null for a removal.'),
          created_at: timestamp,
        }),
      ),
      next_cursor: z.string().nullable(),
    }),
  )
  .query(async ({ ctx, input }) => {
    const { group } = await requireMembership(ctx.db, input.group_id, ctx.auth.agentId);
    const take = input.limit ?? 20;
    const where: Prisma.ActivityWhereInput = { groupId: group.id };
    if (input.entity_type) where.entityType = input.entity_type;
    if (input.entity_id) where.entityId = input.entity_id;
    if (input.updated_after) where.createdAt = { gt: parseUpdatedAfter(input.updated_after) };
    if (input.cursor) where.id = { lt: BigInt(decodeCursor(input.cursor, SERIAL_CURSOR_ID).id) };
    const rows = await ctx.db.activity.findMany({ where, orderBy: { id: 'desc' }, take: take + 1 });
    const { page, next_cursor } = pageOf(rows, take);
    const agents = await agentsById(ctx.db, page.map((r) => r.actorId));
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
      suggested_next: rows.length > take ? ['list_activity: pass next_cursor for older entries'] : ['list_expenses: the expenses of this group'],
    };
  });
