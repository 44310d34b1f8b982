/**
 * Previews (dry_run: true) of the six previewable writes: each preview is compared with the real
 * call made next with the same arguments (same answer, same shares, same refusals), and shown to
 * write nothing — row counts of every table a write touches, idempotency records, inbox counters.
 */
import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createHarness, type Harness, type TestAgent } from '../harness.ts';
import { groupWith, expectLedgerOk, balancesOf } from '../ledger-helpers.ts';

let h: Harness;
let a: TestAgent, b: TestAgent, c: TestAgent, out: TestAgent;
let g: string;
beforeAll(async () => {
  h = await createHarness();
  [a, b, c, out] = [await h.agent('alice'), await h.agent('bob'), await h.agent('carol'), await h.agent('mallory')];
  g = await groupWith(h, [a, b, c]);
});
afterAll(async () => {
  await h?.close();
});

const TABLES = ['expenses', 'expense_shares', 'payments', 'activities', 'inbox_items', 'idempotency_records', 'pair_debts', 'recurrences'];
/** Everything a write could change: row counts, balances, pair debts and inbox counters. */
async function state() {
  const counts: Record<string, number> = {};
  for (const t of TABLES) counts[t] = Number((await h.services.pool.query(`SELECT count(*) AS n FROM ${t}`)).rows[0].n);
  const members = (
    await h.services.pool.query('SELECT agent_id, balance_minor, balance_pending_minor, pending_count FROM memberships ORDER BY 1, 2')
  ).rows;
  const pairs = (await h.services.pool.query('SELECT agent_a, agent_b, amount_minor FROM pair_debts ORDER BY 1, 2')).rows;
  const agents = (await h.services.pool.query('SELECT id, inbox_unread, inbox_requires_action FROM agents ORDER BY 1')).rows;
  const expenses = (await h.services.pool.query('SELECT id, amount_minor, deleted_at, updated_at FROM expenses ORDER BY 1')).rows;
  return { counts, members, pairs, agents, expenses };
}

/** Strips what differs between two answers to the same call by design (new ids, times, the preview fields, the inbox line). */
function comparable(x: any): any {
  const rest = { ...x };
  for (const k of ['dry_run', 'balance_changes', 'inbox']) delete rest[k];
  return JSON.parse(JSON.stringify(rest, (k, v) => (/(^|_)id$|_ids$|_at$/.test(k) && k !== 'agent_id' && k !== 'group_id' ? '<id>' : v)));
}

/** Previews `args`, checks nothing changed, makes the real call with the same key, and compares. */
async function previewThenReal(agent: TestAgent, tool: string, args: Record<string, unknown>) {
  const key = `preview-${Math.random().toString(36).slice(2)}`;
  const before = await state();
  const balances = await balancesOf(h, agent, g);
  const p = await h.call(agent, tool, { ...args, dry_run: true, idempotency_key: key });
  expect(await state()).toEqual(before);
  expect(p.dry_run).toBe(true);
  const real = await h.call(agent, tool, { ...args, idempotency_key: key });
  expect(real.replayed).toBeFalsy();
  expect(real.dry_run === undefined || real.dry_run === false).toBe(true);
  expect(comparable(p)).toEqual(comparable(real));
  // balance_changes = what the real call did to the balances.
  const after = await balancesOf(h, agent, g);
  const moved = Object.keys(after).filter((k) => after[k] !== balances[k]);
  expect(p.balance_changes.map((x: any) => x.handle).sort()).toEqual(moved.sort());
  for (const x of p.balance_changes) expect([x.before_minor, x.after_minor]).toEqual([balances[x.handle], after[x.handle]]);
  return { p, real, key };
}

/** Previews a refused call and checks the real call refuses the same way (and nothing was written). */
async function sameRefusal(agent: TestAgent, tool: string, args: Record<string, unknown>) {
  const before = await state();
  const e1 = await h.fail(agent, tool, { ...args, dry_run: true });
  expect(await state()).toEqual(before);
  const e2 = await h.fail(agent, tool, args);
  expect([e1.kittyCode, e1.message, e1.details]).toEqual([e2.kittyCode, e2.message, e2.details]);
  return e1;
}

