/**
 * Wake-ups after COMMIT (kernel/wakes.ts, migration 20261126002000_notify_after_commit): a batched write sends no
 * NOTIFY from inside its transaction (kitty_apply_batch_quiet), and right after it commits the same notifications
 * arrive — the event recipients on kitty_events, every member whose inbox counters changed on kitty_inbox — so SSE,
 * long polls and the inbox caches of every instance wake as before.
 */
import type { PoolClient } from 'pg';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { createHarness, type Harness } from '../harness.ts';
import { groupWith } from '../ledger-helpers.ts';

let h: Harness;
let listener: PoolClient;
const heard: Array<{ channel: string; payload: string }> = [];
beforeAll(async () => {
  h = await createHarness();
  listener = await h.services.pool.connect();
  listener.on('notification', (n) => heard.push({ channel: n.channel, payload: n.payload ?? '' }));
  await listener.query('LISTEN kitty_events');
  await listener.query('LISTEN kitty_inbox');
});
afterAll(async () => {
  listener?.release();
  await h?.close();
});

const settle = () => new Promise((r) => setTimeout(r, 300));

it('a batched write wakes the event recipients and the changed inboxes, after its commit', async () => {
  const [ann, bob, cid] = await Promise.all(['ann', 'bob', 'cid'].map((p) => h.agent(p)));
  const g = await groupWith(h, [ann!, bob!, cid!]);
  await settle();
  heard.length = 0;
  await h.call(ann!, 'add_expense', { group_id: g, description: 'Dinner', amount_minor: 3000 });
  await settle();
  const events = heard.filter((n) => n.channel === 'kitty_events');
  expect(events).toHaveLength(1);
  expect(new Set(events[0]!.payload.split(','))).toEqual(new Set([ann!.agentId, bob!.agentId, cid!.agentId]));
  const inbox = new Set(heard.filter((n) => n.channel === 'kitty_inbox').map((n) => n.payload));
  // bob and cid got an inbox item; ann's inbox (the actor's) did not change, so her cached summary stays
  expect(inbox).toEqual(new Set([bob!.agentId, cid!.agentId]));
});

it('a write that resolves an action item also wakes the actor and the event recipients (their counters change in the database)', async () => {
  const [ann, bob, cid] = await Promise.all(['ann', 'bob', 'cid'].map((p) => h.agent(p)));
  const g = await groupWith(h, [ann!, bob!, cid!]);
  const pay = await h.call(ann!, 'record_payment', { group_id: g, to_handle: bob!.handle, amount_minor: 500, allow_overpayment: true });
  await settle();
  heard.length = 0;
  await h.call(bob!, 'confirm_payment', { payment_id: pay.payment.payment_id });
  await settle();
  const inbox = new Set(heard.filter((n) => n.channel === 'kitty_inbox').map((n) => n.payload));
  // bob's "confirm this payment" item was resolved (his counters drop): he is woken, as is ann (told it was confirmed)
  expect(inbox).toContain(bob!.agentId);
  expect(inbox).toContain(ann!.agentId);
});

it('kitty_apply_batch_quiet sends nothing from inside the write; kitty_apply_batch (interactive paths) still does', async () => {
  const ann = await h.agent('ann');
  const doc = JSON.stringify({
    events: [{ type: 'group.updated', group_id: null, actor_id: ann.agentId, data: {}, recipients: [ann.agentId] }],
    counters: [{ agent_id: ann.agentId, unread: 1, requires_action: 0 }],
  });
  await settle();
  heard.length = 0;
  await h.services.pool.query('SELECT kitty_apply_batch_quiet($1::jsonb)', [doc]);
  await settle();
  expect(heard).toEqual([]);
  await h.services.pool.query('SELECT kitty_apply_batch($1::jsonb)', [doc]);
  await settle();
  expect([...heard].sort((a, b) => a.channel.localeCompare(b.channel))).toEqual([
    { channel: 'kitty_events', payload: ann.agentId },
    { channel: 'kitty_inbox', payload: ann.agentId },
  ]);
});

it('wake-ups of concurrent writes share statements, and each write learns when its own were sent', async () => {
  const { WakeSender } = await import('../../src/kernel/wakes.ts');
  const sent: Array<{ events: string; inbox: string[] }> = [];
  let release: (() => void) | undefined;
  const pool = {
    query: async (q: { values: [string, string[]] }) => {
      sent.push({ events: q.values[0], inbox: [...q.values[1]].sort() });
      if (sent.length === 1) await new Promise<void>((r) => (release = r)); // the first statement is slow to answer
      return { rows: [] };
    },
  };
  const sender = new WakeSender(pool as never);
  const wake = (events: string[], inbox: string[]) => sender.send({ events: new Set(events), inbox: new Set(inbox) });
  let firstDone = false;
  const first = wake(['a'], ['a']).then(() => (firstDone = true));
  // While the first statement is on its way, three more writes commit: they wait for one statement between them.
  const rest = [wake(['b', 'c'], ['b']), wake([], ['c', 'b']), wake(['d'], [])];
  await new Promise((r) => setTimeout(r, 20));
  expect(sent).toHaveLength(1);
  expect(firstDone).toBe(false);
  release!();
  await Promise.all([first, ...rest]);
  expect(sent).toEqual([
    { events: 'a', inbox: ['a'] },
    { events: 'b,c,d', inbox: ['b', 'c'] },
  ]);
  // Nothing to wake: no statement at all.
  await sender.send({ events: new Set(), inbox: new Set() });
  expect(sent).toHaveLength(2);
});

it('with a local route that says local, wake-ups go to this process alone (no statement); otherwise through PostgreSQL', async () => {
  const { WakeSender } = await import('../../src/kernel/wakes.ts');
  const sent: unknown[] = [];
  const sender = new WakeSender({ query: async (q: unknown) => (sent.push(q), { rows: [] }) } as never);
  const delivered: Array<[string, string]> = [];
  let local = true;
  sender.route = { local: () => local, deliver: (channel, payload) => void delivered.push([channel, payload]) };
  await sender.send({ events: new Set(['a', 'b']), inbox: new Set(['a', 'c']) });
  expect(sent).toEqual([]);
  expect(delivered).toEqual([
    ['kitty_events', 'a,b'],
    ['kitty_inbox', 'a'],
    ['kitty_inbox', 'c'],
  ]);
  // Past 150 recipients, '*' as through PostgreSQL; no event recipients: no kitty_events notification.
  delivered.length = 0;
  await sender.send({ events: new Set(Array.from({ length: 151 }, (_, i) => `x${i}`)), inbox: new Set() });
  await sender.send({ events: new Set(), inbox: new Set(['d']) });
  expect(delivered).toEqual([
    ['kitty_events', '*'],
    ['kitty_inbox', 'd'],
  ]);
  local = false;
  delivered.length = 0;
  await sender.send({ events: new Set(['a']), inbox: new Set(['a']) });
  expect(delivered).toEqual([]);
  expect(sent).toHaveLength(1);
});
