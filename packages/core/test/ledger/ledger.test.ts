/** The ledger tools end to end through the registry (issue 3). */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createHarness, type Harness, type TestAgent } from '../harness.ts';
import { groupWith, expectLedgerOk, balancesOf } from '../ledger-helpers.ts';
import { verifyLedger } from '../../src/index.ts';
import { seedExpensesBulk } from '../../src/testing/index.ts';

let h: Harness;
let a: TestAgent, b: TestAgent, c: TestAgent;
let g: string;
beforeAll(async () => {
  h = await createHarness();
  a = await h.agent('alice');
  b = await h.agent('bob');
  c = await h.agent('carol');
  g = await groupWith(h, [a, b, c]);
});
afterAll(async () => {
  await h?.close();
});

const owed = (e: any) => Object.fromEntries(e.shares.map((s: any) => [s.handle, s.owed_minor]));
const paid = (e: any) => Object.fromEntries(e.shares.map((s: any) => [s.handle, s.paid_minor]));

describe('add_expense', () => {
  it('splits equally by default with exact sums and shows paid/owed per member', async () => {
    const r = await h.call(a, 'add_expense', { group_id: g, description: 'Taxi', amount_minor: 1000 });
    const e = r.expense;
    expect(e.split_method).toBe('equal');
    expect(Object.values(owed(e)).sort()).toEqual([333, 333, 334]);
    expect(paid(e)[a.handle]).toBe(1000);
    expect(r.suggested_next.some((s: string) => s.startsWith('suggest_settlements:'))).toBe(true);
    await expectLedgerOk(h);
  });

  it('supports exact, percent and shares splits and several payers', async () => {
    const ex = await h.call(a, 'add_expense', {
      group_id: g,
      description: 'Hotel',
      amount_minor: 9000,
      payers: [
        { handle: a.handle, amount_minor: 6000 },
        { handle: b.handle, amount_minor: 3000 },
      ],
      split: {
        method: 'exact',
        participants: [
          { handle: a.handle, amount_minor: 2000 },
          { handle: b.handle, amount_minor: 3000 },
          { handle: c.handle, amount_minor: 4000 },
        ],
      },
    });
    expect(owed(ex.expense)).toEqual({ [a.handle]: 2000, [b.handle]: 3000, [c.handle]: 4000 });
    const pc = await h.call(b, 'add_expense', {
      group_id: g,
      description: 'Food',
      amount_minor: 1001,
      split: {
        method: 'percent',
        participants: [
          { handle: a.handle, percent: '33.333334' },
          { handle: b.handle, percent: 33.333333 },
          { handle: c.handle, percent: '33.333333' },
        ],
      },
    });
    expect(Object.values(owed(pc.expense)).reduce((s: number, v: any) => s + v, 0)).toBe(1001);
    const sh = await h.call(c, 'add_expense', {
      group_id: g,
      description: 'Wine',
      amount_minor: 900,
      split: {
        method: 'shares',
        participants: [
          { handle: a.handle, shares: 2 },
          { handle: c.handle, shares: 1 },
        ],
      },
    });
    expect(owed(sh.expense)).toEqual({ [a.handle]: 600, [c.handle]: 300 });
    await expectLedgerOk(h);
  });

  it('rejects splits that cannot sum, naming the field', async () => {
    let e = await h.fail(a, 'add_expense', {
      group_id: g,
      description: 'x',
      amount_minor: 100,
      split: {
        method: 'percent',
        participants: [
          { handle: a.handle, percent: 50 },
          { handle: b.handle, percent: 49 },
        ],
      },
    });
    expect(e.kittyCode).toBe('VALIDATION_ERROR');
    expect((e.details as any).issues[0].path).toBe('split.participants');
    e = await h.fail(a, 'add_expense', {
      group_id: g,
      description: 'x',
      amount_minor: 100,
      split: {
        method: 'exact',
        participants: [
          { handle: a.handle, amount_minor: 50 },
          { handle: b.handle, amount_minor: 49 },
        ],
      },
    });
    expect((e.details as any).issues[0].path).toBe('split.participants');
    const stranger = await h.agent('stranger');
    e = await h.fail(a, 'add_expense', {
      group_id: g,
      description: 'x',
      amount_minor: 100,
      split: { participants: [{ handle: stranger.handle }] },
    });
    expect((e.details as any).issues[0].path).toBe('split.participants.0.handle');
    e = await h.fail(a, 'add_expense', {
      group_id: g,
      description: 'x',
      amount_minor: 100,
      payers: [
        { handle: a.handle, amount_minor: 60 },
        { handle: b.handle, amount_minor: 30 },
      ],
    });
    expect((e.details as any).issues[0].path).toBe('payers');
    e = await h.fail(a, 'add_expense', {
      group_id: g,
      description: 'x',
      amount_minor: 100,
      split: { method: 'equal', participants: [{ handle: a.handle, shares: 2 }] },
    });
    expect((e.details as any).issues[0].path).toBe('split.participants.0.shares');
    e = await h.fail(stranger, 'add_expense', { group_id: g, description: 'x', amount_minor: 100 });
    expect(e.kittyCode).toBe('FORBIDDEN');
    e = await h.fail(a, 'add_expense', { group_id: g, description: 'x', amount_minor: 1_000_000_000_001 });
    expect(e.kittyCode).toBe('VALIDATION_ERROR');
  });

  it('converts a foreign-currency amount with the stated rounding and checks a given amount', async () => {
    const r = await h.call(a, 'add_expense', {
      group_id: g,
      description: 'Souvenir',
      original_currency: 'JPY',
      original_amount_minor: 1234,
      exchange_rate: '0.0061',
    });
    // 1234 JPY × 0.0061 = 7.5274 EUR → 753 cents (half away from zero)
    expect(r.expense.amount_minor).toBe(753);
    expect(r.expense.original_currency).toBe('JPY');
    const e = await h.fail(a, 'add_expense', {
      group_id: g,
      description: 'x',
      amount_minor: 750,
      original_currency: 'JPY',
      original_amount_minor: 1234,
      exchange_rate: '0.0061',
    });
    expect((e.details as any).issues[0].path).toBe('amount_minor');
    const e2 = await h.fail(a, 'add_expense', { group_id: g, description: 'x', original_currency: 'JPY', original_amount_minor: 1234 });
    expect((e2.details as any).issues[0].path).toBe('exchange_rate');
    const e3 = await h.fail(a, 'add_expense', {
      group_id: g,
      description: 'x',
      original_currency: 'ZZZ',
      original_amount_minor: 1,
      exchange_rate: '1',
    });
    expect((e3.details as any).issues[0].path).toBe('original_currency');
  });

  it('is idempotent by key', async () => {
    const args = { group_id: g, description: 'Once', amount_minor: 300, idempotency_key: 'same-key-123' };
    const r1 = await h.call(a, 'add_expense', args);
    const r2 = await h.call(a, 'add_expense', args);
    expect(r2.expense.expense_id).toBe(r1.expense.expense_id);
    const e = await h.fail(a, 'add_expense', { ...args, amount_minor: 301 });
    expect(e.kittyCode).toBe('IDEMPOTENCY_KEY_REUSED');
  });
});

