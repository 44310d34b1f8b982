/**
 * confirm/reject/cancel_payment decide on a pending payment this process recorded without reading it again
 * (areas/payments/payment-reads.ts). Kept only once its write committed, and decided again on a fresh read whenever
 * the payment left pending elsewhere: the answer is always the one a fresh read gives.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { randomUUID } from 'node:crypto';
import type { Services } from '../../src/index.ts';
import { createHarness, type Harness, type TestAgent } from '../harness.ts';
import { expectLedgerOk, groupWith } from '../ledger-helpers.ts';

let h: Harness;
let ana: TestAgent, ben: TestAgent;
let g: string;
/** Another instance of Kitty on the same database: no caches of its own. */
let elsewhere: Services;

beforeAll(async () => {
  h = await createHarness();
  [ana, ben] = [await h.agent('ana'), await h.agent('ben')];
  g = await groupWith(h, [ana, ben]);
  elsewhere = { ...h.services, paymentReads: undefined, groupReads: undefined };
});
afterAll(async () => {
  await expectLedgerOk(h);
  await h?.close();
});

async function callElsewhere(agent: TestAgent, tool: string, args: Record<string, unknown>) {
  const r = await h.registry.callTool(
    tool,
    { idempotency_key: `pr-${randomUUID()}`, ...args },
    { services: elsewhere, auth: agent.auth, requestId: `req_${randomUUID()}` },
  );
  return r.data as any;
}

const pending = async () =>
  (await h.call(ben, 'record_payment', { group_id: g, to_handle: ana.handle, amount_minor: 250, allow_overpayment: true })).payment;

describe('a pending payment this process recorded', () => {
  it('is kept once written, and not for a preview, a confirmed recording or a refused one', async () => {
    const p = await pending();
    expect(h.services.paymentReads?.get(p.payment_id)).toMatchObject({ id: p.payment_id, status: 'pending', amountMinor: 250n });
    const preview = await h.call(ben, 'record_payment', {
      group_id: g,
      to_handle: ana.handle,
      amount_minor: 250,
      allow_overpayment: true,
      dry_run: true,
    });
    expect(h.services.paymentReads?.get(preview.payment.payment_id)).toBeUndefined();
    const confirmed = await h.call(ana, 'record_payment', {
      group_id: g,
      from_handle: ben.handle,
      to_handle: ana.handle,
      amount_minor: 1,
      allow_overpayment: true,
    });
    expect(h.services.paymentReads?.get(confirmed.payment.payment_id)).toBeUndefined();
    const kept = (h.services.paymentReads as Map<string, object>).size;
    const refused = await h.fail(ben, 'record_payment', { group_id: g, to_handle: ana.handle, amount_minor: 10_000_000 });
    expect(refused.kittyCode).toBe('OVERPAYMENT');
    expect((h.services.paymentReads as Map<string, object>).size).toBe(kept);
  });

  it('confirmed elsewhere meanwhile: cancel_payment answers PAYMENT_NOT_PENDING, as on a fresh read, and writes nothing', async () => {
    const p = await pending();
    await callElsewhere(ana, 'confirm_payment', { payment_id: p.payment_id });
    const err = await h.fail(ben, 'cancel_payment', { payment_id: p.payment_id });
    expect(err.kittyCode).toBe('PAYMENT_NOT_PENDING');
    expect(err.details).toMatchObject({ payment_id: p.payment_id, status: 'confirmed' });
    expect(h.services.paymentReads?.get(p.payment_id)).toBeUndefined();
    const stored = await h.services.pool.query('SELECT status FROM payments WHERE id = $1', [p.payment_id]);
    expect(stored.rows).toEqual([{ status: 'confirmed' }]);
  });

  it('gone meanwhile: NOT_FOUND', async () => {
    const p = await pending();
    // As if it had never been written (its group's pending figures restored with it).
    await h.services.pool.query('DELETE FROM payments WHERE id = $1', [p.payment_id]);
    await h.services.pool.query(
      `UPDATE memberships SET pending_count = pending_count - 1,
         balance_pending_minor = balance_pending_minor + CASE WHEN agent_id = $2 THEN -250 ELSE 250 END
       WHERE group_id = $1 AND agent_id IN ($2, $3)`,
      [g, ben.agentId, ana.agentId],
    );
    expect((await h.fail(ana, 'confirm_payment', { payment_id: p.payment_id })).kittyCode).toBe('NOT_FOUND');
  });

  it('asked of by the wrong party: FORBIDDEN, and the right party then confirms it', async () => {
    const p = await pending();
    expect((await h.fail(ben, 'confirm_payment', { payment_id: p.payment_id })).kittyCode).toBe('FORBIDDEN');
    const ok = await h.call(ana, 'confirm_payment', { payment_id: p.payment_id });
    expect(ok.payment).toMatchObject({ payment_id: p.payment_id, status: 'confirmed', amount_minor: 250 });
    expect(h.services.paymentReads?.get(p.payment_id)).toBeUndefined();
  });

  it('answers a confirmation exactly as a fresh read does', async () => {
    const [cached, fresh] = [await pending(), await pending()];
    h.services.paymentReads?.delete(fresh.payment_id);
    const a = (await h.call(ana, 'confirm_payment', { payment_id: cached.payment_id })).payment;
    const b = (await h.call(ana, 'confirm_payment', { payment_id: fresh.payment_id })).payment;
    const same = (x: any) => ({ ...x, payment_id: undefined, created_at: undefined, updated_at: undefined, resolved_at: undefined });
    expect(same(a)).toEqual(same(b));
    expect(a.created_at).toBe(cached.created_at);
  });
});
