/**
 * Inbox items (issue 4): created in the same transaction as the event that causes them, with
 * the agent's counters (`inbox_unread`, `inbox_requires_action`) maintained alongside so the
 * summary on every response costs one primary-key read.
 *
 * Counter meaning: unread = items with read_at null; requires_action = items with
 * requires_action true and resolved_at null.
 */
import { Prisma } from '@kitty/db';
import type { Db } from '../context.ts';

export interface InboxEvent {
  agentId: string;
  /** invite_received | payment_to_confirm | payment_confirmed | payment_rejected | expense_added | expense_changed | message | contact_added | member_joined | member_left | group_archived … */
  kind: string;
  /** One short line (≤ 140 chars) for the summary's `top`. */
  text: string;
  requiresAction?: boolean;
  /** Lower is more urgent; requires-action items default to 1, others to 5. */
  priority?: number;
  entityType?: string;
  entityId?: string;
  groupId?: string;
}

export async function notify(db: Db, e: InboxEvent): Promise<void> {
  const requiresAction = e.requiresAction ?? false;
  await db.inboxItem.create({
    data: {
      agentId: e.agentId,
      kind: e.kind,
      text: e.text.length > 140 ? `${e.text.slice(0, 139)}…` : e.text,
      requiresAction,
      priority: e.priority ?? (requiresAction ? 1 : 5),
      entityType: e.entityType ?? null,
      entityId: e.entityId ?? null,
      groupId: e.groupId ?? null,
    },
  });
  await db.agent.update({
    where: { id: e.agentId },
    data: { inboxUnread: { increment: 1 }, ...(requiresAction ? { inboxRequiresAction: { increment: 1 } } : {}) },
  });
}

/**
 * Sends the same event to several agents (skipping `except`, usually the actor) in two
 * statements whatever the number of recipients; counter rows are locked in id order so
 * concurrent fan-outs to overlapping groups cannot deadlock each other.
 */
export async function notifyAll(db: Db, agentIds: string[], except: string | undefined, e: Omit<InboxEvent, 'agentId'>): Promise<void> {
  const ids = [...new Set(agentIds)].filter((id) => id !== except).sort();
  if (ids.length === 0) return;
  if (ids.length === 1) return notify(db, { ...e, agentId: ids[0]! });
  const requiresAction = e.requiresAction ?? false;
  const text = e.text.length > 140 ? `${e.text.slice(0, 139)}…` : e.text;
  await db.inboxItem.createMany({
    data: ids.map((agentId) => ({
      agentId,
      kind: e.kind,
      text,
      requiresAction,
      priority: e.priority ?? (requiresAction ? 1 : 5),
      entityType: e.entityType ?? null,
      entityId: e.entityId ?? null,
      groupId: e.groupId ?? null,
    })),
  });
  const ra = requiresAction ? 1 : 0;
  await db.$executeRaw`
    UPDATE agents SET inbox_unread = inbox_unread + 1, inbox_requires_action = inbox_requires_action + ${ra}
    WHERE id IN (SELECT id FROM agents WHERE id = ANY(${ids}::uuid[]) ORDER BY id FOR UPDATE)`;
}

/**
 * Clears `requires_action` on the open items about an entity (the cause was resolved: invite
 * joined or declined, payment confirmed …). Restrict to one agent with `agentId`.
 * @returns how many items were resolved.
 */
export async function resolveAction(db: Db, where: { entityType: string; entityId: string; agentId?: string }): Promise<number> {
  const rows = await db.$queryRaw<Array<{ agent_id: string; n: bigint }>>`
    WITH resolved AS (
      UPDATE inbox_items SET resolved_at = now()
      WHERE entity_type = ${where.entityType} AND entity_id = ${where.entityId}
        AND requires_action AND resolved_at IS NULL
        ${where.agentId ? Prisma.sql`AND agent_id = ${where.agentId}::uuid` : Prisma.empty}
      RETURNING agent_id)
    SELECT agent_id, count(*) AS n FROM resolved GROUP BY agent_id`;
  let total = 0;
  for (const r of rows) {
    total += Number(r.n);
    await db.agent.update({ where: { id: r.agent_id }, data: { inboxRequiresAction: { decrement: Number(r.n) } } });
  }
  return total;
}
