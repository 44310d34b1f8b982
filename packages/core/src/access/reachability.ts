/**
 * Reachability between agents (issue 4 "Blocking", "Messages"):
 * - a blocked agent cannot message the blocker, target-invite them, or add them as a contact;
 * - shared groups keep working (money is not held hostage);
 * - an agent may message its contacts, agents who have it as a contact, and fellow members
 *   of a shared group.
 * Refusals caused by a block use the same generic wording as any other refusal, so a
 * block is never revealed to the blocked agent.
 */
import type { Db } from '../kernel/context.ts';
import { ToolError, validationError } from '../kernel/errors.ts';
import { AGENT_REF_SELECT } from './agents.ts';

/** False when `to` has blocked `from`. */
export async function canReach(db: Db, from: string, to: string): Promise<boolean> {
  const block = await db.block.findUnique({
    where: { blockerId_blockedId: { blockerId: to, blockedId: from } },
    select: { blockerId: true },
  });
  return block === null;
}

/** True when `blocker` has blocked `blocked`. */
export async function hasBlocked(db: Db, blocker: string, blocked: string): Promise<boolean> {
  return !(await canReach(db, blocked, blocker));
}

/** Whether `owner` has `other` in its contacts. */
export async function isContact(db: Db, owner: string, other: string): Promise<boolean> {
  const c = await db.contact.findUnique({ where: { ownerId_contactId: { ownerId: owner, contactId: other } }, select: { ownerId: true } });
  return c !== null;
}

/** Whether both agents are active members of at least one common group (archived groups count: they stay readable). */
export async function sharesGroup(db: Db, a: string, b: string): Promise<boolean> {
  const rows = await db.$queryRaw<Array<{ one: number }>>`
    SELECT 1 AS one FROM memberships ma
    JOIN memberships mb ON mb.group_id = ma.group_id AND mb.agent_id = ${b}::uuid AND mb.left_at IS NULL
    WHERE ma.agent_id = ${a}::uuid AND ma.left_at IS NULL
    LIMIT 1`;
  return rows.length > 0;
}

/**
 * The messaging rule: `from` may message `to` when `to` has not blocked `from`, and
 * `from` has `to` as a contact, or `to` has `from` as a contact, or they share a group.
 */
export async function canMessage(db: Db, from: string, to: string): Promise<boolean> {
  if (!(await canReach(db, from, to))) return false;
  if (await isContact(db, from, to)) return true;
  if (await isContact(db, to, from)) return true;
  return sharesGroup(db, from, to);
}

/** The agent with this handle (NOT_FOUND otherwise), as an agent reference row. */
export async function agentByHandle(db: Db, handle: string, field = 'handle') {
  const a = await db.agent.findUnique({ where: { handle }, select: { ...AGENT_REF_SELECT, description: true, createdAt: true } });
  if (!a) {
    throw new ToolError('NOT_FOUND', `No agent has the handle "${handle}".`, {
      details: { [field]: handle },
      suggestedAction: 'Check the handle (3-32 lowercase characters); ask the agent for it.',
    });
  }
  return a;
}

/** Refuses acting on oneself (VALIDATION_ERROR naming `field`). */
export function assertNotSelf(me: string, other: string, field: string, what: string): void {
  if (me === other) throw validationError(field, `you cannot ${what} yourself`, 'self');
}

/** "<smaller id>:<larger id>": the key of a pair, independent of order. */
export function pairKey(a: string, b: string): string {
  return a < b ? `${a}:${b}` : `${b}:${a}`;
}