describe('update / delete / restore', () => {
  it('reverses the old effect and applies the new one', async () => {
    const before = await balancesOf(h, a, g);
    const r = await h.call(a, 'add_expense', { group_id: g, description: 'Fuel', amount_minor: 600 });
    const id = r.expense.expense_id;
    const u = await h.call(b, 'update_expense', { expense_id: id, amount_minor: 900, description: 'Fuel + tolls' });
    expect(u.expense.amount_minor).toBe(900);
    expect(paid(u.expense)[a.handle]).toBe(900);
    let now = await balancesOf(h, a, g);
    expect(now[a.handle]! - before[a.handle]!).toBe(600);
    const u2 = await h.call(b, 'update_expense', {
      expense_id: id,
      split: { method: 'exact', participants: [{ handle: b.handle, amount_minor: 900 }] },
    });
    expect(owed(u2.expense)).toEqual({ [b.handle]: 900, [a.handle]: 0 });
    await expectLedgerOk(h);
    await h.call(c, 'delete_expense', { expense_id: id });
    now = await balancesOf(h, a, g);
    expect(now).toEqual(before);
    const e = await h.fail(a, 'update_expense', { expense_id: id, description: 'nope' });
    expect(e.kittyCode).toBe('EXPENSE_DELETED');
    const listed = await h.call(a, 'list_expenses', { group_id: g, limit: 100 });
    expect(listed.expenses.some((x: any) => x.expense_id === id)).toBe(false);
    const withDeleted = await h.call(a, 'list_expenses', { group_id: g, include_deleted: true, limit: 100 });
    expect(withDeleted.expenses.find((x: any) => x.expense_id === id).deleted).toBe(true);
    await h.call(a, 'restore_expense', { expense_id: id });
    now = await balancesOf(h, a, g);
    expect(now[b.handle]! - before[b.handle]!).toBe(-900);
    await expectLedgerOk(h);
  });

  it('needs new payers when the amount changes with several payers, and a new exact split', async () => {
    const r = await h.call(a, 'add_expense', {
      group_id: g,
      description: 'Split pay',
      amount_minor: 100,
      payers: [
        { handle: a.handle, amount_minor: 50 },
        { handle: b.handle, amount_minor: 50 },
      ],
    });
    const e = await h.fail(a, 'update_expense', { expense_id: r.expense.expense_id, amount_minor: 200 });
    expect((e.details as any).issues[0].path).toBe('payers');
  });

  it('paginates newest first and filters by participant and updated_after', async () => {
    const p1 = await h.call(a, 'list_expenses', { group_id: g, limit: 2 });
    expect(p1.expenses).toHaveLength(2);
    expect(p1.next_cursor).toBeTruthy();
    const p2 = await h.call(a, 'list_expenses', { group_id: g, limit: 2, cursor: p1.next_cursor });
    expect(p2.expenses[0].created_at <= p1.expenses[1].created_at).toBe(true);
    expect(p2.expenses[0].expense_id).not.toBe(p1.expenses[1].expense_id);
    const mine = await h.call(a, 'list_expenses', { group_id: g, participant: c.handle, limit: 100 });
    expect(mine.expenses.every((x: any) => x.shares.some((s: any) => s.handle === c.handle))).toBe(true);
    const later = await h.call(a, 'list_expenses', { group_id: g, updated_after: new Date(Date.now() + 3_600_000).toISOString() });
    expect(later.expenses).toHaveLength(0);
  });
});

