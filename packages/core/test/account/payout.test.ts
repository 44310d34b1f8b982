/**
 * Payout methods and pay_with: validation with ibantools, who sees them (only the member who owes,
 * never get_agent), and the EPC069-12 QR payload checked field by field and decoded from the QR
 * image itself (SVG rendered by resvg, read by jsQR).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Resvg } from '@resvg/resvg-js';
import jsQR from 'jsqr';
import { createHarness, type Harness, type TestAgent } from '../harness.ts';
import { groupWith } from '../ledger-helpers.ts';

let h: Harness;
let ana: TestAgent, ben: TestAgent, cy: TestAgent, outsider: TestAgent;
const IBAN = 'DE89 3704 0044 0532 0130 00';
const METHODS = [
  { type: 'sepa', iban: IBAN, account_name: 'Ana Müller', bic: 'cobadeffxxx' },
  { type: 'paypal_me', username: 'anamueller' },
  { type: 'lightning', address: 'ana@getalby.com' },
];

beforeAll(async () => {
  h = await createHarness();
  [ana, ben, cy, outsider] = [await h.agent('ana'), await h.agent('ben'), await h.agent('cy'), await h.agent('out')];
});
afterAll(async () => h?.close());

/** Renders an SVG data URL and decodes the QR code in it. */
function decodeQr(dataUrl: string): string {
  expect(dataUrl).toMatch(/^data:image\/svg\+xml;base64,/);
  const svg = Buffer.from(dataUrl.split(',')[1]!, 'base64').toString('utf8');
  const img = new Resvg(svg, { fitTo: { mode: 'width', value: 400 }, background: 'white' }).render();
  const code = jsQR(new Uint8ClampedArray(img.pixels), img.width, img.height);
  if (!code) throw new Error('no QR code found');
  return new TextDecoder().decode(new Uint8Array(code.binaryData));
}

describe('update_me payout_methods', () => {
  it('stores normalised methods and refuses bad ones naming the field', async () => {
    const r = await h.call(ana, 'update_me', { payout_methods: METHODS });
    expect(r.payout_methods[0]).toEqual({ type: 'sepa', iban: 'DE89370400440532013000', account_name: 'Ana Müller', bic: 'COBADEFFXXX' });
    const bad: Array<[unknown, string]> = [
      [{ type: 'sepa', iban: 'DE89 3704 0044 0532 0130 01', account_name: 'A' }, 'payout_methods.0.iban'],
      [{ type: 'sepa', iban: 'XX00', account_name: 'A' }, 'payout_methods.0.iban'],
      [{ type: 'sepa', iban: IBAN, account_name: 'A', bic: 'NOTABIC!' }, 'payout_methods.0.bic'],
      [{ type: 'sepa', iban: IBAN, account_name: '' }, 'payout_methods.0.account_name'],
      [{ type: 'sepa', iban: IBAN, account_name: 'A\u0000' }, ''],
      [{ type: 'paypal_me', username: 'ana/../x' }, 'payout_methods.0.username'],
      [{ type: 'lightning', address: 'not an address' }, 'payout_methods.0.address'],
      [{ type: 'venmo', username: 'x' }, 'payout_methods.0'],
      [{ type: 'paypal_me', username: 'ana', extra: 1 }, 'payout_methods.0'],
    ];
    for (const [m, path] of bad) {
      const e = await h.fail(ben, 'update_me', { payout_methods: [m] });
      expect(e.kittyCode, JSON.stringify(m)).toBe('VALIDATION_ERROR');
      if (path) expect(JSON.stringify(e.details), JSON.stringify(m)).toContain(path);
    }
    const six = Array.from({ length: 6 }, () => METHODS[1]);
    expect((await h.fail(ben, 'update_me', { payout_methods: six })).kittyCode).toBe('VALIDATION_ERROR');
    const cleared = await h.call(cy, 'update_me', { payout_methods: [] });
    expect(cleared.payout_methods).toEqual([]);
  });

  it('never appear on get_agent, to anyone', async () => {
    for (const viewer of [ben, outsider, ana]) {
      const r = await h.call(viewer, 'get_agent', { handle: ana.handle });
      const text = JSON.stringify(r);
      expect(text).not.toContain('DE89');
      expect(text).not.toContain('anamueller');
      expect(text).not.toContain('getalby');
    }
  });
});

