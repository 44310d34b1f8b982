/**
 * Small things agents tripped on: ready record_payment arguments from suggest_settlements
 * (with a deterministic idempotency_key), handles written "@ana", inbox `top` that lists what still
 * needs action and then the newest, the invite message's sentences, and hints after archiving.
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

describe('suggest_settlements', () => {
  it('gives record_payment arguments that are ready as they are, idempotency_key included and stable for the plan', async () => {
    const [ana, rio] = [await h.agent('ana'), await h.agent('rio')];
    const g = await groupWith(h, [ana, rio]);
    await h.call(ana, 'add_expense', { group_id: g, description: 'Dinner', amount_minor: 3000 });
    const plan = await h.call(rio, 'suggest_settlements', { group_id: g });
    const args = plan.transfers[0].record_payment;
    expect(args).toMatchObject({ group_id: g, from_handle: rio.handle, to_handle: ana.handle, amount_minor: 1500 });
    expect(args.idempotency_key).toMatch(/^settle-[0-9a-f]{40}$/);
    expect((await h.call(rio, 'suggest_settlements', { group_id: g })).transfers[0].record_payment).toEqual(args);
    const first = await h.call(rio, 'record_payment', args, { raw: true });
    const retry = await h.call(rio, 'record_payment', args, { raw: true });
    expect(retry.replayed).toBe(true);
    expect(retry.payment.payment_id).toBe(first.payment.payment_id);
    expect((await h.call(rio, 'list_payments', { group_id: g })).payments).toHaveLength(1);
    // Once the ledger changes, a new suggestion gets a new key.
    await h.call(ana, 'confirm_payment', { payment_id: first.payment.payment_id });
    await h.call(ana, 'add_expense', { group_id: g, description: 'Lunch', amount_minor: 3000 });
    const next = (await h.call(rio, 'suggest_settlements', { group_id: g })).transfers[0].record_payment;
    expect(next.amount_minor).toBe(1500);
    expect(next.idempotency_key).not.toBe(args.idempotency_key);
  });
});

describe('handles', () => {
  it('accept a leading @ wherever a handle is taken', async () => {
    const [ana, rio] = [await h.agent('ana'), await h.agent('rio')];
    const g = await groupWith(h, [ana, rio]);
    expect((await h.call(ana, 'get_agent', { handle: `@${rio.handle}` })).agent.handle).toBe(rio.handle);
    await h.call(ana, 'add_expense', {
      group_id: g,
      description: 'Fuel',
      amount_minor: 1000,
      payers: [{ handle: `@${ana.handle}`, amount_minor: 1000 }],
      split: { method: 'exact', participants: [{ handle: `@${rio.handle}`, amount_minor: 1000 }] },
    });
    await h.call(ana, 'record_payment', { group_id: g, from_handle: `@${rio.handle}`, to_handle: `@${ana.handle}`, amount_minor: 400 });
    expect(await balancesOf(h, ana, g)).toEqual({ [ana.handle]: 600, [rio.handle]: -600 });
    await h.call(ana, 'add_contact', { handle: `@${rio.handle}` });
    const bad = await h.fail(ana, 'get_agent', { handle: '@@rio' });
    expect(bad.kittyCode).toBe('VALIDATION_ERROR');
    await expectLedgerOk(h);
  });
});

describe('inbox top', () => {
  it('lists what still needs action first, then the newest; a resolved request drops out', async () => {
    const [ana, rio] = [await h.agent('ana'), await h.agent('rio')];
    const g = await groupWith(h, [ana, rio]);
    await h.call(ana, 'add_expense', { group_id: g, description: 'Hotel', amount_minor: 10000 });
    const p = await h.call(rio, 'record_payment', { group_id: g, to_handle: ana.handle, amount_minor: 5000 });
    let top = (await h.call(ana, 'get_me', {})).inbox.top as string[];
    expect(top[0]).toMatch(/awaiting your confirmation/);
    await h.call(ana, 'confirm_payment', { payment_id: p.payment.payment_id });
    for (const d of ['Snacks', 'Museum', 'Bus']) await h.call(rio, 'add_expense', { group_id: g, description: d, amount_minor: 200 });
    top = (await h.call(ana, 'get_me', {})).inbox.top as string[];
    expect(top.some((t) => /awaiting your confirmation/.test(t))).toBe(false);
    expect(top).toHaveLength(3);
    expect(top[0]).toContain('"Bus"');
    expect(top[1]).toContain('"Museum"');
    expect(top[2]).toContain('"Snacks"');
    // A new request needing action comes before newer plain news.
    const p2 = await h.call(rio, 'record_payment', { group_id: g, to_handle: ana.handle, amount_minor: 100, allow_overpayment: true });
    await h.call(rio, 'add_expense', { group_id: g, description: 'Ferry', amount_minor: 200 });
    top = (await h.call(ana, 'get_me', {})).inbox.top as string[];
    expect(top[0]).toMatch(/awaiting your confirmation/);
    expect(top[1]).toContain('"Ferry"');
    await h.call(ana, 'reject_payment', { payment_id: p2.payment.payment_id });
  });
});

describe('words agents read', () => {
  it('the invite message ends the note with a full stop before the next sentence', async () => {
    const ana = await h.agent('ana');
    const g = (await h.call(ana, 'create_group', { name: 'Trip', currency: 'EUR' })).group.group_id;
    const inv = await h.call(ana, 'create_invite', { group_id: g, note: 'for the trip with rio and ana-bot' });
    expect(inv.message).toContain('Note: for the trip with rio and ana-bot. To join');
    const asked = await h.call(ana, 'create_invite', { group_id: g, note: 'Coming?' });
    expect(asked.message).toContain('Note: Coming? To join');
  });

  it('after archiving, no hint says to archive', async () => {
    const [ana, rio] = [await h.agent('ana'), await h.agent('rio')];
    const g = await groupWith(h, [ana, rio]);
    const before = await h.call(ana, 'get_balances', { group_id: g });
    expect(before.suggested_next.some((s: string) => s.startsWith('archive_group'))).toBe(true);
    const archived = await h.call(ana, 'archive_group', { group_id: g });
    expect(archived.suggested_next.join(' ')).not.toMatch(/archive_group|if the trip is over/);
    for (const tool of ['get_balances', 'suggest_settlements', 'get_group']) {
      const r = await h.call(ana, tool, { group_id: g });
      expect(r.suggested_next.join(' '), tool).not.toMatch(/archive_group|if the trip is over/);
    }
  });
});
