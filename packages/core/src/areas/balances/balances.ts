/** Balance reads: O(members + pairs), never O(history) (DESIGN.md §2). */
import { z } from 'zod';
import type { Db } from '../../kernel/context.ts';
import { uuid, agentRef } from '../../kernel/text.ts';
import { formatMinor, toNumber } from '../../kernel/money.ts';
import { toAgentRef } from '../../access/agents.ts';
import { agentsById } from '../expenses/view.ts';
import { netOutCycles, edgesFromPairRows } from '../ledger/cycles.ts';

export const memberBalanceSchema = z.object({
  agent_id: uuid,
  handle: z.string(),
  display_name: z.string(),
  balance_minor: z.number().int().describe('Positive = others owe this member.'),
  balance: z.string(),
  balance_pending_minor: z.number().int().describe('Change once pending payments are confirmed.'),
  pending_payments: z.number().int().describe('Pending payments involving this member.'),
});

export const debtSchema = z.object({
  from: agentRef.describe('Who owes.'),
  to: agentRef.describe('Who is owed.'),
  amount_minor: z.number().int().describe('> 0.'),
  amount: z.string(),
});

export async function groupBalances(db: Db, groupId: string) {
  return db.membership.findMany({
    where: { groupId, leftAt: null },
    include: { agent: { select: { id: true, handle: true, displayName: true } } },
    orderBy: { joinedAt: 'asc' },
  });
}

/** memberBalanceSchema rows from groupBalances(). */
export function toMemberBalances(
  rows: Awaited<ReturnType<typeof groupBalances>>,
  currency: string,
): Array<z.infer<typeof memberBalanceSchema>> {
  return rows.map((m) => ({
    agent_id: m.agent.id,
    handle: m.agent.handle,
    display_name: m.agent.displayName,
    balance_minor: toNumber(m.balanceMinor),
    balance: formatMinor(m.balanceMinor, currency),
    balance_pending_minor: toNumber(m.balancePendingMinor),
    pending_payments: m.pendingCount,
  }));
}

/**
 * Pairwise debts (before simplification) from pair_debts, with cycles netted out (cycles.ts): one
 * entry per pair that still owes; each member's debts net to their balance, and none remain when
 * every balance is zero.
 */
export async function pairwiseDebts(db: Db, groupId: string, currency: string) {
  const rows = await db.pairDebt.findMany({
    where: { groupId, NOT: { amountMinor: 0n } },
    orderBy: [{ agentA: 'asc' }, { agentB: 'asc' }],
  });
  const edges = netOutCycles(edgesFromPairRows(rows));
  const agents = await agentsById(
    db,
    edges.flatMap((e) => [e.debtorId, e.creditorId]),
  );
  const ref = (id: string) => toAgentRef(agents.get(id) ?? { id, handle: 'unknown', displayName: 'unknown' });
  return edges.map((e) => ({
    from: ref(e.debtorId),
    to: ref(e.creditorId),
    amount_minor: toNumber(e.amount),
    amount: formatMinor(e.amount, currency),
  }));
}
