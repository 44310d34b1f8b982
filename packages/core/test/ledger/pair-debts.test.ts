/**
 * Pairwise debts stay consistent with balances: after any sequence of expenses and confirmed
 * payments, each member's debts (cycles netted out) net to their balance, the debts have no loop,
 * and when every balance is zero there are no debts. Property-tested on the pure ledger delta
 * (fast-check), then end to end: a settlement larger than a direct debt used to leave a loop.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { LedgerDelta } from '../../src/areas/ledger/effects.ts';
import { netOutCycles } from '../../src/areas/ledger/cycles.ts';
import type { DebtEdge } from '../../src/areas/ledger/split.ts';
import { createHarness, type Harness } from '../harness.ts';
import { groupWith, expectLedgerOk } from '../ledger-helpers.ts';

const MEMBERS = ['a', 'b', 'c', 'd', 'e'];

/** The pair rows a sequence of entries leaves (agent_a < agent_b; positive = b owes a), and the balances. */
function replay(
  ops: Array<{ kind: 'expense'; payer: number; shares: number[] } | { kind: 'payment'; from: number; to: number; amount: number }>,
) {
  const balances = new Map<string, bigint>();
  const pairs = new Map<string, bigint>();
  for (const op of ops) {
    const d = new LedgerDelta();
    if (op.kind === 'expense') {
      const total = op.shares.reduce((x, y) => x + y, 0);
      d.addLines(
        MEMBERS.map((m, i) => ({ agentId: m, paidMinor: i === op.payer ? BigInt(total) : 0n, owedMinor: BigInt(op.shares[i] ?? 0) })),
        1n,
      );
    } else if (op.from !== op.to) {
      d.addPayment(MEMBERS[op.from]!, MEMBERS[op.to]!, BigInt(op.amount), 1n);
    }
    for (const [k, v] of d.balances) balances.set(k, (balances.get(k) ?? 0n) + v);
    for (const [k, v] of d.pairs) pairs.set(k, (pairs.get(k) ?? 0n) + v);
  }
  const edges: DebtEdge[] = [...pairs]
    .filter(([, v]) => v !== 0n)
    .map(([k, v]) => {
      const [a, b] = k.split('|') as [string, string];
      return v > 0n ? { debtorId: b, creditorId: a, amount: v } : { debtorId: a, creditorId: b, amount: -v };
    });
  return { balances, edges };
}

const index = fc.integer({ min: 0, max: MEMBERS.length - 1 });
const op = fc.oneof(
  fc.record({
    kind: fc.constant('expense' as const),
    payer: index,
    shares: fc.array(fc.integer({ min: 0, max: 5000 }), { minLength: MEMBERS.length, maxLength: MEMBERS.length }),
  }),
  fc.record({ kind: fc.constant('payment' as const), from: index, to: index, amount: fc.integer({ min: 1, max: 8000 }) }),
);

function hasCycle(edges: DebtEdge[]): boolean {
  const out = new Map<string, string[]>();
  for (const e of edges) out.set(e.debtorId, [...(out.get(e.debtorId) ?? []), e.creditorId]);
  const state = new Map<string, number>();
  const visit = (n: string): boolean => {
    state.set(n, 1);
    for (const m of out.get(n) ?? []) if (state.get(m) === 1 || (!state.has(m) && visit(m))) return true;
    state.set(n, 2);
    return false;
  };
  return [...out.keys()].some((n) => !state.has(n) && visit(n));
}

describe('netOutCycles', () => {
  it('keeps every member netting to their balance, leaves no loop, and no debts when all balances are zero', () => {
    fc.assert(
      fc.property(fc.array(op, { maxLength: 30 }), (ops) => {
        const { balances, edges } = replay(ops);
        const netted = netOutCycles(edges);
        for (const m of MEMBERS) {
          const net = netted.reduce((s, e) => s + (e.creditorId === m ? e.amount : 0n) - (e.debtorId === m ? e.amount : 0n), 0n);
          expect(net).toBe(balances.get(m) ?? 0n);
        }
        expect([...balances.values()].reduce((x, y) => x + y, 0n)).toBe(0n);
        expect(hasCycle(netted)).toBe(false);
        for (const e of netted) expect(e.amount > 0n).toBe(true);
        if ([...balances.values()].every((v) => v === 0n)) expect(netted).toEqual([]);
      }),
      { numRuns: 500 },
    );
  });

  it('nets a three-way loop to nothing and is deterministic', () => {
    const loop = [
      { debtorId: 'sam', creditorId: 'ana', amount: 2045n },
      { debtorId: 'ana', creditorId: 'rio', amount: 2045n },
      { debtorId: 'rio', creditorId: 'sam', amount: 2045n },
    ];
    expect(netOutCycles(loop)).toEqual([]);
    const uneven = [...loop.slice(0, 2), { debtorId: 'rio', creditorId: 'sam', amount: 1000n }];
    expect(netOutCycles(uneven)).toEqual([
      { debtorId: 'ana', creditorId: 'rio', amount: 1045n },
      { debtorId: 'sam', creditorId: 'ana', amount: 1045n },
    ]);
    expect(netOutCycles([...uneven].reverse())).toEqual(netOutCycles(uneven));
  });
});

describe('get_balances after everyone settled', () => {
  let h: Harness;
  beforeAll(async () => {
    h = await createHarness();
  });
  afterAll(async () => {
    await h?.close();
  });

  it('lists no debts once a settlement routed through a third member brought every balance to zero', async () => {
    const [sam, ana, rio] = [await h.agent('sam'), await h.agent('ana'), await h.agent('rio')];
    const g = await groupWith(h, [sam, ana, rio]);
    // ana owes sam 20.45; rio owes ana 20.45 → sam +20.45, ana 0, rio −20.45.
    await h.call(sam, 'add_expense', {
      group_id: g,
      description: 'Tickets',
      amount_minor: 2045,
      split: { method: 'exact', participants: [{ handle: ana.handle, amount_minor: 2045 }] },
    });
    await h.call(ana, 'add_expense', {
      group_id: g,
      description: 'Taxi',
      amount_minor: 2045,
      split: { method: 'exact', participants: [{ handle: rio.handle, amount_minor: 2045 }] },
    });
    const plan = await h.call(rio, 'suggest_settlements', { group_id: g });
    expect(plan.transfers).toHaveLength(1);
    // rio pays sam directly (larger than any direct debt between them), recorded by the payee: confirmed at once.
    await h.call(sam, 'record_payment', { group_id: g, from_handle: rio.handle, to_handle: sam.handle, amount_minor: 2045 });
    const b = await h.call(ana, 'get_balances', { group_id: g });
    expect(b.members.map((m: { balance_minor: number }) => m.balance_minor)).toEqual([0, 0, 0]);
    expect(b.settled).toBe(true);
    expect(b.debts).toEqual([]);
    // The stored pair rows still hold the loop (they stay equal to history, which verifyLedger checks).
    expect(await h.services.prisma.pairDebt.count({ where: { groupId: g, NOT: { amountMinor: 0n } } })).toBe(3);
    const summary = await h.call(sam, 'get_balance_summary', {});
    expect(summary.counterparties).toEqual([]);
    await expectLedgerOk(h);
  });
});
