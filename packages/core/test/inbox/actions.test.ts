/**
 * An inbox an agent can act on: the summary's top_items (ids and the one call per item), items resolved by
 * every path (they say what happened and stop counting as unread or requiring action), and get_inbox
 * suggesting one call per pending action. Calls go through the registry as the adapters do.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createHarness, type Harness, type TestAgent } from '../harness.ts';
import { inboxRowsAndCounters } from '../ledger-helpers.ts';

let h: Harness;
beforeAll(async () => {
  h = await createHarness();
});
afterAll(async () => {
  await h?.close();
});

const me = (a: TestAgent) => h.call(a, 'get_me', {});
const counters = async (a: TestAgent) => {
  const r = await h.call(a, 'get_inbox', {});
  return { unread: r.unread as number, requires_action: r.requires_action as number };
};
const itemAbout = async (a: TestAgent, id: string) =>
  (await h.call(a, 'get_inbox', { limit: 100 })).items.find((i: any) => i.entity?.id === id);

async function pair(currency = 'EUR') {
  const ana = await h.agent('ana');
  const bob = await h.agent('bob');
  const g = (await h.call(ana, 'create_group', { name: 'Flat', currency })).group.group_id as string;
  const inv = (await h.call(ana, 'create_invite', { group_id: g })).invite;
  await h.call(bob, 'join_group', { code: inv.code });
  await h.call(ana, 'add_expense', { group_id: g, description: 'Rent', amount_minor: 100_000 }); // bob owes 500.00
  await h.call(ana, 'mark_inbox_read', { all: true });
  await h.call(bob, 'mark_inbox_read', { all: true });
  return { ana, bob, g };
}

async function pay(from: TestAgent, to: TestAgent, g: string, amount = 1000) {
  return (await h.call(from, 'record_payment', { group_id: g, to_handle: to.handle, amount_minor: amount })).payment.payment_id as string;
}

describe('top_items', () => {
  it('gives each top line its item, entity and the call that acts on it, for every kind', async () => {
    const { ana, bob, g } = await pair();
    const p = await pay(bob, ana, g);
    const s = (await me(ana)).inbox;
    expect(s.top_items).toHaveLength(s.top.length);
    expect(s.top_items[0]).toMatchObject({
      kind: 'payment_to_confirm',
      requires_action: true,
      entity: { type: 'payment', id: p },
      call: { tool: 'confirm_payment', arguments: { payment_id: p } },
    });
    // The suggested call works as sent, and sending it twice does the thing once.
    const call = s.top_items[0].call;
    const first = await h.call(ana, call.tool, call.arguments);
    expect(first.payment.status).toBe('confirmed');
    expect((await h.call(ana, call.tool, call.arguments)).replayed).toBe(true);

    // Invite (targeted): join_group with the code.
    await h.call(bob, 'mark_inbox_read', { all: true });
    const cat = await h.agent('cat');
    await h.call(ana, 'add_contact', { handle: cat.handle });
    const t = (await h.call(ana, 'create_invite', { group_id: g, target_handle: cat.handle })).invite;
    const ci = (await me(cat)).inbox.top_items[0];
    expect(ci).toMatchObject({ kind: 'invite_received', requires_action: true, entity: { type: 'invite', id: t.invite_id } });
    expect(ci.call).toMatchObject({ tool: 'join_group', arguments: { code: t.code } });
    expect((await h.call(cat, ci.call.tool, ci.call.arguments)).group.group_id).toBe(g);

    // News items (bob: cat joined, an expense, a message): a read of their subject.
    const e = (await h.call(ana, 'add_expense', { group_id: g, description: 'Soap', amount_minor: 900 })).expense.expense_id;
    const m = await h.call(ana, 'send_message', { to_handle: bob.handle, body: 'hi' });
    const bi = (await me(bob)).inbox.top_items;
    expect(bi.map((i: any) => i.call.tool).sort()).toEqual(['get_expense', 'get_group', 'list_messages']);
    expect(bi.find((i: any) => i.kind === 'expense_added')).toMatchObject({
      requires_action: false,
      call: { arguments: { expense_id: e } },
    });
    expect(bi.find((i: any) => i.kind === 'message').call.arguments).toEqual({ conversation_id: m.conversation_id });
    expect(bi.find((i: any) => i.kind === 'member_joined').call.arguments).toEqual({ group_id: g });
    for (const i of bi) expect((await h.call(bob, i.call.tool, i.call.arguments)).suggested_next).toBeDefined();

    // A contact added: no group, no entity to read → marking it read.
    const [dan, eve] = [await h.agent('dan'), await h.agent('eve')];
    await h.call(dan, 'add_contact', { handle: eve.handle });
    const ct = (await me(eve)).inbox.top_items[0];
    expect(ct).toMatchObject({ kind: 'contact_added', requires_action: false, call: { tool: 'mark_inbox_read' } });
    expect((await h.call(eve, ct.call.tool, ct.call.arguments)).marked).toBe(1);
  });

  it('is the same on the answer of a batched write (add_expense) as on a read', async () => {
    const { ana, bob, g } = await pair();
    const p = await pay(bob, ana, g);
    const w = await h.call(ana, 'add_expense', { group_id: g, description: 'Tea', amount_minor: 300 });
    expect(w.inbox.top_items[0]).toMatchObject({ call: { tool: 'confirm_payment', arguments: { payment_id: p } } });
    expect(w.inbox).toEqual((await me(ana)).inbox);
  });
});

describe('an item resolved by any path says what happened and no longer counts', () => {
  it('payment confirmed, rejected (by the payee) or cancelled (by the payer)', async () => {
    const { ana, bob, g } = await pair();
    const base = await counters(ana);
    const [p1, p2, p3] = [await pay(bob, ana, g), await pay(bob, ana, g, 200), await pay(bob, ana, g, 300)];
    expect(await counters(ana)).toEqual({ unread: base.unread + 3, requires_action: base.requires_action + 3 });
    await h.call(ana, 'confirm_payment', { payment_id: p1 });
    await h.call(ana, 'reject_payment', { payment_id: p2, reason: 'never came' });
    await h.call(bob, 'cancel_payment', { payment_id: p3 });
    expect(await counters(ana)).toEqual(base);
    expect(await itemAbout(ana, p1)).toMatchObject({ requires_action: false, read: true, resolution: `confirmed by @${ana.handle}` });
    expect(await itemAbout(ana, p2)).toMatchObject({ requires_action: false, read: true, resolution: `rejected by @${ana.handle}` });
    expect(await itemAbout(ana, p3)).toMatchObject({ requires_action: false, read: true, resolution: `cancelled by @${bob.handle}` });
    expect((await itemAbout(ana, p3)).call).toEqual({ tool: 'get_payment', arguments: { payment_id: p3 } });
    expect((await me(ana)).inbox).toBeUndefined();
  });

  it('an item already read stays counted once: resolving it does not drive unread below zero', async () => {
    const { ana, bob, g } = await pair();
    const p = await pay(bob, ana, g);
    await h.call(ana, 'mark_inbox_read', { all: true });
    expect(await counters(ana)).toEqual({ unread: 0, requires_action: 1 });
    await h.call(ana, 'confirm_payment', { payment_id: p });
    expect(await counters(ana)).toEqual({ unread: 0, requires_action: 0 });
  });

  it('invite accepted, declined, revoked, or its group archived', async () => {
    const ana = await h.agent('ana');
    const g = (await h.call(ana, 'create_group', { name: 'Club', currency: 'EUR' })).group.group_id;
    const invitee = async () => {
      const x = await h.agent('x');
      await h.call(ana, 'add_contact', { handle: x.handle });
      const inv = (await h.call(ana, 'create_invite', { group_id: g, target_handle: x.handle })).invite;
      expect(await counters(x)).toMatchObject({ requires_action: 1 });
      return { x, inv };
    };
    const a = await invitee();
    await h.call(a.x, 'join_group', { code: a.inv.code });
    const d = await invitee();
    await h.call(d.x, 'decline_invite', { invite_id: d.inv.invite_id });
    const r = await invitee();
    await h.call(ana, 'revoke_invite', { invite_id: r.inv.invite_id });
    const z = await invitee();
    await h.call(ana, 'archive_group', { group_id: g });
    for (const [who, inv, what] of [
      [a.x, a.inv, `accepted by @${a.x.handle}`],
      [d.x, d.inv, `declined by @${d.x.handle}`],
      [r.x, r.inv, `revoked by @${ana.handle}`],
      [z.x, z.inv, `group archived by @${ana.handle}`],
    ] as const) {
      expect(await itemAbout(who, inv.invite_id)).toMatchObject({ requires_action: false, read: true, resolution: what });
      expect((await counters(who)).requires_action).toBe(0);
      // Only items that still mean something stay unread (e.g. "archived" news), never the invite.
      expect((await me(who)).inbox?.top_items?.some((i: any) => i.entity?.id === inv.invite_id) ?? false).toBe(false);
    }
  });

  it('direct ledger accepted by opening it back', async () => {
    const [ann, bob] = [await h.agent('ann'), await h.agent('bob')];
    await h.call(ann, 'add_contact', { handle: bob.handle });
    await h.call(bob, 'mark_inbox_read', { all: true });
    const opened = await h.call(ann, 'open_direct_group', { handle: bob.handle, currency: 'EUR' });
    const inviteId = opened.acceptance_invite.invite_id;
    const top = (await me(bob)).inbox.top_items[0];
    expect(top).toMatchObject({
      kind: 'invite_received',
      call: { tool: 'join_group', arguments: { code: opened.acceptance_invite.code } },
    });
    await h.call(bob, 'open_direct_group', { handle: ann.handle, currency: 'EUR' });
    expect(await itemAbout(bob, inviteId)).toMatchObject({ requires_action: false, read: true, resolution: `accepted by @${bob.handle}` });
    expect(await counters(bob)).toEqual({ unread: 0, requires_action: 0 });
  });

  it('expense deleted: the unread news about it says so and is read; the deletion itself is the new news', async () => {
    const { ana, bob, g } = await pair();
    await h.call(bob, 'mark_inbox_read', { all: true });
    const e = (await h.call(ana, 'add_expense', { group_id: g, description: 'Oil', amount_minor: 800 })).expense.expense_id;
    expect((await counters(bob)).unread).toBe(1);
    await h.call(ana, 'delete_expense', { expense_id: e });
    const items = (await h.call(bob, 'get_inbox', {})).items.filter((i: any) => i.entity?.id === e);
    expect(items.find((i: any) => i.kind === 'expense_added')).toMatchObject({ read: true, resolution: `deleted by @${ana.handle}` });
    expect(items.find((i: any) => i.kind === 'expense_changed')).toMatchObject({ read: false, resolution: null });
    expect((await counters(bob)).unread).toBe(1);
  });
});

describe('get_inbox', () => {
  it('suggests one call per pending action: two pending payments, two confirm suggestions', async () => {
    const { ana, bob, g } = await pair();
    const p1 = await pay(bob, ana, g, 100);
    const p2 = await pay(bob, ana, g, 200);
    const r = await h.call(ana, 'get_inbox', {});
    const confirms = r.suggested_next.filter((s: string) => s.startsWith('confirm_payment:'));
    expect(confirms).toHaveLength(2);
    expect(confirms[0]).toContain(p1);
    expect(confirms[1]).toContain(p2);
    const open = r.items.filter((i: any) => i.requires_action);
    expect(open.map((i: any) => i.call.tool)).toEqual(['confirm_payment', 'confirm_payment']);
    expect(r.items.every((i: any) => i.resolution === null)).toBe(true);
  });
});

describe('counters stay true under concurrency', () => {
  it('confirming payments while marking everything read: counters equal the rows, each item counted once', async () => {
    const { ana, bob, g } = await pair();
    const ids: string[] = [];
    for (let i = 0; i < 8; i++) ids.push(await pay(bob, ana, g, 10 + i));
    await Promise.all([
      ...ids.map((payment_id, i) => h.call(ana, i % 2 ? 'confirm_payment' : 'reject_payment', { payment_id })),
      h.call(ana, 'mark_inbox_read', { all: true }),
      h.call(ana, 'mark_inbox_read', { all: true }),
    ]);
    const inbox = await inboxRowsAndCounters(h, ana);
    expect(inbox.rows).toEqual(inbox.counters);
    expect(inbox.counters.open).toBe(0);
    expect(inbox.counters.unread).toBe(0);
  });
});

describe('every kind of item carries a call that works', () => {
  it('reads succeed as sent for every item of a busy history; open items carry the write that answers them', async () => {
    const { ana, bob, g } = await pair();
    const cat = await h.agent('cat');
    await h.call(ana, 'add_contact', { handle: cat.handle });
    await h.call(bob, 'add_contact', { handle: cat.handle });
    const declined = (await h.call(ana, 'create_invite', { group_id: g, target_handle: cat.handle })).invite;
    await h.call(cat, 'decline_invite', { invite_id: declined.invite_id });
    const again = (await h.call(ana, 'create_invite', { group_id: g, target_handle: cat.handle })).invite;
    await h.call(cat, 'join_group', { code: again.code });
    const e = (await h.call(ana, 'add_expense', { group_id: g, description: 'Gas', amount_minor: 3000 })).expense.expense_id;
    await h.call(ana, 'update_expense', { expense_id: e, description: 'Gas bill' });
    await h.call(ana, 'confirm_payment', { payment_id: await pay(bob, ana, g, 100) });
    await h.call(ana, 'reject_payment', { payment_id: await pay(bob, ana, g, 100) });
    await h.call(ana, 'set_member_role', { group_id: g, handle: bob.handle, role: 'admin' }).catch(() => undefined);
    await h.call(ana, 'send_message', { group_id: g, body: 'hello all' });
    await pay(bob, ana, g, 100); // left open
    const seen = new Set<string>();
    for (const who of [ana, bob, cat]) {
      for (const item of (await h.call(who, 'get_inbox', { limit: 100 })).items) {
        seen.add(item.kind);
        const { tool, arguments: args } = item.call;
        if (item.requires_action) {
          expect(['confirm_payment', 'join_group']).toContain(tool);
          expect(args.idempotency_key).toBe(`inbox-${item.item_id}`);
        } else if (tool !== 'mark_inbox_read') {
          expect(tool, item.kind).toMatch(/^(get_|list_)/);
          const r = await h.call(who, tool, args);
          expect(r.suggested_next, `${item.kind} → ${tool}`).toBeDefined();
        }
      }
    }
    for (const kind of [
      'payment_to_confirm',
      'payment_confirmed',
      'payment_rejected',
      'expense_added',
      'expense_changed',
      'invite_received',
      'invite_declined',
      'member_joined',
      'message',
      'contact_added',
    ])
      expect(seen, kind).toContain(kind);
  });
});

it('a read-only credential is pointed at a read, not at a write it cannot call', async () => {
  const { ana, bob, g } = await pair();
  const p = await pay(bob, ana, g);
  const readOnly = { ...ana, auth: { ...ana.auth, scopes: ['svc:read'] } };
  const top = (await me(readOnly)).inbox.top_items[0];
  expect(top).toMatchObject({ requires_action: true, call: { tool: 'get_payment', arguments: { payment_id: p } } });
  expect((await me(ana)).inbox.top_items[0].call.tool).toBe('confirm_payment');
});
