/**
 * The event log (docs/events.md): every write that changes what an agent may see appends its
 * events in the same transaction as the change — through `WriteBatch.event` inside
 * kitty_apply_batch for the batched writes, through `appendEvents` in an interactive transaction
 * for the others. An event is stored once (`events`) with one `event_recipients` row per agent
 * who may see it at that moment; readers (event-feed.ts) read their own rows in order.
 */
import type { Db } from './context.ts';

/** Every event type, `resource.verb`. */
export const EVENT_TYPES = [
  'expense.created',
  'expense.updated',
  'expense.deleted',
  'expense.restored',
  'payment.recorded',
  'payment.confirmed',
  'payment.rejected',
  'payment.cancelled',
  'member.joined',
  'member.left',
  'member.removed',
  'member.role_changed',
  'group.created',
  'group.updated',
  'group.archived',
  'invite.received',
  'invite.declined',
  'invite.revoked',
  'direct_ledger.requested',
  'direct_ledger.accepted',
  'message.received',
  'webhook.disabled',
] as const;
export type EventType = (typeof EVENT_TYPES)[number];

/** One event to append. `data` is compact: the entity id and the fields that changed, money as minor-unit strings. */
export interface EventSpec {
  type: EventType;
  groupId?: string | null;
  /** The agent whose call caused it (null for the scheduler's recurring occurrences). */
  actorId: string | null;
  data: Record<string, unknown>;
  /** Agents who may see it (duplicates are dropped). */
  recipients: readonly string[];
  /** The entity whose inbox items made by the same change are linked to the event, per recipient. */
  link?: { entityType: string; entityId: string };
}

/**
 * `value` with every bigint in it, at any depth, as its decimal string (JSON has no bigint: JSON.stringify throws on
 * one); objects and arrays holding none are answered as they are, so the document is serialised once, when it is sent.
 */
function bigIntsAsStrings(value: unknown): unknown {
  if (typeof value === 'bigint') return value.toString();
  if (Array.isArray(value)) {
    const items = value.map(bigIntsAsStrings);
    return items.some((v, i) => v !== value[i]) ? items : value;
  }
  if (value === null || typeof value !== 'object' || Object.getPrototypeOf(value) !== Object.prototype) return value;
  let copy: Record<string, unknown> | undefined;
  for (const [k, v] of Object.entries(value)) {
    const w = bigIntsAsStrings(v);
    if (w !== v) (copy ??= { ...(value as Record<string, unknown>) })[k] = w;
  }
  return copy ?? value;
}

/** The JSON element kitty_append_events takes (see migration 20261125212000_events). */
export function eventDoc(e: EventSpec, inboxItems?: ReadonlyMap<string, string>) {
  const recipients = [...new Set(e.recipients)].sort();
  const doc: Record<string, unknown> = {
    type: e.type,
    group_id: e.groupId ?? null,
    actor_id: e.actorId,
    data: bigIntsAsStrings(e.data),
    recipients,
  };
  if (inboxItems?.size) doc.inbox_items = recipients.map((a) => inboxItems.get(a) ?? null);
  return doc;
}

/**
 * Appends events inside the caller's interactive transaction (one statement, plus one lookup of
 * the inbox items this transaction made about each linked entity, by the entity index).
 */
export async function appendEvents(db: Db, events: readonly EventSpec[]): Promise<void> {
  const docs = [];
  for (const e of events) {
    if (!e.recipients.length) continue;
    let items: Map<string, string> | undefined;
    if (e.link) {
      const rows = await db.$queryRaw<Array<{ id: string; agent_id: string }>>`
        SELECT id::text, agent_id::text FROM inbox_items
        WHERE entity_type = ${e.link.entityType} AND entity_id = ${e.link.entityId} AND xmin = pg_current_xact_id()::xid
        ORDER BY id`;
      items = new Map();
      for (const r of rows) if (!items.has(r.agent_id)) items.set(r.agent_id, r.id);
    }
    docs.push(eventDoc(e, items));
  }
  if (!docs.length) return;
  await db.$executeRaw`SELECT kitty_append_events(${JSON.stringify(docs)}::jsonb)`;
}

/** Shorthand for one event. */
export function appendEvent(db: Db, e: EventSpec): Promise<void> {
  return appendEvents(db, [e]);
}

/** The group's active members now (inside a write that holds the group lock, the audience of a group event). */
export async function activeMemberIds(db: Db, groupId: string): Promise<string[]> {
  const rows = await db.$queryRaw<Array<{ agent_id: string }>>`
    SELECT agent_id::text FROM memberships WHERE group_id = ${groupId}::uuid AND left_at IS NULL ORDER BY agent_id`;
  return rows.map((r) => r.agent_id);
}

/** Deletes events created before `before`, at most `batch` at a time and `maxBatches` batches; returns how many. */
export async function pruneEvents(db: Db, before: Date, opts: { batch?: number; maxBatches?: number } = {}): Promise<number> {
  const size = opts.batch ?? 5000;
  let total = 0;
  for (let i = 0; i < (opts.maxBatches ?? 20); i++) {
    const rows = await db.$queryRaw<Array<{ n: bigint }>>`
      WITH d AS (DELETE FROM events WHERE id IN (
          SELECT id FROM events WHERE created_at < ${before} ORDER BY created_at LIMIT ${size}) RETURNING id),
        r AS (DELETE FROM event_recipients WHERE event_id IN (SELECT id FROM d))
      SELECT count(*) AS n FROM d`;
    const n = Number(rows[0]?.n ?? 0);
    total += n;
    if (n < size) break;
  }
  // Webhook delivery records go with the events they carried.
  await db.$executeRaw`
    DELETE FROM webhook_deliveries WHERE id IN (SELECT id FROM webhook_deliveries WHERE created_at < ${before} LIMIT ${size * 20})`;
  return total;
}