describe('payments', () => {
  it('pending until the payee confirms; only confirmed moves balances; inbox items', async () => {
    const before = await balancesOf(h, a, g);
    const r = await h.call(c, 'record_payment', { group_id: g, to_handle: a.handle, amount_minor: 500 });
    expect(r.payment.status).toBe('pending');
    expect(r.suggested_next.some((s: string) => s.startsWith('cancel_payment:'))).toBe(true);
    expect(await balancesOf(h, a, g)).toEqual(before);
    const gb = await h.call(a, 'get_balances', { group_id: g });
    expect(gb.members.find((m: any) => m.handle === c.handle).balance_pending_minor).toBe(500);
    expect(gb.members.find((m: any) => m.handle === a.handle).balance_pending_minor).toBe(-500);
    const gg = await h.call(a, 'get_group', { group_id: g });
    expect(gg.members.find((m: any) => m.handle === c.handle).balance_pending_minor).toBe(500);
    const me = await h.call(a, 'get_payment', { payment_id: r.payment.payment_id });
    expect(me.inbox.requires_action).toBeGreaterThan(0);
    expect(me.suggested_next[0]).toMatch(/^confirm_payment: .*payment /);
    // a third party cannot confirm; the payer cannot confirm
    expect((await h.fail(b, 'confirm_payment', { payment_id: r.payment.payment_id })).kittyCode).toBe('FORBIDDEN');
    expect((await h.fail(c, 'confirm_payment', { payment_id: r.payment.payment_id })).kittyCode).toBe('FORBIDDEN');
    // pending blocks leaving
    expect((await h.fail(c, 'leave_group', { group_id: g })).kittyCode).toBe('NOT_SETTLED');
    const conf = await h.call(a, 'confirm_payment', { payment_id: r.payment.payment_id });
    expect(conf.payment.status).toBe('confirmed');
    const after = await balancesOf(h, a, g);
    expect(after[c.handle]! - before[c.handle]!).toBe(500);
    expect(after[a.handle]! - before[a.handle]!).toBe(-500);
    const again = await h.fail(c, 'cancel_payment', { payment_id: r.payment.payment_id });
    expect(again.kittyCode).toBe('PAYMENT_NOT_PENDING');
    expect((again.details as any).status).toBe('confirmed');
    const inboxA = await h.call(a, 'get_balances', { group_id: g });
    expect(inboxA.inbox?.requires_action ?? 0).toBe(0);
    await expectLedgerOk(h);
  });

  it('recorded by the payee is confirmed at once; reject and cancel release pending', async () => {
    const r = await h.call(a, 'record_payment', { group_id: g, from_handle: b.handle, to_handle: a.handle, amount_minor: 100 });
    expect(r.payment.status).toBe('confirmed');
    const p1 = await h.call(b, 'record_payment', { group_id: g, to_handle: c.handle, amount_minor: 70, allow_overpayment: true });
    const rej = await h.call(c, 'reject_payment', { payment_id: p1.payment.payment_id, reason: 'not received' });
    expect(rej.payment.status).toBe('rejected');
    const p2 = await h.call(b, 'record_payment', { group_id: g, to_handle: c.handle, amount_minor: 70, allow_overpayment: true });
    expect((await h.fail(c, 'cancel_payment', { payment_id: p2.payment.payment_id })).kittyCode).toBe('FORBIDDEN');
    const can = await h.call(b, 'cancel_payment', { payment_id: p2.payment.payment_id });
    expect(can.payment.status).toBe('cancelled');
    expect((await h.fail(c, 'confirm_payment', { payment_id: p2.payment.payment_id })).kittyCode).toBe('PAYMENT_NOT_PENDING');
    const third = await h.fail(c, 'record_payment', { group_id: g, from_handle: a.handle, to_handle: b.handle, amount_minor: 5 });
    expect(third.kittyCode).toBe('FORBIDDEN');
    const pend = await h.call(a, 'list_payments', { group_id: g, status: 'pending' });
    expect(pend.payments).toHaveLength(0);
    const gb = await h.call(a, 'get_balances', { group_id: g });
    expect(gb.members.every((m: any) => m.balance_pending_minor === 0 && m.pending_payments === 0)).toBe(true);
    await expectLedgerOk(h);
  });
});

