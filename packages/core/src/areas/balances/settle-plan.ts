/**
 * A group's settle-up plan (suggest_settlements): the planner's transfers for the members' current
 * balances, each with ready record_payment arguments whose idempotency key is derived from the
 * ledger state, so a retried payment of the same plan is recorded once.
 */
import { createHash } from 'node:crypto';
import type { Db } from '../../kernel/context.ts';
import type { GroupAccess } from '../../access/groups.ts';
import { formatMinor, toNumber } from '../../kernel/money.ts';
import { toAgentRef } from '../../access/agents.ts';
import { groupBalances } from './balances.ts';
import { planSettlements } from './settle.ts';

/**
 * The settle-up plan of the group (`access`: the caller is a member). include_pending (default true)
 * counts pending payments as done. Amounts are integer minor units of the group currency (plus a
 * formatted string). The idempotency key is "settle-" + 40 hex digits of SHA-256 over group, last
 * activity id, include_pending, payer, payee and amount: the same for the same ledger state.
 * Returns the group, `plan` { group_id, currency, transfers, method (exact | greedy), settled } and
 * `pendingPayments` (whether any member has a pending payment).
 */
export async function settlementPlan(db: Db, { group }: GroupAccess, req: { include_pending?: boolean | undefined }) {
  const rows = await groupBalances(db, group.id);
  const withPending = req.include_pending ?? true;
  const byId = new Map(rows.map((m) => [m.agentId, m.agent]));
  // The ledger state the plan is for: every write to a group appends to its activity log.
  const last = await db.activity.findFirst({ where: { groupId: group.id }, orderBy: { id: 'desc' }, select: { id: true } });
  const keyFor = (from: string, to: string, amount: bigint) =>
    `settle-${createHash('sha256')
      .update(`${group.id}|${last?.id ?? 0n}|${withPending}|${from}|${to}|${amount}`)
      .digest('hex')
      .slice(0, 40)}`;
  const plan = planSettlements(rows.map((m) => ({ key: m.agentId, amount: m.balanceMinor + (withPending ? m.balancePendingMinor : 0n) })));
  const transfers = plan.transfers.map((t) => {
    const from = byId.get(t.from)!;
    const to = byId.get(t.to)!;
    return {
      from: toAgentRef(from),
      to: toAgentRef(to),
      amount_minor: toNumber(t.amount),
      amount: formatMinor(t.amount, group.currency),
      record_payment: {
        group_id: group.id,
        from_handle: from.handle,
        to_handle: to.handle,
        amount_minor: toNumber(t.amount),
        idempotency_key: keyFor(t.from, t.to, t.amount),
      },
    };
  });
  return {
    group,
    pendingPayments: rows.some((m) => m.pendingCount > 0),
    plan: {
      group_id: group.id,
      currency: group.currency,
      transfers,
      method: plan.exact ? ('exact' as const) : ('greedy' as const),
      settled: transfers.length === 0,
    },
  };
}