describe('pay_with', () => {
  it('suggest_settlements shows it to the payer only; the EPC payload follows EPC069-12 and the QR image decodes to it', async () => {
    const g = await groupWith(h, [ana, ben, cy]);
    // ana pays 90.00 for all three: ben and cy each owe her 30.00.
    await h.call(ana, 'add_expense', { group_id: g, description: 'Hotel', amount_minor: 9000 });
    const forBen = await h.call(ben, 'suggest_settlements', { group_id: g });
    const t = forBen.transfers.find((x: any) => x.from.handle === ben.handle);
    expect(t.amount_minor).toBe(3000);
    const ref = t.record_payment.idempotency_key;
    const [sepa, paypal, ln] = t.pay_with;
    const lines = sepa.epc_qr_payload.split('\n');
    expect(lines).toEqual(['BCD', '002', '1', 'SCT', 'COBADEFFXXX', 'Ana Müller', 'DE89370400440532013000', 'EUR30.00', '', '', ref]);
    expect(sepa.epc_qr_payload.endsWith('\n')).toBe(false);
    expect(Buffer.byteLength(sepa.epc_qr_payload)).toBeLessThanOrEqual(331);
    expect(ref.length).toBeLessThanOrEqual(140);
    expect(decodeQr(sepa.qr_svg_data_url)).toBe(sepa.epc_qr_payload);
    expect(paypal).toEqual({ type: 'paypal_me', url: 'https://paypal.me/anamueller/30.00EUR' });
    expect(ln).toEqual({ type: 'lightning', uri: 'lightning:ana@getalby.com' });
    // ana is owed, not owing: no pay_with for her; a member who pays someone else sees only their own.
    const forAna = await h.call(ana, 'suggest_settlements', { group_id: g });
    expect(JSON.stringify(forAna)).not.toContain('pay_with');
    const forCy = await h.call(cy, 'suggest_settlements', { group_id: g });
    for (const x of forCy.transfers) expect(x.pay_with === undefined).toBe(x.from.handle !== cy.handle);
    expect((await h.fail(outsider, 'suggest_settlements', { group_id: g })).kittyCode).toBe('FORBIDDEN');
  });

  it('a pending payment shows pay_with to its payer, with the payment id as remittance; not once confirmed', async () => {
    const g = await groupWith(h, [ana, ben]);
    await h.call(ana, 'add_expense', { group_id: g, description: 'Tickets', amount_minor: 2469 });
    const p = (await h.call(ben, 'record_payment', { group_id: g, to_handle: ana.handle, amount_minor: 1234 })).payment;
    expect(p.status).toBe('pending');
    const mine = (await h.call(ben, 'get_payment', { payment_id: p.payment_id })).payment;
    expect(mine.pay_with[0].epc_qr_payload.split('\n').slice(7)).toEqual(['EUR12.34', '', '', p.payment_id]);
    expect(decodeQr(mine.pay_with[0].qr_svg_data_url)).toBe(mine.pay_with[0].epc_qr_payload);
    expect(p.pay_with).toEqual(mine.pay_with); // record_payment's own answer carries it already
    const listed = (await h.call(ben, 'list_payments', { group_id: g })).payments;
    expect(listed[0].pay_with).toEqual(mine.pay_with);
    expect((await h.call(ana, 'get_payment', { payment_id: p.payment_id })).payment.pay_with).toBeUndefined();
    await h.call(ana, 'confirm_payment', { payment_id: p.payment_id });
    expect((await h.call(ben, 'get_payment', { payment_id: p.payment_id })).payment.pay_with).toBeUndefined();
  });

  it("record_payment's answer has pay_with only for a pending payment the caller pays to a payee with methods", async () => {
    const g = await groupWith(h, [ana, ben]);
    await h.call(ana, 'add_expense', { group_id: g, description: 'Hotel', amount_minor: 5000 });
    // Recorded by the payee: confirmed at once, nothing to pay.
    const byPayee = (
      await h.call(ana, 'record_payment', { group_id: g, from_handle: ben.handle, to_handle: ana.handle, amount_minor: 1000 })
    ).payment;
    expect(byPayee.status).toBe('confirmed');
    expect(byPayee.pay_with).toBeUndefined();
    // Recorded by the payer: pending, pay_with with this payment's id as remittance text.
    const byPayer = (await h.call(ben, 'record_payment', { group_id: g, to_handle: ana.handle, amount_minor: 500 })).payment;
    expect(byPayer.status).toBe('pending');
    expect(byPayer.pay_with.map((w: { type: string }) => w.type)).toEqual(['sepa', 'paypal_me', 'lightning']);
    expect(byPayer.pay_with[0].epc_qr_payload.split('\n').slice(7)).toEqual(['EUR5.00', '', '', byPayer.payment_id]);
    // Paid to a payee without payout methods (ben): pending, no pay_with.
    const toBen = (await h.call(ana, 'record_payment', { group_id: g, to_handle: ben.handle, amount_minor: 100, allow_overpayment: true }))
      .payment;
    expect(toBen.status).toBe('pending');
    expect(toBen.pay_with).toBeUndefined();
  });

  it('outside EUR: no EPC code, PayPal.me in the group currency with its own exponent', async () => {
    const g = await groupWith(h, [ana, ben], 'JPY');
    await h.call(ana, 'add_expense', { group_id: g, description: 'Ramen', amount_minor: 2400 });
    const t = (await h.call(ben, 'suggest_settlements', { group_id: g })).transfers[0];
    expect(t.pay_with[0]).toMatchObject({ type: 'sepa', iban: 'DE89370400440532013000', epc_qr_payload: null, qr_svg_data_url: null });
    expect(t.pay_with[1].url).toBe('https://paypal.me/anamueller/1200JPY');
  });
});
