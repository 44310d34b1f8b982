/**
 * get_group_stats against the ledger: a seeded mix of expenses (several payers, uneven splits,
 * refunds, deleted ones, three months, several categories) and payments; every grouping sums to
 * the expenses list_expenses returns, per-member nets plus payments equal get_balances.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createHarness, type Harness, type TestAgent } from '../harness.ts';
import { groupWith } from '../ledger-helpers.ts';

let h: Harness;
let a: TestAgent, b: TestAgent, c: TestAgent, out: TestAgent;
let g: string;

/** Deterministic pseudo-random numbers (mulberry32). */
function rng(seed: number) {
  return () => {
    seed = (seed + 0x6d2b79f5) | 0;
    let t = Math.imul(seed ^ (seed >>> 15), 1 | seed);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

async function allExpenses(agent: TestAgent, args: Record<string, unknown>) {
  const out: any[] = [];
  let cursor: string | undefined;
  do {
    const r = await h.call(agent, 'list_expenses', { group_id: g, limit: 100, ...args, ...(cursor ? { cursor } : {}) });
    out.push(...r.expenses);
    cursor = r.next_cursor ?? undefined;
  } while (cursor);
  return out;
}

beforeAll(async () => {
  h = await createHarness();
  [a, b, c, out] = [await h.agent('sa'), await h.agent('sb'), await h.agent('sc'), await h.agent('so')];
  g = await groupWith(h, [a, b, c]);
  const r = rng(42);
  const who = [a, b, c];
  const cats = ['food', 'transport', '', 'rent'];
  for (let i = 0; i < 40; i++) {
    const amount = Math.floor(r() * 20_000) - (i % 9 === 0 ? 25_000 : 0) || 7;
    const payer = who[i % 3]!;
    const args: Record<string, unknown> = {
      group_id: g,
      description: `e${i}`,
      amount_minor: amount,
      date: `2026-0${1 + (i % 3)}-${String(1 + (i % 27)).padStart(2, '0')}`,
      ...(cats[i % 4] ? { category: cats[i % 4] } : {}),
    };
    if (i % 5 === 0) args.split = { method: 'shares', participants: who.map((w, k) => ({ handle: w.handle, shares: String(k + 1) })) };
    if (i % 7 === 0 && amount > 0)
      args.payers = [
        { handle: a.handle, amount_minor: Math.floor(amount / 3) },
        { handle: b.handle, amount_minor: amount - Math.floor(amount / 3) },
      ];
    const e = await h.call(payer, 'add_expense', args);
    if (i % 11 === 0) await h.call(payer, 'delete_expense', { expense_id: e.expense.expense_id });
  }
  await h.call(b, 'record_payment', { group_id: g, to_handle: a.handle, amount_minor: 1234, allow_overpayment: true });
  const p = await h.call(c, 'record_payment', { group_id: g, to_handle: a.handle, amount_minor: 555, allow_overpayment: true });
  await h.call(a, 'confirm_payment', { payment_id: p.payment.payment_id });
});
afterAll(async () => h?.close());

describe('get_group_stats', () => {
  it('every grouping sums to the live expenses list_expenses shows; rows match a recomputation from that list', async () => {
    const live = await allExpenses(a, {});
    const sum = live.reduce((s, e) => s + e.amount_minor, 0);
    for (const by of ['category', 'month', 'member']) {
      const st = await h.call(a, 'get_group_stats', { group_id: g, by });
      expect(st.total_minor, by).toBe(sum);
      expect(
        st.rows.reduce((s: number, r: any) => s + r.total_minor, 0),
        by,
      ).toBe(sum);
    }
    const byMonth = (await h.call(b, 'get_group_stats', { group_id: g, by: 'month' })).rows;
    expect(byMonth.map((r: any) => r.key)).toEqual(['2026-01', '2026-02', '2026-03']);
    for (const r of byMonth) {
      const these = live.filter((e) => e.date.startsWith(r.key));
      expect(r.total_minor).toBe(these.reduce((s, e) => s + e.amount_minor, 0));
      expect(r.expense_count).toBe(these.length);
    }
    const byCat = (await h.call(b, 'get_group_stats', { group_id: g, by: 'category' })).rows;
    // Free labels that name a known category set its category_id ("rent" → home/rent); none → general.
    const idOf: Record<string, string> = { food: 'food', transport: 'transport', rent: 'home/rent', '': 'general' };
    expect(byCat.map((r: any) => r.key).sort()).toEqual(['food', 'general', 'home/rent', 'transport']);
    for (const r of byCat)
      expect(r.total_minor).toBe(live.filter((e) => idOf[e.category ?? '']! === r.key).reduce((s, e) => s + e.amount_minor, 0));
  });

  it('by member: paid − share = net; nets plus payments equal get_balances; a date range matches list_expenses', async () => {
    const st = await h.call(c, 'get_group_stats', { group_id: g, by: 'member' });
    const bal = await h.call(c, 'get_balances', { group_id: g });
    const payments = (await h.call(c, 'list_payments', { group_id: g })).payments;
    for (const m of bal.members) {
      const row = st.rows.find((r: any) => r.key === m.handle);
      expect(row.net_minor).toBe(row.paid_minor - row.share_minor);
      expect(row.total_minor).toBe(row.share_minor);
      const sent = payments
        .filter((p: any) => p.status === 'confirmed' && p.from.handle === m.handle)
        .reduce((s: number, p: any) => s + p.amount_minor, 0);
      const got = payments
        .filter((p: any) => p.status === 'confirmed' && p.to.handle === m.handle)
        .reduce((s: number, p: any) => s + p.amount_minor, 0);
      expect(row.net_minor + sent - got, m.handle).toBe(m.balance_minor);
    }
    expect(st.rows.reduce((s: number, r: any) => s + r.net_minor, 0)).toBe(0);
    const feb = await h.call(a, 'get_group_stats', { group_id: g, by: 'member', from: '2026-02-01', to: '2026-02-28' });
    const febList = await allExpenses(a, { date_from: '2026-02-01', date_to: '2026-02-28' });
    expect(feb.total_minor).toBe(febList.reduce((s, e) => s + e.amount_minor, 0));
    expect(feb.rows.reduce((s: number, r: any) => s + r.paid_minor, 0)).toBe(feb.total_minor);
  });

  it('refuses outsiders, reversed ranges and unknown groupings', async () => {
    expect((await h.fail(out, 'get_group_stats', { group_id: g, by: 'month' })).kittyCode).toBe('FORBIDDEN');
    const rev = await h.fail(a, 'get_group_stats', { group_id: g, by: 'month', from: '2026-03-01', to: '2026-02-01' });
    expect(rev.kittyCode).toBe('VALIDATION_ERROR');
    expect(JSON.stringify(rev.details)).toContain('"path":"from"');
    expect((await h.fail(a, 'get_group_stats', { group_id: g, by: 'weekday' })).kittyCode).toBe('VALIDATION_ERROR');
    expect((await h.fail(a, 'get_group_stats', { group_id: g, by: 'month', from: '2026-02-30' })).kittyCode).toBe('VALIDATION_ERROR');
  });
});
