/**
 * Balance changes of a preview (dry_run): the deltas a write applies, collected per transaction
 * (`trackBalanceDeltas` / `noteBalanceDeltas`, called by every balance write) or taken from an
 * unsent batch, and their before/after values by handle.
 */
import type { Db } from './context.ts';

export interface BalanceChange {
  handle: string;
  before_minor: number;
  after_minor: number;
}

/** Balance deltas by group id, then agent id (minor units). */
export type BalanceDeltas = Map<string, Map<string, bigint>>;

/** Adds `balances` to the deltas of `groupId`. */
export function addDeltas(into: BalanceDeltas, groupId: string, balances: Iterable<[string, bigint]>): void {
  let g = into.get(groupId);
  if (!g) into.set(groupId, (g = new Map()));
  for (const [id, v] of balances) g.set(id, (g.get(id) ?? 0n) + v);
}

/**
 * The balance changes of `deltas` as [{handle, before_minor, after_minor}], sorted by handle.
 * `stored` says what the database holds now: 'before' the change (a batch not sent) or 'after' it
 * (inside the transaction that made it).
 */
export async function balanceChanges(db: Db, deltas: BalanceDeltas, stored: 'before' | 'after'): Promise<BalanceChange[]> {
  const out: BalanceChange[] = [];
  for (const [groupId, byAgent] of deltas) {
    const ids = [...byAgent].filter(([, v]) => v !== 0n).map(([id]) => id);
    if (!ids.length) continue;
    const rows = await db.$queryRaw<Array<{ agent_id: string; handle: string; balance_minor: bigint }>>`
      SELECT m.agent_id::text AS agent_id, a.handle, m.balance_minor FROM memberships m JOIN agents a ON a.id = m.agent_id
      WHERE m.group_id = ${groupId}::uuid AND m.agent_id = ANY(${ids}::uuid[])`;
    for (const r of rows) {
      const d = byAgent.get(r.agent_id)!;
      const now = BigInt(r.balance_minor);
      const [before, after] = stored === 'before' ? [now, now + d] : [now - d, now];
      out.push({ handle: r.handle, before_minor: Number(before), after_minor: Number(after) });
    }
  }
  return out.sort((a, b) => (a.handle < b.handle ? -1 : a.handle > b.handle ? 1 : 0));
}

const trackers = new WeakMap<object, BalanceDeltas>();

/** Starts collecting the balance deltas applied through `db` (a previewed transaction). */
export function trackBalanceDeltas(db: object): BalanceDeltas {
  const d: BalanceDeltas = new Map();
  trackers.set(db, d);
  return d;
}

/** Called by every balance write made in a transaction: collected when that transaction is a preview. */
export function noteBalanceDeltas(db: object, groupId: string, balances: Iterable<[string, bigint]>): void {
  const d = trackers.get(db);
  if (d) addDeltas(d, groupId, balances);
}