describe('balances, settlements and summary', () => {
  it('pairwise debts net to balances; suggestions settle the group', async () => {
    const gb = await h.call(a, 'get_balances', { group_id: g });
    const net: Record<string, number> = {};
    for (const d of gb.debts) {
      net[d.from.handle] = (net[d.from.handle] ?? 0) - d.amount_minor;
      net[d.to.handle] = (net[d.to.handle] ?? 0) + d.amount_minor;
    }
    for (const m of gb.members) expect(net[m.handle] ?? 0).toBe(m.balance_minor);
    const s = await h.call(b, 'suggest_settlements', { group_id: g });
    expect(s.method).toBe('exact');
    expect(s.transfers.length).toBeLessThanOrEqual(2);
    const summary = await h.call(a, 'get_balance_summary', {});
    const eur = summary.currencies.find((x: any) => x.currency === 'EUR');
    expect(eur.balance_minor).toBe(gb.members.find((m: any) => m.handle === a.handle).balance_minor);
    expect(eur.you_are_owed_minor - eur.you_owe_minor).toBe(eur.balance_minor);
  });

  it('lists currencies from ISO 4217 with exponents', async () => {
    const r = await h.call(a, 'list_currencies', {});
    const by = Object.fromEntries(r.currencies.map((x: any) => [x.code, x.minor_unit_exponent]));
    expect(by).toMatchObject({ EUR: 2, JPY: 0, BHD: 3, USD: 2 });
    expect(by.XAU).toBeUndefined();
    expect((await h.fail(a, 'create_group', { name: 'x', currency: 'ABC' })).kittyCode).toBe('VALIDATION_ERROR');
  });

  it('logs activity for every write, newest first, with updated_after', async () => {
    const t = new Date(Date.now() - 1).toISOString();
    await h.call(a, 'add_expense', { group_id: g, description: 'Logged', amount_minor: 10 });
    const r = await h.call(a, 'list_activity', { group_id: g, updated_after: t });
    expect(r.activities[0].action).toBe('expense.added');
    expect(r.activities[0].actor.handle).toBe(a.handle);
    const all = await h.call(a, 'list_activity', { group_id: g, limit: 3 });
    const next = await h.call(a, 'list_activity', { group_id: g, limit: 3, cursor: all.next_cursor });
    expect(BigInt(next.activities[0].activity_id) < BigInt(all.activities[2].activity_id)).toBe(true);
  });
});

