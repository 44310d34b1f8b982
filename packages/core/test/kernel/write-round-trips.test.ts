/**
 * Round trips of the hot writes: each decides from one read (the group with its members; confirm/reject/cancel_payment
 * first read the payment unless this process recorded it; that group read is kept per group: access/group-reads.ts) and writes with one statement (kitty_apply_batch), then sends its wake-ups after
 * the commit in one more (kitty_wakes, outside the write's transaction); create_group needs no read. Counted on the pg client every query of Kitty goes through (Prisma's adapter included).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import pg from 'pg';
import { createHarness, type Harness, type TestAgent } from '../harness.ts';
import { groupWith } from '../ledger-helpers.ts';

let h: Harness;
let ana: TestAgent, ben: TestAgent, cy: TestAgent;
let g: string;

beforeAll(async () => {
  h = await createHarness();
  [ana, ben, cy] = [await h.agent('ana'), await h.agent('ben'), await h.agent('cy')];
  g = await groupWith(h, [ana, ben, cy]);
  // The payee has payout methods: a pending payment's answer carries pay_with for its payer.
  await h.call(ana, 'update_me', { payout_methods: [{ type: 'paypal_me', username: 'anamueller' }] });
});
afterAll(async () => h?.close());

/** The statements sent while `fn` runs, by name (unnamed: the start of their text). */
async function statements(fn: () => Promise<unknown>): Promise<string[]> {
  const seen: string[] = [];
  const proto = pg.Client.prototype as unknown as { query: (...a: unknown[]) => unknown };
  const real = proto.query;
  proto.query = function (this: unknown, ...args: unknown[]) {
    const q = args[0] as string | { name?: string; text?: string };
    seen.push(typeof q === 'string' ? q.slice(0, 40) : (q.name ?? q.text?.slice(0, 40) ?? '?'));
    return real.apply(this, args);
  };
  try {
    await fn();
  } finally {
    proto.query = real;
  }
  return seen;
}

