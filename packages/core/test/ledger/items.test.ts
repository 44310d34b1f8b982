/**
 * Categories, itemized bills and the adjustment split end to end through the registry: the
 * published list, category_id on every expense and in filters, import mapping and export, items
 * with tax and tip, validation errors naming the fields.
 */
import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createHarness, type Harness, type TestAgent } from '../harness.ts';
import { groupWith, expectLedgerOk, balancesOf } from '../ledger-helpers.ts';
import { runRecurrences } from '../../src/index.ts';

const fixture = (name: string) => readFileSync(new URL(`../records/fixtures/${name}`, import.meta.url), 'utf8');
const owed = (e: any) => Object.fromEntries(e.shares.map((s: any) => [s.handle, s.owed_minor]));
const paths = (err: any) => (err.details?.issues ?? []).map((i: any) => i.path);

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

describe('categories', () => {
  it('list_categories publishes a two-level tree with general', async () => {
    const { categories } = await h.call(a, 'list_categories', {});
    expect(categories.length).toBeGreaterThanOrEqual(30);
    const ids = new Set(categories.map((c: any) => c.category_id));
    for (const id of ['general', 'food/groceries', 'food/dining_out', 'transport/taxi', 'home/rent', 'utilities/internet'])
      expect(ids).toContain(id);
    for (const c of categories) {
      if (c.parent_id === null) expect(c.category_id).not.toContain('/');
      else expect(c.category_id.startsWith(`${c.parent_id}/`) && ids.has(c.parent_id)).toBe(true);
    }
  });

  it('category_id defaults to general, is set by a known free label, and filters (a parent includes its children)', async () => {
    const plain = await h.call(a, 'add_expense', { group_id: g, description: 'Misc', amount_minor: 300 });
    expect(plain.expense.category_id).toBe('general');
    const label = await h.call(a, 'add_expense', { group_id: g, description: 'Shop', amount_minor: 300, category: 'Groceries' });
    expect(label.expense).toMatchObject({ category: 'Groceries', category_id: 'food/groceries' });
    const free = await h.call(a, 'add_expense', { group_id: g, description: 'X', amount_minor: 300, category: 'my own label' });
    expect(free.expense).toMatchObject({ category: 'my own label', category_id: 'general' });
    const dinner = await h.call(a, 'add_expense', {
      group_id: g,
      description: 'Dinner',
      amount_minor: 900,
      category_id: 'food/dining_out',
    });
    const taxi = await h.call(a, 'add_expense', { group_id: g, description: 'Cab', amount_minor: 900, category_id: 'transport/taxi' });
    const food = await h.call(a, 'list_expenses', { group_id: g, category_id: 'food' });
    expect(food.expenses.map((e: any) => e.expense_id).sort()).toEqual([label.expense.expense_id, dinner.expense.expense_id].sort());
    const cab = await h.call(a, 'list_expenses', { group_id: g, category_id: 'transport/taxi' });
    expect(cab.expenses.map((e: any) => e.expense_id)).toEqual([taxi.expense.expense_id]);
    const moved = await h.call(a, 'update_expense', { expense_id: taxi.expense.expense_id, category_id: 'travel' });
    expect(moved.expense.category_id).toBe('travel');
    expect((await h.call(a, 'get_expense', { expense_id: taxi.expense.expense_id })).expense.category_id).toBe('travel');
  });

  it('an unknown category_id is a VALIDATION_ERROR naming it (also in the sandbox)', async () => {
    const e = await h.fail(a, 'add_expense', { group_id: g, description: 'X', amount_minor: 1, category_id: 'food/caviar' });
    expect(e.kittyCode).toBe('VALIDATION_ERROR');
    expect(paths(e)).toEqual(['category_id']);
    expect(h.registry.validateArgs('list_expenses', { group_id: g, category_id: 'nope' })).toMatchObject({ ok: false });
  });

  it('maps Splitwise and Spliit category names on import and writes category_id on export', async () => {
    const [ana, rio, sam] = [await h.agent('ana'), await h.agent('rio'), await h.agent('sam')];
    const gs = await groupWith(h, [ana, rio, sam], 'EUR');
    const mapping = { 'Ana Silva': ana.handle, 'Rio Tanaka': rio.handle, 'Sam Lee': sam.handle };
    await h.call(ana, 'import_expenses', { group_id: gs, format: 'splitwise', csv: fixture('splitwise-export.csv'), mapping });
    const byDesc = async (gid: string) =>
      Object.fromEntries(
        (await h.call(ana, 'list_expenses', { group_id: gid })).expenses.map((e: any) => [e.description, [e.category, e.category_id]]),
      );
    const sw = await byDesc(gs);
    expect(sw['Hotel Lisboa, 2 nights']).toEqual(['Lodging', 'travel/lodging']);
    expect(Object.values(sw).map((v: any) => v[1])).toEqual(expect.arrayContaining(['food/groceries', 'food/dining_out', 'entertainment']));

    const gp = await groupWith(h, [ana, rio], 'EUR');
    await h.call(ana, 'import_expenses', {
      group_id: gp,
      format: 'spliit',
      csv: fixture('spliit-export.csv'),
      mapping: { Ana: ana.handle, Rio: rio.handle },
    });
    const sp = await byDesc(gp);
    expect(sp['Dinner, tapas']).toEqual(['Food and Drink', 'food']);
    expect(sp['Flights']).toEqual(['Travel', 'travel']);

    const json = await h.call(ana, 'export_group', { group_id: gp });
    expect(json.json.expenses.map((e: any) => e.category_id)).toContain('travel');
    const csv = await h.call(ana, 'export_group', { group_id: gp, format: 'csv' });
    const [header, ...lines] = csv.csv.expenses.trim().split('\r\n');
    const col = header.split(',').indexOf('category_id');
    expect(col).toBeGreaterThan(0);
    expect(lines.some((l: string) => l.split(',').includes('travel'))).toBe(true);
  });
});

