/**
 * The event log: one event per recipient per change, in the same transaction, in order; the
 * audience rules (outsider, departed, removed, wrong payment party); cursors that nothing can
 * commit behind; long polling; pruning.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createHarness, type Harness, type TestAgent } from '../harness.ts';
import { groupWith } from '../ledger-helpers.ts';
import { pruneEvents, runRecurrences } from '../../src/index.ts';

let h: Harness;
beforeAll(async () => {
  h = await createHarness();
});
afterAll(async () => {
  await h?.close();
});

type Ev = {
  event_id: string;
  type: string;
  group_id: string | null;
  actor: { handle: string } | null;
  data: any;
  inbox_item_id: string | null;
};

/** Every event of `a` (all pages). */
async function feed(a: TestAgent, after?: string): Promise<Ev[]> {
  const out: Ev[] = [];
  let cursor = after;
  for (;;) {
    const r = await h.call(a, 'list_events', { ...(cursor ? { after: cursor } : {}), limit: 100 });
    out.push(...r.events);
    if (r.events.length < 100) return out;
    cursor = r.next_cursor;
  }
}

describe('events: recipients, order, atomicity', () => {
  it('one event per recipient per change, same id for everyone, in order, linked to the inbox item', async () => {
    const [ann, bob, cid, dan] = await Promise.all(['ann', 'bob', 'cid', 'dan'].map((p) => h.agent(p)));
    const g = await groupWith(h, [ann!, bob!, cid!, dan!]);
    const before = await Promise.all([ann, bob, cid, dan].map((a) => feed(a!)));
    const marks = before.map((f) => f.at(-1)?.event_id);
    const x = await h.call(ann!, 'add_expense', { group_id: g, description: 'Dinner', amount_minor: 4000 });
    const after = await Promise.all([ann, bob, cid, dan].map((a, i) => feed(a!, marks[i])));
    for (const f of after) {
      expect(f.map((e) => e.type)).toEqual(['expense.created']);
      expect(f[0]!.data).toMatchObject({ expense_id: x.expense.expense_id, amount_minor: '4000', currency: 'EUR', description: 'Dinner' });
      expect(f[0]!.actor?.handle).toBe(ann!.handle);
      expect(f[0]!.group_id).toBe(g);
    }
    expect(new Set(after.map((f) => f[0]!.event_id)).size).toBe(1);
    // The actor got no inbox item; the others' events name theirs.
    expect(after[0]![0]!.inbox_item_id).toBeNull();
    const inbox = await h.call(bob!, 'get_inbox', {});
    const item = inbox.items.find((i: { entity_id?: string }) => i.entity_id === x.expense.expense_id);
    expect(after[1]![0]!.inbox_item_id).toBe(item?.item_id ?? item?.inbox_item_id ?? after[1]![0]!.inbox_item_id);
    expect(after[1]![0]!.inbox_item_id).not.toBeNull();

    // A sequence: every member sees the same changes in the same order.
    const m2 = after.map((f) => f.at(-1)!.event_id);
    await h.call(bob!, 'update_expense', { expense_id: x.expense.expense_id, description: 'Dinner!' });
    await h.call(ann!, 'update_group', { group_id: g, name: 'Trip 2' });
    await h.call(cid!, 'delete_expense', { expense_id: x.expense.expense_id });
    await h.call(cid!, 'restore_expense', { expense_id: x.expense.expense_id });
    await h.call(ann!, 'set_member_role', { group_id: g, handle: dan!.handle, role: 'admin' });
    const seq = await Promise.all([ann, bob, cid, dan].map((a, i) => feed(a!, m2[i])));
    for (const f of seq)
      expect(f.map((e) => e.type)).toEqual([
        'expense.updated',
        'group.updated',
        'expense.deleted',
        'expense.restored',
        'member.role_changed',
      ]);
    expect(seq[0]!.map((e) => e.event_id)).toEqual(seq[3]!.map((e) => e.event_id));
    expect([...seq[0]!.map((e) => e.event_id)].sort()).toEqual(seq[0]!.map((e) => e.event_id));
    expect(seq[0]![1]!.data).toEqual({ group_id: g, name: 'Trip 2' });
  });

  it('a refused write appends nothing; a replay appends nothing', async () => {
    const [ann, bob] = await Promise.all([h.agent('ann'), h.agent('bob')]);
    const g = await groupWith(h, [ann, bob]);
    const mark = (await feed(bob)).at(-1)!.event_id;
    await h.fail(ann, 'add_expense', { group_id: g, description: 'X', amount_minor: 100, split: { method: 'exact', shares: [] } });
    const args = { group_id: g, description: 'Once', amount_minor: 100, idempotency_key: 'events-replay-1' };
    await h.call(ann, 'add_expense', args);
    await h.call(ann, 'add_expense', args);
    expect((await feed(bob, mark)).map((e) => e.type)).toEqual(['expense.created']);
  });

  it('concurrent writes: the same call 20 times is one event; 20 different calls are 20 events in one order for everyone', async () => {
    const [ann, bob, cid] = await Promise.all([h.agent('ann'), h.agent('bob'), h.agent('cid')]);
    const g = await groupWith(h, [ann, bob, cid]);
    const marks = await Promise.all([ann, bob, cid].map(async (a) => (await feed(a)).at(-1)!.event_id));
    const same = { group_id: g, description: 'Same', amount_minor: 300, idempotency_key: 'events-same-20' };
    await Promise.all(Array.from({ length: 20 }, () => h.call(ann, 'add_expense', same).catch(() => undefined)));
    await Promise.all(
      Array.from({ length: 20 }, (_, i) =>
        h.call([ann, bob, cid][i % 3]!, 'add_expense', { group_id: g, description: `C${i}`, amount_minor: 300 + i }),
      ),
    );
    const feeds = await Promise.all([ann, bob, cid].map((a, i) => feed(a, marks[i])));
    for (const f of feeds) {
      expect(f.filter((e) => e.data.description === 'Same')).toHaveLength(1);
      expect(f).toHaveLength(21);
      expect(new Set(f.map((e) => e.data.description)).size).toBe(21);
    }
    expect(feeds[1]!.map((e) => e.event_id)).toEqual(feeds[0]!.map((e) => e.event_id));
    expect(feeds[2]!.map((e) => e.event_id)).toEqual(feeds[0]!.map((e) => e.event_id));
  });

  it('a refused interactive write appends nothing', async () => {
    const [ann, bob] = await Promise.all([h.agent('ann'), h.agent('bob')]);
    const g = await groupWith(h, [ann, bob]);
    await h.call(ann, 'add_expense', { group_id: g, description: 'Debt', amount_minor: 500 });
    const mark = (await feed(bob)).at(-1)!.event_id;
    expect((await h.fail(ann, 'remove_member', { group_id: g, handle: bob.handle })).kittyCode).toBe('NOT_SETTLED');
    expect((await h.fail(bob, 'leave_group', { group_id: g })).kittyCode).toBe('NOT_SETTLED');
    expect(await feed(bob, mark)).toEqual([]);
    expect(await feed(ann, mark)).toEqual([]);
  });

  it('nothing commits behind a cursor: events of a running transaction hold back later ones until it ends', async () => {
    const [ann, bob] = await Promise.all([h.agent('ann'), h.agent('bob')]);
    const g = await groupWith(h, [ann, bob]);
    const mark = (await feed(bob)).at(-1)!.event_id;
    const client = await h.services.pool.connect();
    try {
      await client.query('BEGIN');
      await client.query('SELECT kitty_append_events($1::jsonb)', [
        JSON.stringify([
          { type: 'group.updated', group_id: g, actor_id: ann.agentId, data: { group_id: g, probe: 1 }, recipients: [bob.agentId] },
        ]),
      ]);
      // A later transaction commits first: its event is not shown while the older one may still commit.
      await h.call(ann, 'add_expense', { group_id: g, description: 'Later', amount_minor: 100 });
      expect(await feed(bob, mark)).toEqual([]);
      await client.query('COMMIT');
    } finally {
      client.release();
    }
    const f = await feed(bob, mark);
    expect(f.map((e) => e.type)).toEqual(['group.updated', 'expense.created']);
  });
});

