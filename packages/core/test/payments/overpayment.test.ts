/**
 * record_payment refuses a payment larger than what is owed (OVERPAYMENT, 409) unless the caller
 * passes allow_overpayment: true; the error says what is owed, in minor units and formatted.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createHarness, type Harness } from '../harness.ts';
import { groupWith, balancesOf, expectLedgerOk } from '../ledger-helpers.ts';

let h: Harness;
beforeAll(async () => {
  h = await createHarness();
});
afterAll(async () => {
  await h?.close();
});

describe('overpayment', () => {
  it('is refused with what is owed, and recorded only with allow_overpayment', async () => {
    const [ana, rio] = [await h.agent('ana'), await h.agent('rio')];
    const g = await groupWith(h, [ana, rio]);
    await h.call(ana, 'add_expense', {
      group_id: g,
      description: 'Flat',
      amount_minor: 46510,
      split: { method: 'exact', participants: [{ handle: rio.handle, amount_minor: 46510 }] },
    });
    const err = await h.fail(rio, 'record_payment', { group_id: g, to_handle: ana.handle, amount_minor: 50000 });
    expect(err.kittyCode).toBe('OVERPAYMENT');
    expect(err.status).toBe(409);
    expect(err.message).toContain('€465.10 (46510 minor units)');
    expect(err.details).toMatchObject({
      amount_minor: 50000,
      payer_owes_minor: 46510,
      payer_owes: '€465.10',
      payee_is_owed_minor: 46510,
      max_minor: 46510,
      max: '€465.10',
    });
    expect(await balancesOf(h, ana, g)).toEqual({ [ana.handle]: 46510, [rio.handle]: -46510 });

    // Exactly what is owed passes; pending counts, so paying it again is an overpayment.
    await h.call(rio, 'record_payment', { group_id: g, to_handle: ana.handle, amount_minor: 46510 });
    const twice = await h.fail(rio, 'record_payment', { group_id: g, to_handle: ana.handle, amount_minor: 100 });
    expect(twice.kittyCode).toBe('OVERPAYMENT');
    expect(twice.details).toMatchObject({ payer_owes_minor: 0, max_minor: 0 });

    const over = await h.call(ana, 'record_payment', {
      group_id: g,
      from_handle: rio.handle,
      to_handle: ana.handle,
      amount_minor: 50000,
      allow_overpayment: true,
    });
    expect(over.payment.status).toBe('confirmed');
    expect(await balancesOf(h, ana, g)).toEqual({ [ana.handle]: -3490, [rio.handle]: 3490 });
    await expectLedgerOk(h);
  });

  it('counts the payee side too: paying someone more than they are owed is refused', async () => {
    const [a, b, c] = [await h.agent('a'), await h.agent('b'), await h.agent('c')];
    const g = await groupWith(h, [a, b, c]);
    // c owes 30.00 in total: 10.00 to a and 20.00 to b (a +10.00, b +20.00, c −30.00).
    await h.call(a, 'add_expense', {
      group_id: g,
      description: 'x',
      amount_minor: 1000,
      split: { method: 'exact', participants: [{ handle: c.handle, amount_minor: 1000 }] },
    });
    await h.call(b, 'add_expense', {
      group_id: g,
      description: 'y',
      amount_minor: 2000,
      split: { method: 'exact', participants: [{ handle: c.handle, amount_minor: 2000 }] },
    });
    const err = await h.fail(c, 'record_payment', { group_id: g, to_handle: a.handle, amount_minor: 3000 });
    expect(err.kittyCode).toBe('OVERPAYMENT');
    expect(err.details).toMatchObject({ payer_owes_minor: 3000, payee_is_owed_minor: 1000, max_minor: 1000 });
  });
});
