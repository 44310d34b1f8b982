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

/** The activities row of an entry (column names; before/after as plain JSON). */
export function activityRow(e: ActivityEntry) {
  return {
    group_id: e.groupId,
    actor_id: e.actorId,
    action: e.action,
    entity_type: e.entityType,
    entity_id: e.entityId,
    before: json(e.before) ?? null,
    after: json(e.after) ?? null,
  };
}

export async function appendActivity(db: Db, e: ActivityEntry): Promise<void> {
  const r = activityRow(e);
  await db.activity.create({
    data: {
      groupId: r.group_id,
      actorId: r.actor_id,
      action: r.action,
      entityType: r.entity_type,
      entityId: r.entity_id,
      before: r.before ?? undefined,
      after: r.after ?? undefined,
    },
  });
}