describe('events: who receives what', () => {
  it('outsider, departed, removed and the wrong payment party never receive', async () => {
    const [ann, bob, cid, dan, eve, out] = await Promise.all(['ann', 'bob', 'cid', 'dan', 'eve', 'out'].map((p) => h.agent(p)));
    const g = await groupWith(h, [ann!, bob!, cid!, dan!, eve!]);
    const marks = new Map<string, string | undefined>();
    for (const a of [ann, bob, cid, dan, eve, out]) marks.set(a!.handle, (await feed(a!)).at(-1)?.event_id);
    const since = (a: TestAgent) => feed(a, marks.get(a.handle));

    await h.call(dan!, 'leave_group', { group_id: g });
    await h.call(ann!, 'remove_member', { group_id: g, handle: eve!.handle });
    const x = await h.call(ann!, 'add_expense', { group_id: g, description: 'After', amount_minor: 3000 });
    const p = await h.call(bob!, 'record_payment', { group_id: g, to_handle: ann!.handle, amount_minor: 100 });
    await h.call(ann!, 'confirm_payment', { payment_id: p.payment.payment_id });
    const q = await h.call(bob!, 'record_payment', { group_id: g, to_handle: ann!.handle, amount_minor: 50 });
    await h.call(ann!, 'reject_payment', { payment_id: q.payment.payment_id, reason: 'no' });
    const r = await h.call(bob!, 'record_payment', { group_id: g, to_handle: ann!.handle, amount_minor: 10 });
    await h.call(bob!, 'cancel_payment', { payment_id: r.payment.payment_id });
    await h.call(ann!, 'send_message', { group_id: g, body: 'hello group' });
    await h.call(ann!, 'archive_group', { group_id: g }).catch(() => undefined);

    const types = async (a: TestAgent) => (await since(a)).map((e) => e.type);
    const party = [
      'payment.recorded',
      'payment.confirmed',
      'payment.recorded',
      'payment.rejected',
      'payment.recorded',
      'payment.cancelled',
    ];
    expect(await types(ann!)).toEqual(['member.left', 'member.removed', 'expense.created', ...party]);
    expect(await types(bob!)).toEqual(['member.left', 'member.removed', 'expense.created', ...party, 'message.received']);
    expect(await types(cid!)).toEqual(['member.left', 'member.removed', 'expense.created', 'message.received']);
    expect(await types(dan!)).toEqual(['member.left']);
    expect(await types(eve!)).toEqual(['member.left', 'member.removed']);
    expect(await types(out!)).toEqual([]);
    const cidEvents = await since(cid!);
    expect(cidEvents.find((e) => e.type === 'expense.created')!.data.expense_id).toBe(x.expense.expense_id);
    const rejected = (await since(bob!)).find((e) => e.type === 'payment.rejected')!;
    expect(rejected.data).toMatchObject({ payment_id: q.payment.payment_id, amount_minor: '50', status: 'rejected', reason: 'no' });
  });

  it('invites, declines and revocations reach the invitee and the inviter only', async () => {
    const [ann, bob, cid] = await Promise.all([h.agent('ann'), h.agent('bob'), h.agent('cid')]);
    const g = await groupWith(h, [ann, cid]);
    await h.call(ann, 'add_contact', { handle: bob.handle }).catch(() => undefined);
    await h.call(bob, 'add_contact', { handle: ann.handle }).catch(() => undefined);
    const marks = await Promise.all([ann, bob, cid].map(async (a) => (await feed(a)).at(-1)?.event_id));
    const inv = await h.call(ann, 'create_invite', { group_id: g, target_handle: bob.handle });
    await h.call(bob, 'decline_invite', { invite_id: inv.invite.invite_id });
    const inv2 = await h.call(ann, 'create_invite', { group_id: g, target_handle: bob.handle });
    await h.call(ann, 'revoke_invite', { invite_id: inv2.invite.invite_id });
    const [fa, fb, fc] = await Promise.all([ann, bob, cid].map((a, i) => feed(a, marks[i])));
    expect(fb!.map((e) => e.type)).toEqual(['invite.received', 'invite.declined', 'invite.received', 'invite.revoked']);
    expect(fb![0]!.inbox_item_id).not.toBeNull();
    expect(fa!.map((e) => e.type)).toEqual(['invite.declined', 'invite.revoked']);
    expect(fc).toEqual([]);
  });
});

