/** A trip from first expense to archive (issue 3 "Proof"), through the registry as the adapters call it. */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createHarness, type Harness, type TestAgent } from '../harness.ts';
import { groupWith, expectLedgerOk, balancesOf } from '../ledger-helpers.ts';

let h: Harness;
beforeAll(async () => {
  h = await createHarness();
});
afterAll(async () => {
  await h?.close();
});

describe('trip scenario', () => {
  it('four agents: mixed splits, foreign currency, refund, partial payments, settle up, archive', async () => {
    const [ana, ben, cat, dan] = [await h.agent('ana'), await h.agent('ben'), await h.agent('cat'), await h.agent('dan')];
    const all = [ana, ben, cat, dan];
    const g = await groupWith(h, all, 'EUR', 'Lisbon');
    const byHandle = new Map<string, TestAgent>(all.map((x) => [x.handle, x]));

    await h.call(ana, 'add_expense', { group_id: g, description: 'Apartment', amount_minor: 48_000, category: 'lodging' });
    await h.call(ben, 'add_expense', {
      group_id: g,
      description: 'Dinner',
      amount_minor: 13_750,
      split: {
        method: 'shares',
        participants: [
          { handle: ana.handle, shares: 1 },
          { handle: ben.handle, shares: 2 },
          { handle: cat.handle, shares: 1 },
          { handle: dan.handle, shares: 1.5 },
        ],
      },
    });
    await h.call(cat, 'add_expense', {
      group_id: g,
      description: 'Taxi',
      amount_minor: 2_390,
      split: {
        method: 'exact',
        participants: [
          { handle: cat.handle, amount_minor: 1_195 },
          { handle: dan.handle, amount_minor: 1_195 },
        ],
      },
    });
    await h.call(dan, 'add_expense', {
      group_id: g,
      description: 'Museum (paid in CHF)',
      original_currency: 'CHF',
      original_amount_minor: 6_400,
      exchange_rate: '1.0437',
      split: {
        method: 'percent',
        participants: [
          { handle: ana.handle, percent: 25 },
          { handle: ben.handle, percent: 25 },
          { handle: cat.handle, percent: 25 },
          { handle: dan.handle, percent: 25 },
        ],
      },
    });
    // Refund: the apartment host returns 30.01 € of the deposit to Ana
    const refund = await h.call(ana, 'add_expense', { group_id: g, description: 'Deposit refund', amount_minor: -3_001 });
    expect(refund.expense.shares.reduce((s: number, x: any) => s + x.owed_minor, 0)).toBe(-3_001);
    await expectLedgerOk(h);

    const b0 = await balancesOf(h, ana, g);
    expect(Object.values(b0).reduce((s, v) => s + v, 0)).toBe(0);

    // Partial payments: each debtor pays half of their first suggested transfer.
    let plan = await h.call(ben, 'suggest_settlements', { group_id: g });
    expect(plan.method).toBe('exact');
    expect(plan.transfers.length).toBeLessThanOrEqual(3);
    for (const t of plan.transfers) {
      const payer = byHandle.get(t.from.handle)!;
      const payee = byHandle.get(t.to.handle)!;
      const half = Math.floor(t.amount_minor / 2);
      const p = await h.call(payer, 'record_payment', { ...t.record_payment, amount_minor: half, note: 'first half' });
      expect(p.payment.status).toBe('pending');
      // while pending, suggestions already count it
      const pending = await h.call(payee, 'suggest_settlements', { group_id: g });
      expect(pending.transfers.find((x: any) => x.from.handle === t.from.handle && x.to.handle === t.to.handle)?.amount_minor).toBe(
        t.amount_minor - half,
      );
      await h.call(payee, 'confirm_payment', { payment_id: p.payment.payment_id });
    }
    await expectLedgerOk(h);

    // Settle up the rest by the (stable) suggestions; payees record what they received.
    plan = await h.call(cat, 'suggest_settlements', { group_id: g });
    for (const t of plan.transfers) {
      const payee = byHandle.get(t.to.handle)!;
      const p = await h.call(payee, 'record_payment', t.record_payment);
      expect(p.payment.status).toBe('confirmed');
    }
    const final = await h.call(ana, 'get_balances', { group_id: g });
    expect(final.settled).toBe(true);
    expect(final.members.every((m: any) => m.balance_minor === 0)).toBe(true);
    expect(final.suggested_next.some((s: string) => s.startsWith('archive_group:'))).toBe(true);

    const summary = await h.call(dan, 'get_balance_summary', {});
    expect(summary.currencies.find((x: any) => x.currency === 'EUR').balance_minor).toBe(0);

    const arch = await h.call(ana, 'archive_group', { group_id: g });
    expect(arch.group.archived).toBe(true);
    const rejected = await h.fail(ben, 'add_expense', { group_id: g, description: 'late', amount_minor: 100 });
    expect(rejected.kittyCode).toBe('GROUP_ARCHIVED');
    const activity = await h.call(ana, 'list_activity', { group_id: g, limit: 100 });
    const actions = activity.activities.map((x: any) => x.action);
    expect(actions).toContain('group.archived');
    expect(actions.filter((x: string) => x === 'expense.added')).toHaveLength(5);
    await expectLedgerOk(h);
  });
});