describe('export and import', () => {
  it('exports RFC 4180 CSV and JSON', async () => {
    await h.call(a, 'add_expense', { group_id: g, description: 'Quote "this", please', amount_minor: 30 });
    const csv = await h.call(a, 'export_group', { group_id: g, format: 'csv' });
    expect(csv.csv.expenses.split('\r\n')[0]).toMatch(/^expense_id,date,description/);
    expect(csv.csv.expenses).toContain('"Quote ""this"", please"');
    const json = await h.call(a, 'export_group', { group_id: g });
    expect(json.json.expenses.length).toBeGreaterThan(5);
    expect(json.json.balances.reduce((s: number, m: any) => s + m.balance_minor, 0)).toBe(0);
  });

  it('imports a Splitwise export all-or-nothing, idempotently, reporting bad lines', async () => {
    const x = await h.agent('xavi');
    const y = await h.agent('yoko');
    const gi = await groupWith(h, [x, y], 'USD', 'Imported');
    const file = [
      'Date,Description,Category,Cost,Currency,Xavi Q,Yoko',
      '2024-03-01,Groceries,Food,30.00,USD,15.00,-15.00',
      '2024-03-02,Dinner,Dining out,45.50,USD,-20.50,20.50',
      '2024-03-03,Yoko paid Xavi,Payment,5.00,USD,-5.00,5.00',
      '',
      ',Total balance,,,USD,-10.50,10.50',
    ].join('\n');
    const bad = await h.fail(x, 'import_expenses', {
      group_id: gi,
      format: 'splitwise',
      csv: file.replace('30.00,USD,15.00', '30.00,USD,15.01').replace('2024-03-02', '2024-13-02'),
    });
    expect(bad.kittyCode).toBe('VALIDATION_ERROR');
    const issues = (bad.details as any).issues;
    expect(issues.some((i: any) => /"Xavi Q" is not mapped/.test(i.message))).toBe(true);
    const bad2 = await h.fail(x, 'import_expenses', {
      group_id: gi,
      format: 'splitwise',
      csv: file.replace('30.00,USD,15.00', '30.00,USD,15.01').replace('2024-03-02', '2024-13-02'),
      mapping: { 'Xavi Q': x.handle },
    });
    expect((bad2.details as any).issues.map((i: any) => i.path)).toEqual(['csv.line.2', 'csv.line.3']);
    expect((await h.call(x, 'list_expenses', { group_id: gi })).expenses).toHaveLength(0);
    const ok = await h.call(x, 'import_expenses', { group_id: gi, format: 'splitwise', csv: file, mapping: { 'Xavi Q': x.handle } });
    expect(ok.imported_expenses).toBe(2);
    expect(ok.imported_payments).toBe(1);
    const bal = await balancesOf(h, x, gi);
    expect(bal[x.handle]).toBe(-1050);
    expect(bal[y.handle]).toBe(1050);
    const again = await h.call(x, 'import_expenses', { group_id: gi, format: 'splitwise', csv: file, mapping: { 'Xavi Q': x.handle } });
    expect(again.imported_expenses + again.imported_payments).toBe(0);
    expect(again.already_imported).toBe(3);
    await expectLedgerOk(h);
  });

  it('imports a Spliit export with a named payer and a foreign-currency row', async () => {
    const x = await h.agent('sx');
    const y = await h.agent('sy');
    const z = await h.agent('sz');
    const gi = await groupWith(h, [x, y, z], 'EUR', 'Spliit');
    const file =
      '\uFEFF"Date","Description","Category","Currency","Cost","Original cost","Original currency","Conversion rate","Split mode","Paid By","Ann","Ben","Cat"\n' +
      '"2025-01-06","Dinner","Food","EUR","30.00",,,,"Evenly","Ann",20,-10,-10\n' +
      '"2025-02-07","Tickets","Travel","EUR","97.26","100","USD","0.9726","Unevenly – By amount","Ben",-50,67.26,-17.26\n';
    const r = await h.call(x, 'import_expenses', {
      group_id: gi,
      format: 'spliit',
      csv: file,
      mapping: { Ann: x.handle, Ben: y.handle, Cat: z.handle },
    });
    expect(r.imported_expenses).toBe(2);
    const bal = await balancesOf(h, x, gi);
    expect(bal).toEqual({ [x.handle]: -3000, [y.handle]: 5726, [z.handle]: -2726 });
    const list = await h.call(x, 'list_expenses', { group_id: gi });
    const t = list.expenses.find((e: any) => e.description === 'Tickets');
    expect(t.original_currency).toBe('USD');
    expect(paid(t)[y.handle]).toBe(9726);
    await expectLedgerOk(h);
  });
});

describe('bulk seed for benchmarks', () => {
  it('seeds consistently and get_balances stays cheap', async () => {
    const p = await h.agent('p1');
    const q = await h.agent('q1');
    const gs = await groupWith(h, [p, q, c], 'EUR', 'Big');
    const ids = [p.agentId, q.agentId, c.agentId];
    const r = await seedExpensesBulk(h.services.pool, gs, ids, 20_000);
    expect(r.inserted).toBe(20_000);
    const rep = await verifyLedger(h.services.prisma, { groupId: gs });
    expect(rep.problems).toEqual([]);
    expect(rep.expenses).toBe(20_000);
    const bal = await h.call(p, 'get_balances', { group_id: gs });
    expect(bal.members.reduce((s: number, m: any) => s + m.balance_minor, 0)).toBe(0);
    const after = await h.call(p, 'add_expense', { group_id: gs, description: 'one more', amount_minor: 3 });
    expect(after.expense.amount_minor).toBe(3);
    await expectLedgerOk(h);
  });
});