describe('events: recurring occurrences, direct ledgers, messages', () => {
  it('each recurring occurrence is an expense.created for every member, once, with its series and index', async () => {
    const [ann, bob] = await Promise.all([h.agent('ann'), h.agent('bob')]);
    const g = await groupWith(h, [ann, bob]);
    const mark = (await feed(bob)).at(-1)!.event_id;
    const start = new Date(Date.now() - 2 * 86_400_000).toISOString().slice(0, 10);
    const first = await h.call(ann, 'add_expense', {
      group_id: g,
      description: 'Rent',
      amount_minor: 900,
      date: start,
      repeat: { unit: 'day' },
    });
    await Promise.all([runRecurrences(h.services), runRecurrences(h.services)]);
    for (const a of [ann, bob]) {
      const f = (await feed(a, mark)).filter((e) => e.type === 'expense.created');
      expect(f.map((e) => e.data.occurrence_index)).toEqual([0, 1, 2]);
      expect(new Set(f.map((e) => e.data.recurrence_id)).size).toBe(1);
      expect(f[0]!.data.expense_id).toBe(first.expense.expense_id);
    }
  });

  it('direct ledger requests and acceptance reach both agents; a message reaches its addressee only', async () => {
    const [ann, bob, cid] = await Promise.all([h.agent('ann'), h.agent('bob'), h.agent('cid')]);
    await groupWith(h, [ann, bob]);
    const marks = await Promise.all([ann, bob, cid].map(async (a) => (await feed(a)).at(-1)?.event_id));
    await h.call(ann, 'open_direct_group', { handle: bob.handle, currency: 'USD' });
    await h.call(bob, 'open_direct_group', { handle: ann.handle, currency: 'USD' });
    await h.call(ann, 'send_message', { to_handle: bob.handle, body: 'hi bob' });
    const [fa, fb, fc] = await Promise.all([ann, bob, cid].map((a, i) => feed(a, marks[i])));
    expect(fa!.map((e) => e.type)).toEqual(['direct_ledger.requested', 'member.joined', 'direct_ledger.accepted']);
    expect(fb!.map((e) => e.type)).toEqual(['direct_ledger.requested', 'member.joined', 'direct_ledger.accepted', 'message.received']);
    expect(fb!.at(-1)!.data.body).toBe('hi bob');
    expect(fb!.at(-1)!.inbox_item_id).not.toBeNull();
    expect(fc).toEqual([]);
  });
});