describe('itemized bills', () => {
  it('splits each item by its own split, tax and tip by item subtotal; the amount is the sum; items kept with their shares', async () => {
    const r = await h.call(a, 'add_expense', {
      group_id: g,
      description: 'Dinner',
      items: [
        { description: 'Pasta', amount_minor: 1200, split: { participants: [{ handle: a.handle }] } },
        { description: 'Steak', amount_minor: 2400, split: { participants: [{ handle: b.handle }] } },
        { description: 'Wine', amount_minor: 3000 },
      ],
      tax_minor: 660,
      tip_minor: 1000,
    });
    const e = r.expense;
    expect(e).toMatchObject({ amount_minor: 8260, split_method: 'itemized', tax_minor: 660, tip_minor: 1000 });
    // Subtotals: a 1200 + 1000 = 2200, b 2400 + 1000 = 3400, c 1000; of 6600. Ideal ×8260/6600.
    expect(owed(e)).toEqual({ [a.handle]: 2753, [b.handle]: 4255, [c.handle]: 1252 });
    expect(e.items).toHaveLength(3);
    expect(e.items[2]).toMatchObject({ description: 'Wine', amount_minor: 3000, split_method: 'equal' });
    expect(e.items[2].shares.map((s: any) => s.owed_minor).sort()).toEqual([1000, 1000, 1000]);
    expect(e.items[0].shares).toEqual([{ handle: a.handle, owed_minor: 1200 }]);
    const got = (await h.call(b, 'get_expense', { expense_id: e.expense_id })).expense;
    expect(got.items).toEqual(e.items);
    expect(owed(got)).toEqual(owed(e));
    await expectLedgerOk(h);

    // update: a new tip re-shares the same items; items: null makes it plain again (equal over everyone).
    const u = await h.call(a, 'update_expense', { expense_id: e.expense_id, tip_minor: 0 });
    expect(u.expense.amount_minor).toBe(7260);
    expect(u.expense.items).toHaveLength(3);
    const plain = await h.call(a, 'update_expense', { expense_id: e.expense_id, items: null });
    expect(plain.expense).toMatchObject({ items: null, tax_minor: null, split_method: 'equal', amount_minor: 7260 });
    await expectLedgerOk(h);
  });

  it('a discount may be negative; amount_minor must match; fields are named in errors', async () => {
    const ok = await h.call(a, 'add_expense', {
      group_id: g,
      description: 'Groceries',
      amount_minor: 900,
      items: [{ description: 'Bread', amount_minor: 1000 }],
      tax_minor: -100,
    });
    expect(ok.expense.amount_minor).toBe(900);
    const mismatch = await h.fail(a, 'add_expense', {
      group_id: g,
      description: 'X',
      amount_minor: 5,
      items: [{ description: 'Y', amount_minor: 10 }],
    });
    expect(mismatch.kittyCode).toBe('VALIDATION_ERROR');
    expect(paths(mismatch)).toEqual(['amount_minor', 'items']);
    const tax = await h.fail(a, 'add_expense', { group_id: g, description: 'X', amount_minor: 5, tax_minor: 1 });
    expect(paths(tax)).toEqual(['tax_minor']);
    const neg = await h.fail(a, 'add_expense', {
      group_id: g,
      description: 'X',
      items: [{ description: 'Y', amount_minor: 10 }],
      tax_minor: -10,
    });
    expect(paths(neg)).toEqual(['tax_minor']);
    const who = await h.fail(a, 'add_expense', {
      group_id: g,
      description: 'X',
      items: [
        { description: 'Y', amount_minor: 10 },
        { description: 'Z', amount_minor: 10, split: { participants: [{ handle: 'nobody-here' }] } },
      ],
    });
    expect(paths(who)).toEqual(['items.1.split.participants.0.handle']);
    const exact = await h.fail(a, 'add_expense', {
      group_id: g,
      description: 'X',
      items: [{ description: 'Y', amount_minor: 10, split: { method: 'exact', participants: [{ handle: a.handle, amount_minor: 9 }] } }],
    });
    expect(paths(exact)).toEqual(['items.0.split.participants']);
    const fx = await h.fail(a, 'add_expense', {
      group_id: g,
      description: 'X',
      items: [{ description: 'Y', amount_minor: 10 }],
      original_currency: 'USD',
      original_amount_minor: 10,
      exchange_rate: '1',
    });
    expect(paths(fx)).toEqual(['original_currency']);
    const zero = await h.fail(a, 'add_expense', { group_id: g, description: 'X', items: [{ description: 'Y', amount_minor: 0 }] });
    expect(paths(zero)).toEqual(['items.0.amount_minor']);
  });
});

