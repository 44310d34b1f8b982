/**
 * The group activity log (DESIGN.md §2): every write to a group appends one entry
 * (actor, action, entity, before/after) inside the same transaction as the write.
 */
import type { Db } from '../context.ts';

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
