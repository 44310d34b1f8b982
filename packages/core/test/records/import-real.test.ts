/**
 * Real exports import: a Splitwise export as Splitwise writes it (blank lines, quoted commas and
 * quotes, rows in two currencies, a dated "Total balance" footer per currency) and Spliit's own
 * CSV export (byte-order mark, quoted texts, per-person shares with the payer positive, shares
 * rounded to the cent, a reimbursement, a foreign-currency row). Fixtures in test/records/fixtures/.
 */
import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createHarness, type Harness } from '../harness.ts';
import { groupWith, balancesOf, expectLedgerOk } from '../ledger-helpers.ts';

const fixture = (name: string) => readFileSync(new URL(`./fixtures/${name}`, import.meta.url), 'utf8');

let h: Harness;
beforeAll(async () => {
  h = await createHarness();
});
afterAll(async () => {
  await h?.close();
});

describe('a real Splitwise export', () => {
  it('imports the group-currency rows, skips and reports the others and the footers', async () => {
    const [ana, rio, sam] = [await h.agent('ana'), await h.agent('rio'), await h.agent('sam')];
    const g = await groupWith(h, [ana, rio, sam], 'EUR');
    const mapping = { 'Ana Silva': ana.handle, 'Rio Tanaka': rio.handle, 'Sam Lee': sam.handle };
    const csv = fixture('splitwise-export.csv');
    const r = await h.call(ana, 'import_expenses', { group_id: g, format: 'splitwise', csv, mapping });
    expect(r.imported_expenses).toBe(4);
    expect(r.imported_payments).toBe(1);
    expect(r.skipped).toEqual([{ line: 7, message: expect.stringContaining('in USD, not the group currency EUR') }]);
    expect(await balancesOf(h, ana, g)).toEqual({ [ana.handle]: 9242, [rio.handle]: -6608, [sam.handle]: -2634 });
    const titles = (await h.call(ana, 'list_expenses', { group_id: g })).expenses.map((e: { description: string }) => e.description);
    expect(titles).toEqual(expect.arrayContaining(['Hotel Lisboa, 2 nights', 'Museum tickets "Gulbenkian"']));

    // The USD rows go into a USD group from the same file.
    const gu = await groupWith(h, [ana, rio, sam], 'USD');
    const u = await h.call(ana, 'import_expenses', { group_id: gu, format: 'splitwise', csv, mapping });
    expect(u.imported_expenses + u.imported_payments).toBe(1);
    expect(await balancesOf(h, ana, gu)).toEqual({ [ana.handle]: 3000, [rio.handle]: -3000, [sam.handle]: 0 });
    await expectLedgerOk(h);
  });
});

describe("Spliit's own CSV export", () => {
  it('imports shares (payer positive), rounding, a payer without a share, a reimbursement and a foreign-currency row', async () => {
    const [ana, rio] = [await h.agent('ana'), await h.agent('rio')];
    const g = await groupWith(h, [ana, rio], 'EUR');
    const mapping = { Ana: ana.handle, Rio: rio.handle };
    const r = await h.call(ana, 'import_expenses', { group_id: g, format: 'spliit', csv: fixture('spliit-export.csv'), mapping });
    expect(r.imported_expenses).toBe(3);
    expect(r.imported_payments).toBe(1);
    // Dinner 55.55 (Ana paid; shares 27.78 + 27.78 rounded: Ana's own share is 27.77): Ana +27.78.
    // Flights 184.50 (Rio paid, 50/50): Ana −92.25. Groceries 30.00 (Ana paid for Rio): +30.00. Ana paid Rio back 10.00: +10.00.
    expect(await balancesOf(h, ana, g)).toEqual({ [ana.handle]: -2447, [rio.handle]: 2447 });
    const flights = (await h.call(ana, 'list_expenses', { group_id: g })).expenses.find(
      (e: { description: string }) => e.description === 'Flights',
    );
    expect(flights).toMatchObject({ amount_minor: 18450, original_currency: 'USD', original_amount_minor: 20000 });
    await expectLedgerOk(h);
  });

  it('reads the currency symbol of older exports, and says when the payer cannot be known', async () => {
    const [ana, rio, sam] = [await h.agent('ana'), await h.agent('rio'), await h.agent('sam')];
    const g = await groupWith(h, [ana, rio, sam], 'EUR');
    const mapping = { Ana: ana.handle, Rio: rio.handle, Sam: sam.handle };
    const header = '\uFEFF"Date","Description","Category","Currency","Cost","Is Reimbursement","Split mode","Ana","Rio","Sam"\n';
    const ok = await h.call(ana, 'import_expenses', {
      group_id: g,
      format: 'spliit',
      mapping,
      csv: header + '"2025-01-06","Dinner","Food","€","60.00","No","Evenly",20,-20,-20\n',
    });
    expect(ok.imported_expenses).toBe(1);
    expect(await balancesOf(h, ana, g)).toEqual({ [ana.handle]: 4000, [rio.handle]: -2000, [sam.handle]: -2000 });
    const bad = await h.fail(ana, 'import_expenses', {
      group_id: g,
      format: 'spliit',
      mapping,
      csv: header + '"2025-01-07","Taxi","Transport","€","24.00","No","Evenly",0,-12,-12\n',
    });
    expect(bad.kittyCode).toBe('VALIDATION_ERROR');
    expect((bad.details as { issues: Array<{ message: string }> }).issues[0]!.message).toMatch(/cannot tell who paid.*"Paid By"/);
  });
});
