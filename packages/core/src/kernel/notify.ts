/**
 * Inbox items (issue 4): created in the same transaction as the event that causes them, with
 * the agent's counters (`inbox_unread`, `inbox_requires_action`) maintained alongside so the
 * summary on every response costs one primary-key read.
 *
 * Counter meaning: unread = items with read_at null; requires_action = items with
 * requires_action true and resolved_at null.
 *
 * Lock order (no deadlocks): inside a transaction opened with `beginInboxCounters`, counter
 * changes are only collected; `flushInboxCounters` applies them all in one step at the end of the
 * transaction, locking the agent rows in id order (FOR NO KEY UPDATE, which does not conflict with
 * the KEY SHARE locks that inserting rows referencing an agent takes). So every transaction takes
 * its agent-row locks last, in one total order, and holds them only until commit. (Before, each
 * notify updated its row on the spot and fan-outs used FOR UPDATE, which conflicts with those
 * KEY SHARE locks: two transactions notifying overlapping agents deadlocked.)
 * The write-tool middleware (trpc.ts) and the recurrence runner begin and flush; outside such a
 * transaction the counters are updated on the spot (one row per statement).
 */
import { Prisma } from '@kitty/db';
import type { Db } from './context.ts';

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

type CounterDelta = { unread: number; requiresAction: number };
const pending = new WeakMap<object, Map<string, CounterDelta>>();

/** Starts collecting counter changes for the transaction `db` (see the lock order above). */
export function beginInboxCounters(db: Db): void {
  if (!pending.has(db)) pending.set(db, new Map());
}

/**
 * Applies the counter changes collected for `db` in one step, agent rows locked in id order.
 * Call it as the last statement of the transaction. Idempotent (a second call applies nothing).
 */
export async function flushInboxCounters(db: Db): Promise<void> {
  const deltas = pending.get(db);
  if (!deltas) return;
  pending.delete(db);
  const rows = [...deltas].filter(([, d]) => d.unread !== 0 || d.requiresAction !== 0).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  if (!rows.length) return;
  const ids = rows.map(([id]) => id);
  await db.$executeRaw`SELECT 1 FROM agents WHERE id = ANY(${ids}::uuid[]) ORDER BY id FOR NO KEY UPDATE`;
  await db.$executeRaw`
    UPDATE agents a SET inbox_unread = a.inbox_unread + d.u, inbox_requires_action = a.inbox_requires_action + d.r
    FROM unnest(${ids}::uuid[], ${rows.map(([, d]) => d.unread)}::int[], ${rows.map(([, d]) => d.requiresAction)}::int[]) AS d(id, u, r)
    WHERE a.id = d.id`;
}

/** Records (inside a counting transaction) or applies (outside one) a change of one agent's counters. */
export async function changeInboxCounters(db: Db, agentId: string, unread: number, requiresAction: number): Promise<void> {
  if (unread === 0 && requiresAction === 0) return;
  const deltas = pending.get(db);
  if (deltas) {
    const d = deltas.get(agentId) ?? { unread: 0, requiresAction: 0 };
    d.unread += unread;
    d.requiresAction += requiresAction;
    deltas.set(agentId, d);
    return;
  }
  await db.$executeRaw`
    UPDATE agents SET inbox_unread = inbox_unread + ${unread}::int, inbox_requires_action = inbox_requires_action + ${requiresAction}::int
    WHERE id = ${agentId}::uuid`;
}

/** The inbox_items row of an event (column names; text cut to 140 characters; requires-action items default to priority 1, others 5). */
export function inboxRow(e: InboxEvent) {
  const requiresAction = e.requiresAction ?? false;
  return {
    agent_id: e.agentId,
    kind: e.kind,
    text: e.text.length > 140 ? `${e.text.slice(0, 139)}…` : e.text,
    requires_action: requiresAction,
    priority: e.priority ?? (requiresAction ? 1 : 5),
    entity_type: e.entityType ?? null,
    entity_id: e.entityId ?? null,
    group_id: e.groupId ?? null,
  };
}