describe('hot writes: one read, one write', () => {
  it('add_expense: the group read once, then taken from the cache by the next writes into that group', async () => {
    const s = await statements(() => h.call(ana, 'add_expense', { group_id: g, description: 'Taxi', amount_minor: 900 }));
    expect(s).toEqual(['kitty_read_group_for_write', 'kitty_apply_batch', 'kitty_wakes']);
    const g2 = await groupWith(h, [ana, ben, cy]); // its own group: the balances in g stay as the tests below expect
    await h.call(cy, 'add_expense', { group_id: g2, description: 'Tea', amount_minor: 300 });
    for (const who of [ana, ben]) {
      const next = await statements(() => h.call(who, 'add_expense', { group_id: g2, description: 'Bus', amount_minor: 300 }));
      expect(next).toEqual(['kitty_apply_batch', 'kitty_wakes']);
    }
  });

  it('record_payment, pending, to a payee with payout methods: pay_with from the group read add_expense left in the cache', async () => {
    let answer: any;
    const s = await statements(async () => {
      answer = await h.call(ben, 'record_payment', { group_id: g, to_handle: ana.handle, amount_minor: 300 });
    });
    expect(answer.payment.pay_with).toEqual([{ type: 'paypal_me', url: 'https://paypal.me/anamueller/3.00EUR' }]);
    expect(s).toEqual(['kitty_apply_batch', 'kitty_wakes']);
  });

  it('confirm_payment, reject_payment and cancel_payment of a payment this process recorded: the write alone', async () => {
    for (const [tool, by] of [
      ['confirm_payment', ana],
      ['reject_payment', ana],
      ['cancel_payment', ben],
    ] as const) {
      const p = (await h.call(ben, 'record_payment', { group_id: g, to_handle: ana.handle, amount_minor: 100, allow_overpayment: true }))
        .payment;
      let answer: any;
      const s = await statements(async () => {
        answer = await h.call(by, tool, { payment_id: p.payment_id });
      });
      // What a transition keeps of the recorded payment, as recorded.
      const fixed = ({ payment_id, group_id, from, to, amount_minor, amount, currency, note, recorded_by, created_at }: any) => ({
        payment_id,
        group_id,
        from,
        to,
        amount_minor,
        amount,
        currency,
        note,
        recorded_by,
        created_at,
      });
      expect(fixed(answer.payment), tool).toEqual(fixed(p));
      expect(answer.payment.status, tool).toBe(
        { confirm_payment: 'confirmed', reject_payment: 'rejected', cancel_payment: 'cancelled' }[tool],
      );
      expect(s, tool).toEqual(['kitty_apply_batch', 'kitty_wakes']);
      // Once moved, the payment is no longer kept: a second transition reads it and answers PAYMENT_NOT_PENDING.
      expect(h.services.paymentReads?.get(p.payment_id)).toBeUndefined();
    }
  });

  it('confirm_payment, reject_payment and cancel_payment of a payment recorded elsewhere read the payment alone, its group from the cache', async () => {
    for (const [tool, by] of [
      ['confirm_payment', ana],
      ['reject_payment', ana],
      ['cancel_payment', ben],
    ] as const) {
      const p = (await h.call(ben, 'record_payment', { group_id: g, to_handle: ana.handle, amount_minor: 100, allow_overpayment: true }))
        .payment;
      h.services.paymentReads?.delete(p.payment_id); // recorded by another instance, or before a restart
      let answer: any;
      const s = await statements(async () => {
        answer = await h.call(by, tool, { payment_id: p.payment_id });
      });
      expect(answer.payment.status, tool).toBe(
        { confirm_payment: 'confirmed', reject_payment: 'rejected', cancel_payment: 'cancelled' }[tool],
      );
      expect(s, tool).toEqual(['kitty_read_payment', 'kitty_apply_batch', 'kitty_wakes']);
    }
  });

  it('confirm_payment into a group no write has read yet: the payment, then the group (kept for the next writes)', async () => {
    const g3 = await groupWith(h, [ana, ben]);
    const p = (await h.call(ben, 'record_payment', { group_id: g3, to_handle: ana.handle, amount_minor: 100, allow_overpayment: true }))
      .payment;
    h.services.groupReads?.delete(g3);
    h.services.paymentReads?.delete(p.payment_id);
    const s = await statements(() => h.call(ana, 'confirm_payment', { payment_id: p.payment_id }));
    expect(s).toEqual(['kitty_read_payment', 'kitty_read_group_for_write', 'kitty_apply_batch', 'kitty_wakes']);
    const next = await statements(() => h.call(ana, 'add_expense', { group_id: g3, description: 'Cake', amount_minor: 500 }));
    expect(next).toEqual(['kitty_apply_batch', 'kitty_wakes']);
  });

  it('confirm_payment still answers NOT_FOUND for an unknown payment and FORBIDDEN to a non-member', async () => {
    const p = (await h.call(ben, 'record_payment', { group_id: g, to_handle: ana.handle, amount_minor: 100, allow_overpayment: true }))
      .payment;
    expect((await h.fail(ana, 'confirm_payment', { payment_id: '00000000-0000-4000-8000-000000000000' })).kittyCode).toBe('NOT_FOUND');
    const outsider = await h.agent('out');
    expect((await h.fail(outsider, 'confirm_payment', { payment_id: p.payment_id })).kittyCode).toBe('FORBIDDEN');
    expect((await h.fail(cy, 'confirm_payment', { payment_id: p.payment_id })).kittyCode).toBe('FORBIDDEN');
  });

  it('create_group: the write alone', async () => {
    const s = await statements(() => h.call(cy, 'create_group', { name: 'Flat', currency: 'EUR' }));
    expect(s).toEqual(['kitty_apply_batch', 'kitty_wakes']);
  });
});