describe('preview equals the real call', () => {
  let expenseId: string;
  let paymentId: string;
  it('add_expense (batched: staged, not sent) — plain, itemized, repeating', async () => {
    const { p, real } = await previewThenReal(a, 'add_expense', { group_id: g, description: 'Taxi', amount_minor: 1000, category: 'Taxi' });
    expect(p.expense.expense_id).toBe(real.expense.expense_id);
    expect(p.expense.shares).toEqual(real.expense.shares);
    expect(p.balance_changes).toHaveLength(3);
    expenseId = real.expense.expense_id;
    await previewThenReal(a, 'add_expense', {
      group_id: g,
      description: 'Dinner',
      items: [
        { description: 'A', amount_minor: 1001 },
        { description: 'B', amount_minor: 500, split: { participants: [{ handle: b.handle }] } },
      ],
      tip_minor: 150,
    });
    await previewThenReal(b, 'add_expense', { group_id: g, description: 'Rent', amount_minor: 90000, repeat: { unit: 'month' } });
  });

  it('update_expense and delete_expense (rolled back)', async () => {
    await previewThenReal(a, 'update_expense', { expense_id: expenseId, amount_minor: 1500 });
    await previewThenReal(a, 'delete_expense', { expense_id: expenseId });
  });

  it('record_payment and confirm_payment', async () => {
    const { real } = await previewThenReal(a, 'record_payment', { group_id: g, to_handle: b.handle, amount_minor: 100 });
    paymentId = real.payment.payment_id;
    const { p } = await previewThenReal(b, 'confirm_payment', { payment_id: paymentId });
    expect(p.balance_changes.map((x: any) => x.after_minor - x.before_minor).sort()).toEqual([-100, 100]);
  });

  it('import_expenses', async () => {
    const csv = readFileSync(new URL('../records/fixtures/spliit-export.csv', import.meta.url), 'utf8');
    const g2 = await groupWith(h, [a, b]);
    const args = { group_id: g2, format: 'spliit', csv, mapping: { Ana: a.handle, Rio: b.handle } };
    const before = await state();
    const p = await h.call(a, 'import_expenses', { ...args, dry_run: true });
    expect(await state()).toEqual(before);
    const real = await h.call(a, 'import_expenses', args);
    expect(p).toMatchObject({ dry_run: true, imported_expenses: real.imported_expenses, imported_payments: real.imported_payments });
    expect(real.dry_run).toBe(false);
    const after = await balancesOf(h, a, g2);
    expect(Object.fromEntries(p.balance_changes.map((x: any) => [x.handle, x.after_minor]))).toEqual(after);
    await expectLedgerOk(h);
  });
});

describe('a preview refuses exactly what the real call refuses', () => {
  it('validation, membership, state and permission refusals', async () => {
    await sameRefusal(a, 'add_expense', {
      group_id: g,
      description: 'X',
      amount_minor: 10,
      split: { participants: [{ handle: out.handle }] },
    });
    await sameRefusal(out, 'add_expense', { group_id: g, description: 'X', amount_minor: 10 });
    await sameRefusal(a, 'add_expense', {
      group_id: g,
      description: 'X',
      amount_minor: 5,
      items: [{ description: 'Y', amount_minor: 10 }],
    });
    const e = await h.call(a, 'add_expense', { group_id: g, description: 'Y', amount_minor: 10 });
    await sameRefusal(out, 'update_expense', { expense_id: e.expense.expense_id, amount_minor: 20 });
    await sameRefusal(out, 'delete_expense', { expense_id: e.expense.expense_id });
    await h.call(a, 'delete_expense', { expense_id: e.expense.expense_id });
    const del = await sameRefusal(a, 'update_expense', { expense_id: e.expense.expense_id, amount_minor: 20 });
    expect(del.kittyCode).toBe('EXPENSE_DELETED');
    const pay = await h.call(b, 'record_payment', { group_id: g, to_handle: c.handle, amount_minor: 1, allow_overpayment: true });
    await sameRefusal(b, 'confirm_payment', { payment_id: pay.payment.payment_id });
    const over = await sameRefusal(c, 'record_payment', { group_id: g, to_handle: a.handle, amount_minor: 10_000_000 });
    expect(over.kittyCode).toBe('OVERPAYMENT');
    await sameRefusal(a, 'import_expenses', { group_id: g, format: 'spliit', csv: 'not,a,spliit\nfile', mapping: {} });
  });
});

describe('idempotency keys', () => {
  it('a preview consumes no key; after the real call, a preview answers as the replay would and refuses other arguments', async () => {
    const key = 'preview-key-0001';
    const args = { group_id: g, description: 'Snacks', amount_minor: 700, idempotency_key: key };
    const count = async () =>
      Number((await h.services.pool.query('SELECT count(*) AS n FROM idempotency_records WHERE key = $1', [key])).rows[0].n);
    for (let i = 0; i < 3; i++) await h.call(a, 'add_expense', { ...args, dry_run: true });
    expect(await count()).toBe(0);
    const real = await h.call(a, 'add_expense', args);
    expect(real.replayed).toBeFalsy();
    expect(await count()).toBe(1);
    const again = await h.call(a, 'add_expense', { ...args, dry_run: true });
    expect(again).toMatchObject({ dry_run: true, balance_changes: [], replayed: true, expense: { expense_id: real.expense.expense_id } });
    const other = await h.fail(a, 'add_expense', { ...args, amount_minor: 701, dry_run: true });
    expect(other.kittyCode).toBe('IDEMPOTENCY_KEY_REUSED');

    const ukey = 'preview-key-0002';
    const uargs = { expense_id: real.expense.expense_id, amount_minor: 800, idempotency_key: ukey };
    await h.call(a, 'update_expense', { ...uargs, dry_run: true });
    expect(Number((await h.services.pool.query('SELECT count(*) AS n FROM idempotency_records WHERE key = $1', [ukey])).rows[0].n)).toBe(0);
    await h.call(a, 'update_expense', uargs);
    expect((await h.call(a, 'update_expense', { ...uargs, dry_run: true })).replayed).toBe(true);
    expect((await h.fail(a, 'update_expense', { ...uargs, amount_minor: 900, dry_run: true })).kittyCode).toBe('IDEMPOTENCY_KEY_REUSED');
  });

  it('dry_run is declared once in the catalogue of exactly the six tools', () => {
    const withDryRun = h.registry.catalogue.filter((t) => 'dry_run' in ((t.input_schema.properties as object) ?? {})).map((t) => t.name);
    expect(withDryRun.sort()).toEqual([
      'add_expense',
      'confirm_payment',
      'delete_expense',
      'import_expenses',
      'record_payment',
      'update_expense',
    ]);
  });
});
