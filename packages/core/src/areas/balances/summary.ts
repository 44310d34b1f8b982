/**
 * An agent's position across every group they belong to (get_balance_summary): per currency, per
 * group, and per counterparty and currency. Currencies are never mixed.
 */
import type { Db } from '../../kernel/context.ts';
import { formatMinor, toNumber } from '../../kernel/money.ts';
import { toAgentRef } from '../../access/agents.ts';
import { netOutCycles, edgesFromPairRows } from '../ledger/cycles.ts';
import { agentsById } from '../expenses/view.ts';

/**
 * The balance summary of `agentId` over the groups they are an active member of (archived groups
 * only with opts.includeArchived), newest membership first. All amounts are integer minor units of
 * their currency (plus formatted strings); positive = the agent is owed.
 * - currencies: per currency, sum of balances and pending balances, what the agent is owed and owes
 *   (from the counterparties below), and how many groups.
 * - groups: per group, the agent's balance and pending balance.
 * - counterparties: per other agent and currency, the net of the pairwise debts across groups after
 *   netting out loops within each group (as get_balances does), non-zero only, with the group ids.
 * Errors: none.
 */
export async function balanceSummary(db: Db, agentId: string, opts: { includeArchived?: boolean | undefined } = {}) {
  const memberships = await db.membership.findMany({
    where: { agentId, leftAt: null, ...(opts.includeArchived ? {} : { group: { archivedAt: null } }) },
    include: { group: { select: { id: true, name: true, currency: true, archivedAt: true } } },
    orderBy: { joinedAt: 'desc' },
  });
  const groupIds = memberships.map((m) => m.groupId);
  // Whole groups' debts, so loops are netted out as get_balances does (cycles.ts); then the caller's.
  const rows = groupIds.length ? await db.pairDebt.findMany({ where: { groupId: { in: groupIds }, NOT: { amountMinor: 0n } } }) : [];
  const byGroup = new Map<string, typeof rows>();
  for (const r of rows) byGroup.set(r.groupId, [...(byGroup.get(r.groupId) ?? []), r]);
  const pairs = [...byGroup].flatMap(([groupId, groupRows]) =>
    netOutCycles(edgesFromPairRows(groupRows))
      .filter((e) => e.debtorId === agentId || e.creditorId === agentId)
      .map((e) => ({
        groupId,
        other: e.debtorId === agentId ? e.creditorId : e.debtorId,
        signed: e.debtorId === agentId ? -e.amount : e.amount,
      })),
  );
  const currencyOf = new Map(memberships.map((m) => [m.groupId, m.group.currency]));
  const cp = new Map<string, { other: string; currency: string; net: bigint; groups: Set<string> }>();
  for (const p of pairs) {
    const { other, signed } = p; // signed positive: they owe me
    const currency = currencyOf.get(p.groupId)!;
    const k = `${other}|${currency}`;
    const e = cp.get(k) ?? { other, currency, net: 0n, groups: new Set<string>() };
    e.net += signed;
    e.groups.add(p.groupId);
    cp.set(k, e);
  }
  const agents = await agentsById(
    db,
    [...cp.values()].map((c) => c.other),
  );
  const counterparties = [...cp.values()]
    .filter((c) => c.net !== 0n)
    .sort((a, b) => (a.currency !== b.currency ? (a.currency < b.currency ? -1 : 1) : a.net > b.net ? -1 : a.net < b.net ? 1 : 0))
    .map((c) => ({
      agent: toAgentRef(agents.get(c.other) ?? { id: c.other, handle: 'unknown', displayName: 'unknown' }),
      currency: c.currency,
      net_minor: toNumber(c.net),
      net: formatMinor(c.net, c.currency),
      group_ids: [...c.groups].sort(),
    }));
  const cur = new Map<string, { balance: bigint; pending: bigint; owed: bigint; owe: bigint; groups: number }>();
  for (const m of memberships) {
    const e = cur.get(m.group.currency) ?? { balance: 0n, pending: 0n, owed: 0n, owe: 0n, groups: 0 };
    e.balance += m.balanceMinor;
    e.pending += m.balancePendingMinor;
    e.groups++;
    cur.set(m.group.currency, e);
  }
  for (const c of cp.values()) {
    const e = cur.get(c.currency)!;
    if (c.net > 0n) e.owed += c.net;
    else e.owe -= c.net;
  }
  const currencies = [...cur.entries()]
    .sort(([a], [b]) => (a < b ? -1 : 1))
    .map(([currency, e]) => ({
      currency,
      balance_minor: toNumber(e.balance),
      balance: formatMinor(e.balance, currency),
      pending_minor: toNumber(e.pending),
      you_are_owed_minor: toNumber(e.owed),
      you_owe_minor: toNumber(e.owe),
      group_count: e.groups,
    }));
  const groups = memberships.map((m) => ({
    group_id: m.groupId,
    name: m.group.name,
    currency: m.group.currency,
    archived: m.group.archivedAt !== null,
    balance_minor: toNumber(m.balanceMinor),
    balance: formatMinor(m.balanceMinor, m.group.currency),
    balance_pending_minor: toNumber(m.balancePendingMinor),
  }));
  return { currencies, groups, counterparties };
}
