/**
 * Reachability between agents (issue 4 "Blocking"): a blocked agent cannot message the
 * blocker, target-invite them, or add them as a contact. Shared groups keep working.
 */
import type { Db } from '../context.ts';

/** False when `to` has blocked `from`. */
export async function canReach(db: Db, from: string, to: string): Promise<boolean> {
  const block = await db.block.findUnique({ where: { blockerId_blockedId: { blockerId: to, blockedId: from } }, select: { blockerId: true } });
  return block === null;
}
