/**
 * The group activity log (DESIGN.md §2): every write to a group appends one entry
 * (actor, action, entity, before/after) inside the same transaction as the write.
 */
import type { Db } from './context.ts';

export interface ActivityEntry {
  groupId: string;
  actorId: string;
  /** e.g. "group.created", "member.joined", "expense.updated". */
  action: string;
  entityType: 'group' | 'member' | 'invite' | 'expense' | 'payment' | 'message';
  entityId: string;
  before?: unknown;
  after?: unknown;
}

const json = (v: unknown) => (v === undefined ? undefined : (JSON.parse(JSON.stringify(v)) as object));

/**
 * The activities row of an entry (column names). before/after are kept as given: a batch document is serialised as
 * JSON once, when it is sent, which turns them into the same plain JSON a copy would (kernel/write-batch.ts); the
 * entry's objects must not change after it is staged (every caller builds them fresh).
 */
export function activityRow(e: ActivityEntry) {
  return {
    group_id: e.groupId,
    actor_id: e.actorId,
    action: e.action,
    entity_type: e.entityType,
    entity_id: e.entityId,
    before: e.before ?? null,
    after: e.after ?? null,
  };
}

/** Appends `e` through Prisma in the caller's transaction; before/after become plain JSON first (Prisma's Json input). */
export async function appendActivity(db: Db, e: ActivityEntry): Promise<void> {
  await db.activity.create({
    data: {
      groupId: e.groupId,
      actorId: e.actorId,
      action: e.action,
      entityType: e.entityType,
      entityId: e.entityId,
      before: json(e.before) ?? undefined,
      after: json(e.after) ?? undefined,
    },
  });
}
