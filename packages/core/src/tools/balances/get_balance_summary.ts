import { z } from 'zod';
import { readTool } from '../../trpc.ts';
import { READ } from '../../meta.ts';
import { uuid, agentRef, output, groupId } from '../../text.ts';
import { formatMinor, toNumber } from '../../domain/money.ts';
import { toAgentRef } from '../../domain/agents.ts';
import { netOutCycles, edgesFromPairRows } from '../../domain/ledger/cycles.ts';
import { agentsById } from '../../domain/ledger/expense-view.ts';

export const get_balance_summary = readTool
  .meta({
    area: 'balances',
    title: 'Your balances across all groups',
    description:
      'The caller\'s position across every group they belong to: per currency (sum of balances; positive = you are owed), per group, and per counterparty and ' +
      'currency (net of the pairwise debts with that agent across groups; positive = they owe you). Amounts in minor units of each currency; currencies are ' +
      'never mixed. include_archived (default false) adds archived groups. No errors beyond authentication.',
    annotations: READ,
    errors: {},
  })
  .input(z.strictObject({ include_archived: z.boolean().optional().describe('Also count archived groups (default false).') }))
  .output(
    output({
      currencies: z.array(
        z.object({
          currency: z.string(),
          balance_minor: z.number().int(),
          balance: z.string(),
          pending_minor: z.number().int(),
          you_are_owed_minor: z.number().int().describe('Sum over counterparties who owe you.'),
          you_owe_minor: z.number().int().describe('Sum over counterparties you owe (positive number).'),
          group_count: z.number().int(),
        }),
      ),
      groups: z.array(
        z.object({
          group_id: groupId,
          name: z.string(),
          currency: z.string(),
          archived: z.boolean(),
          balance_minor: z.number().int(),
          balance: z.string(),
          balance_pending_minor: z.number().int(),
        }),
      ),
      counterparties: z.array(
        z.object({
          agent: agentRef,
          currency: z.string(),
          net_minor: z.number().int().describe('Positive: they owe you; negative: you owe them.'),
          net: z.string(),
          group_ids: z.array(uuid),
        }),
      ),
    }),
  )
  .query(async ({ ctx, input }) => {
    const agentId = ctx.auth.agentId;
    const memberships = await ctx.db.membership.findMany({
      where: { agentId, leftAt: null, ...(input.include_archived ? {} : { group: { archivedAt: null } }) },
      include: { group: { select: { id: true, name: true, currency: true, archivedAt: true } } },
      orderBy: { joinedAt: 'desc' },
    });
    const groupIds = memberships.map((m) => m.groupId);
    // Whole groups' debts, so loops are netted out as get_balances does (cycles.ts); then the caller's.
    const rows = groupIds.length ? await ctx.db.pairDebt.findMany({ where: { groupId: { in: groupIds }, NOT: { amountMinor: 0n } } }) : [];
    const byGroup = new Map<string, typeof rows>();
    for (const r of rows) byGroup.set(r.groupId, [...(byGroup.get(r.groupId) ?? []), r]);
    const pairs = [...byGroup].flatMap(([groupId, groupRows]) =>
      netOutCycles(edgesFromPairRows(groupRows))
        .filter((e) => e.debtorId === agentId || e.creditorId === agentId)
        .map((e) => ({ groupId, other: e.debtorId === agentId ? e.creditorId : e.debtorId, signed: e.debtorId === agentId ? -e.amount : e.amount })),
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
    const agents = await agentsById(ctx.db, [...cp.values()].map((c) => c.other));
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
    const suggested_next: string[] = [];
    const owing = groups.find((g) => g.balance_minor < 0);
    if (owing) suggested_next.push(`suggest_settlements: settle what you owe in "${owing.name}" (group_id ${owing.group_id})`);
    const owed = groups.find((g) => g.balance_minor > 0);
    if (owed) suggested_next.push(`get_balances: who owes you in "${owed.name}"`);
    if (!groups.length) suggested_next.push('create_group: start a shared-expense group');
    else suggested_next.push('list_groups: all your groups');
    return { currencies, groups, counterparties, suggested_next };
  });