describe('list_events', () => {
  it('filters by type, pages with next_cursor, refuses a bad cursor', async () => {
    const [ann, bob] = await Promise.all([h.agent('ann'), h.agent('bob')]);
    const g = await groupWith(h, [ann, bob]);
    for (let i = 0; i < 5; i++) await h.call(ann, 'add_expense', { group_id: g, description: `E${i}`, amount_minor: 100 + i });
    const only = await h.call(bob, 'list_events', { types: ['expense.created'], limit: 3 });
    expect(only.events.map((e: Ev) => e.data.description)).toEqual(['E0', 'E1', 'E2']);
    const rest = await h.call(bob, 'list_events', { types: ['expense.created'], after: only.next_cursor });
    expect(rest.events.map((e: Ev) => e.data.description)).toEqual(['E3', 'E4']);
    const end = await h.call(bob, 'list_events', { after: rest.next_cursor });
    expect(end).toMatchObject({ events: [], next_cursor: rest.next_cursor });
    const bad = await h.fail(bob, 'list_events', { after: 'evt_nope' });
    expect(bad.kittyCode).toBe('VALIDATION_ERROR');
    expect(JSON.stringify(bad.details)).toContain('after');
    expect((await h.fail(bob, 'list_events', { wait_seconds: 31 })).kittyCode).toBe('VALIDATION_ERROR');
    expect((await h.fail(bob, 'list_events', { types: ['nope'] })).kittyCode).toBe('VALIDATION_ERROR');
  });

  it('wait_seconds returns as soon as an event arrives', async () => {
    const [ann, bob] = await Promise.all([h.agent('ann'), h.agent('bob')]);
    const g = await groupWith(h, [ann, bob]);
    const mark = (await feed(bob)).at(-1)!.event_id;
    const t0 = Date.now();
    const waiting = h.call(bob, 'list_events', { after: mark, wait_seconds: 20 });
    await new Promise((r) => setTimeout(r, 300));
    await h.call(ann, 'add_expense', { group_id: g, description: 'Now', amount_minor: 100 });
    const r = await waiting;
    expect(r.events.map((e: Ev) => e.type)).toEqual(['expense.created']);
    expect(Date.now() - t0).toBeLessThan(5000);
  });

  it('pruning deletes old events and their recipients in batches', async () => {
    const [ann] = await Promise.all([h.agent('ann')]);
    await h.call(ann, 'create_group', { name: 'P', currency: 'EUR' });
    // A webhook delivery record goes with the events (the endpoint stays).
    h.services.resolveHost = async () => [{ address: '93.184.216.34', family: 4 }];
    const hook = (await h.call(ann, 'create_webhook', { url: 'https://hooks.example/p' })).webhook;
    delete h.services.resolveHost;
    await h.call(ann, 'test_webhook', { webhook_id: hook.webhook_id });
    const n = await pruneEvents(h.services.prisma, new Date(Date.now() + 60_000), { batch: 7 });
    expect(n).toBeGreaterThan(7);
    const left = await h.services.pool.query(
      'SELECT (SELECT count(*) FROM events)::int AS e, (SELECT count(*) FROM event_recipients)::int AS r',
    );
    expect(left.rows[0]).toEqual({ e: 0, r: 0 });
    expect((await h.call(ann, 'list_events', {})).events).toEqual([]);
    const hooks = (await h.call(ann, 'list_webhooks', {})).webhooks;
    expect(hooks.map((x: { webhook_id: string }) => x.webhook_id)).toEqual([hook.webhook_id]);
    expect(hooks[0].recent_deliveries).toEqual([]);
  });
});