describe('a repeating itemized bill', () => {
  it('repeats its items, tax, tip and category; each copy rounds by its own id', async () => {
    const gg = await groupWith(h, [a, b]);
    const first = await h.call(a, 'add_expense', {
      group_id: gg,
      description: 'Box',
      category: 'Groceries',
      items: [
        { description: 'Veg', amount_minor: 1001 },
        { description: 'Cheese', amount_minor: 700, split: { participants: [{ handle: b.handle }] } },
      ],
      tax_minor: 99,
      repeat: { unit: 'day', count: 3 },
    });
    const r = await runRecurrences(h.services, new Date(Date.now() + 2 * 86_400_000));
    expect(r.errors).toEqual([]);
    const { expenses } = await h.call(a, 'list_expenses', { group_id: gg });
    expect(expenses).toHaveLength(3);
    for (const e of expenses) {
      expect(e).toMatchObject({ amount_minor: 1800, split_method: 'itemized', category_id: 'food/groceries', tax_minor: 99, tip_minor: 0 });
      expect(e.items.map((i: any) => i.shares.reduce((t: number, x: any) => t + x.owed_minor, 0))).toEqual([1001, 700]);
      expect(e.shares.reduce((t: number, x: any) => t + x.owed_minor, 0)).toBe(1800);
    }
    expect(expenses.map((e: any) => e.expense_id)).toContain(first.expense.expense_id);
    await expectLedgerOk(h);
  });
});

describe('split with adjustments', () => {
  it('each pays their adjustment plus an equal part of the rest, also after an amount change', async () => {
    const gg = await groupWith(h, [a, b, c]);
    const r = await h.call(a, 'add_expense', {
      group_id: gg,
      description: 'Bar',
      amount_minor: 3000,
      split: {
        method: 'adjustment',
        participants: [
          { handle: a.handle, adjustment_minor: 500 },
          { handle: b.handle, adjustment_minor: 0 },
          { handle: c.handle, adjustment_minor: 0 },
        ],
      },
    });
    expect(r.expense.split_method).toBe('adjustment');
    // 500 + 2500/3 = 1333.33 for a, 833.33 for b and c: one of them gets the extra unit.
    const o = owed(r.expense);
    expect([1333, 1334]).toContain(o[a.handle]);
    expect([833, 834]).toContain(o[b.handle]);
    expect([833, 834]).toContain(o[c.handle]);
    expect(Object.values(owed(r.expense)).reduce((s: number, v: any) => s + v, 0)).toBe(3000);
    const u = await h.call(a, 'update_expense', { expense_id: r.expense.expense_id, amount_minor: 3500 });
    expect(u.expense.shares.find((s: any) => s.handle === a.handle).owed_minor).toBe(1500);
    expect(await balancesOf(h, a, gg)).toMatchObject({ [a.handle]: 2000 });
    const small = await h.fail(a, 'update_expense', { expense_id: r.expense.expense_id, amount_minor: 400 });
    expect(paths(small)).toEqual(['split']);
    const big = await h.fail(a, 'add_expense', {
      group_id: gg,
      description: 'X',
      amount_minor: 100,
      split: {
        method: 'adjustment',
        participants: [
          { handle: a.handle, adjustment_minor: 300 },
          { handle: b.handle, adjustment_minor: 0 },
        ],
      },
    });
    expect(paths(big)).toEqual(['split.participants.1.adjustment_minor']);
    const missing = await h.fail(a, 'add_expense', {
      group_id: gg,
      description: 'X',
      amount_minor: 100,
      split: { method: 'adjustment', participants: [{ handle: a.handle }] },
    });
    expect(paths(missing)).toEqual(['split.participants.0.adjustment_minor']);
    await expectLedgerOk(h);
  });
});