export async function notify(db: Db, e: InboxEvent): Promise<void> {
  const r = inboxRow(e);
  await db.inboxItem.create({
    data: {
      agentId: r.agent_id,
      kind: r.kind,
      text: r.text,
      requiresAction: r.requires_action,
      priority: r.priority,
      entityType: r.entity_type,
      entityId: r.entity_id,
      groupId: r.group_id,
    },
  });
  await changeInboxCounters(db, e.agentId, 1, r.requires_action ? 1 : 0);
}

/**
 * Sends the same event to several agents (skipping `except`, usually the actor) in one insert
 * whatever the number of recipients; the counters change as for `notify`.
 */
export async function notifyAll(db: Db, agentIds: string[], except: string | undefined, e: Omit<InboxEvent, 'agentId'>): Promise<void> {
  const ids = [...new Set(agentIds)].filter((id) => id !== except).sort();
  if (ids.length === 0) return;
  if (ids.length === 1) return notify(db, { ...e, agentId: ids[0]! });
  const r = inboxRow({ ...e, agentId: ids[0]! });
  const requiresAction = r.requires_action;
  await db.inboxItem.createMany({
    data: ids.map((agentId) => ({
      agentId,
      kind: r.kind,
      text: r.text,
      requiresAction,
      priority: r.priority,
      entityType: r.entity_type,
      entityId: r.entity_id,
      groupId: r.group_id,
    })),
  });
  if (pending.has(db)) {
    for (const id of ids) await changeInboxCounters(db, id, 1, requiresAction ? 1 : 0);
    return;
  }
  await db.$executeRaw`SELECT 1 FROM agents WHERE id = ANY(${ids}::uuid[]) ORDER BY id FOR NO KEY UPDATE`;
  await db.$executeRaw`
    UPDATE agents SET inbox_unread = inbox_unread + 1, inbox_requires_action = inbox_requires_action + ${requiresAction ? 1 : 0}::int
    WHERE id = ANY(${ids}::uuid[])`;
}

/**
 * Resolves the items about an entity whose cause is settled (invite joined, declined or revoked; payment
 * confirmed …): open items stop requiring action, and every resolved item is marked read and says what happened
 * (`resolution`, e.g. "declined by @ana"), so it counts neither as unread nor as requiring action. Restrict to one
 * agent with `agentId`; `unreadToo` also resolves unread items that never required action (an expense deleted:
 * its "added" items are moot). Call it before notifying about the same entity, or the new item is resolved too.
 * @returns how many items were resolved.
 */
export async function resolveAction(
  db: Db,
  where: { entityType: string; entityId: string; agentId?: string; resolution: string; unreadToo?: boolean },
): Promise<number> {
  // Item rows are locked first (FOR UPDATE: a concurrent mark_inbox_read then skips them), the counters last.
  const rows = await db.$queryRaw<Array<{ agent_id: string; n: bigint; u: bigint; r: bigint }>>`
    WITH target AS (
      SELECT id, read_at IS NULL AS was_unread, requires_action AND resolved_at IS NULL AS was_open FROM inbox_items
      WHERE entity_type = ${where.entityType} AND entity_id = ${where.entityId}
        AND ((requires_action AND resolved_at IS NULL) ${where.unreadToo ? Prisma.sql`OR read_at IS NULL` : Prisma.empty})
        ${where.agentId ? Prisma.sql`AND agent_id = ${where.agentId}::uuid` : Prisma.empty}
      FOR UPDATE),
    resolved AS (
      UPDATE inbox_items i SET resolved_at = coalesce(i.resolved_at, now()), read_at = coalesce(i.read_at, now()), resolution = ${where.resolution}
      FROM target t WHERE i.id = t.id
      RETURNING i.agent_id, t.was_unread, t.was_open)
    SELECT agent_id, count(*) AS n, count(*) FILTER (WHERE was_unread) AS u, count(*) FILTER (WHERE was_open) AS r FROM resolved GROUP BY agent_id`;
  let total = 0;
  for (const r of rows) {
    total += Number(r.n);
    await changeInboxCounters(db, r.agent_id, -Number(r.u), -Number(r.r));
  }
  return total;
}
