/**
 * Incremental balance maintenance (DESIGN.md §2): every balance-changing write applies its
 * delta to memberships.balance_minor and pair_debts in the same transaction, after locking the
 * group row (requireMembership {lock:true}), so concurrent writes to a group serialise and
 * reading balances never touches history.
 *
 * pair_debts: one row per unordered pair (agent_a < agent_b), amount_minor > 0 means b owes a.
 * For every member, Σ over their pair rows (signed towards them) equals their balance.
 */
import type { Db } from '../../kernel/context.ts';
import { ToolError } from '../../kernel/errors.ts';
import { noteBalanceDeltas } from '../../kernel/balance-changes.ts';
import { pairEdges, type ShareLine, type DebtEdge } from './split.ts';

/** Balance and pair-debt changes keyed by agent and by canonical pair. */
export class LedgerDelta {
  readonly balances = new Map<string, bigint>();
  readonly pairs = new Map<string, bigint>();

  /** Adds (sign 1) or removes (sign −1) the effect of an expense's share lines. */
  addLines(lines: readonly ShareLine[], sign: 1n | -1n): this {
    for (const l of lines) this.addBalance(l.agentId, sign * (l.paidMinor - l.owedMinor));
    for (const e of pairEdges(lines)) this.addEdge(e, sign);
    return this;
  }

  /** A confirmed payment payer → payee: the payer's balance rises, the payee's falls. */
  addPayment(payerId: string, payeeId: string, amount: bigint, sign: 1n | -1n): this {
    this.addBalance(payerId, sign * amount);
    this.addBalance(payeeId, -sign * amount);
    this.addEdge({ debtorId: payeeId, creditorId: payerId, amount }, sign);
    return this;
  }

  addBalance(agentId: string, delta: bigint): void {
    if (delta === 0n) return;
    this.balances.set(agentId, (this.balances.get(agentId) ?? 0n) + delta);
  }

  addEdge(e: DebtEdge, sign: 1n | -1n): void {
    // Canonical row (a < b), positive = b owes a.
    const [a, b, v] = e.debtorId > e.creditorId ? [e.creditorId, e.debtorId, e.amount] : [e.debtorId, e.creditorId, -e.amount];
    const k = `${a}|${b}`;
    this.pairs.set(k, (this.pairs.get(k) ?? 0n) + sign * v);
  }

  /** Agents whose balance actually changes. */
  changedAgents(): string[] {
    return [...this.balances].filter(([, v]) => v !== 0n).map(([k]) => k);
  }
}

/**
 * Applies a delta. Refuses (MEMBER_LEFT, 409) when it would change the balance of someone who
 * is no longer an active member: they left settled, and their balance must stay so.
 */
export async function applyDelta(db: Db, groupId: string, delta: LedgerDelta): Promise<void> {
  await assertBalancesMayChange(db, groupId, delta);
  noteBalanceDeltas(db, groupId, delta.balances);
  const changed = [...delta.balances].filter(([, v]) => v !== 0n).sort(([a], [b]) => (a < b ? -1 : 1));
  if (changed.length) {
    const ids = changed.map(([k]) => k);
    await db.$executeRaw`
      UPDATE memberships m SET balance_minor = m.balance_minor + d.delta
      FROM unnest(${ids}::uuid[], ${changed.map(([, v]) => v.toString())}::bigint[]) AS d(agent_id, delta)
      WHERE m.group_id = ${groupId}::uuid AND m.agent_id = d.agent_id`;
  }
  const pairs = [...delta.pairs].filter(([, v]) => v !== 0n).sort(([a], [b]) => (a < b ? -1 : 1));
  if (pairs.length) {
    const as = pairs.map(([k]) => k.split('|')[0]!);
    const bs = pairs.map(([k]) => k.split('|')[1]!);
    await db.$executeRaw`
      INSERT INTO pair_debts (group_id, agent_a, agent_b, amount_minor)
      SELECT ${groupId}::uuid, t.a, t.b, t.d
      FROM unnest(${as}::uuid[], ${bs}::uuid[], ${pairs.map(([, v]) => v.toString())}::bigint[]) AS t(a, b, d)
      ON CONFLICT (group_id, agent_a, agent_b) DO UPDATE SET amount_minor = pair_debts.amount_minor + excluded.amount_minor`;
  }
}

/**
 * Refuses (MEMBER_LEFT, 409) a delta that would change the balance of someone who is no longer an
 * active member of the group: they left settled, and their balance must stay so.
 */
export async function assertBalancesMayChange(db: Db, groupId: string, delta: LedgerDelta): Promise<void> {
  const ids = delta.changedAgents();
  if (!ids.length) return;
  const active = await db.membership.findMany({ where: { groupId, agentId: { in: ids }, leftAt: null }, select: { agentId: true } });
  if (active.length === ids.length) return;
  const activeSet = new Set(active.map((a) => a.agentId));
  const gone = ids.filter((id) => !activeSet.has(id));
  const agents = await db.agent.findMany({ where: { id: { in: gone } }, select: { handle: true } });
  throw new ToolError(
    'MEMBER_LEFT',
    `This change would alter the balance of ${agents.map((a) => '@' + a.handle).join(', ')}, who left the group settled.`,
    { details: { handles: agents.map((a) => a.handle) } },
  );
}
