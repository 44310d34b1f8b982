/**
 * The caller's inbox summary on a batched write's answer (core kernel/caller-summary.ts): a write that cannot change
 * the caller's inbox answers with the summary the instance has cached (the statement reads none), and a summary the
 * statement did read is kept for the next call; a write that changes the caller's inbox always answers what the
 * database holds after it.
 */
import pg from 'pg';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { groupOfTwo, startTestServer, type TestServer } from '../server-harness.ts';
import { eventually } from '../eventually.ts';

let s: TestServer;
beforeAll(async () => {
  s = await startTestServer();
});
afterAll(async () => {
  await s?.close();
});

const pair = () => groupOfTwo(s);

/** ann records one pending payment to bo per amount (minor units), oldest first: bo gets a request to confirm each. */
async function paymentsToBo({ ann, bo, g }: Awaited<ReturnType<typeof pair>>, amounts: number[]) {
  const pays = [];
  for (const amount_minor of amounts)
    pays.push(await ann.client.record_payment({ group_id: g, to_handle: bo.handle, amount_minor, allow_overpayment: true }));
  return pays;
}

it('a write that leaves the caller inbox alone answers with the cached summary, the same one the database holds', async () => {
  const { ann, bo, g } = await pair();
  // ann has one unread item (bo joined); her summary is read and cached by get_me.
  const me = await ann.client.get_me();
  expect(me.inbox?.unread).toBeGreaterThan(0);
  const writeHits = s.kitty.inboxCache.stats.writeHits;
  const first = await ann.client.add_expense({ group_id: g, description: 'Bread', amount_minor: 350 });
  expect(s.kitty.inboxCache.stats.writeHits).toBe(writeHits + 1);
  expect(first.inbox).toEqual(me.inbox);
  // Nothing about ann changed: the next write answers from the cache too.
  const second = await ann.client.add_expense({ group_id: g, description: 'Milk', amount_minor: 120 });
  expect(s.kitty.inboxCache.stats.writeHits).toBe(writeHits + 2);
  expect(second.inbox).toEqual(me.inbox);

  // bo's message to ann changes her inbox (a trigger's notification drops her cached summary): her next write
  // answers what the database holds, read by its own statement.
  await ann.client.add_contact({ handle: bo.handle });
  await bo.client.add_contact({ handle: ann.handle });
  await bo.client.send_message({ to_handle: ann.handle, body: 'rent is due' });
  const after = await eventually(
    () => ann.client.add_expense({ group_id: g, description: 'Eggs', amount_minor: 200 }),
    (r) => (r.inbox?.unread ?? 0) > (me.inbox?.unread ?? 0),
    2000,
  );
  const fresh = await ann.client.get_me();
  expect(after.inbox?.unread).toBe(fresh.inbox?.unread);
  expect(after.inbox?.unread).toBeGreaterThan(me.inbox?.unread ?? 0);
});

it('a summary a write read is kept: the next write and read of the same caller use it', async () => {
  const { ann, bo, g } = await pair();
  await ann.client.add_contact({ handle: bo.handle });
  await bo.client.add_contact({ handle: ann.handle });
  // bo's message changes ann's inbox: its notification drops whatever summary of hers was cached.
  await bo.client.send_message({ to_handle: ann.handle, body: 'hello' });
  await eventually(
    async () => s.kitty.inboxCache.peek(ann.agentId),
    (v) => v === undefined,
    2000,
  );
  const writeHits = s.kitty.inboxCache.stats.writeHits;
  const hits = s.kitty.inboxCache.stats.hits;
  // The first write reads it in its statement (nothing cached), and keeps it.
  const first = await ann.client.add_expense({ group_id: g, description: 'Tea', amount_minor: 300 });
  expect(first.inbox?.unread).toBeGreaterThan(0);
  expect(s.kitty.inboxCache.stats.writeHits).toBe(writeHits);
  const second = await ann.client.add_expense({ group_id: g, description: 'Coffee', amount_minor: 300 });
  expect(s.kitty.inboxCache.stats.writeHits).toBe(writeHits + 1);
  expect(second.inbox).toEqual(first.inbox);
  expect((await ann.client.get_me()).inbox).toEqual(first.inbox);
  expect(s.kitty.inboxCache.stats.hits).toBe(hits + 1);
});

it('a write that changes the caller inbox answers what the database holds after it, never the cached summary', async () => {
  const { ann, bo, g } = await pair();
  await bo.client.mark_inbox_read({ all: true });
  const pay = await ann.client.record_payment({ group_id: g, to_handle: bo.handle, amount_minor: 500, allow_overpayment: true });
  // bo has one action item (confirm the payment); his summary is cached.
  const before = await eventually(
    () => bo.client.get_me(),
    (r) => r.inbox?.requires_action === 1,
    2000,
  );
  expect(before.inbox?.requires_action).toBe(1);
  const writeHits = s.kitty.inboxCache.stats.writeHits;
  // Confirming resolves that item: the answer shows it gone, read by the write's own statement.
  const confirmed = await bo.client.confirm_payment({ payment_id: pay.payment.payment_id });
  expect(s.kitty.inboxCache.stats.writeHits).toBe(writeHits);
  expect(confirmed.inbox?.requires_action ?? 0).toBe(0);
  expect((await bo.client.get_me()).inbox?.requires_action ?? 0).toBe(0);
});

it("a cancel_payment by the payer answers with the payer's cached summary: only the payee's confirmation request is resolved", async () => {
  const { ann, bo, g } = await pair();
  const pay = await ann.client.record_payment({ group_id: g, to_handle: bo.handle, amount_minor: 400, allow_overpayment: true });
  const annBefore = await ann.client.get_me(); // ann's summary read and cached
  const boBefore = await eventually(
    () => bo.client.get_me(),
    (r) => r.inbox?.requires_action === 1,
    2000,
  );
  expect(boBefore.inbox?.requires_action).toBe(1);
  const writeHits = s.kitty.inboxCache.stats.writeHits;
  const cancelled = await ann.client.cancel_payment({ payment_id: pay.payment.payment_id });
  expect(s.kitty.inboxCache.stats.writeHits).toBe(writeHits + 1);
  expect(cancelled.inbox).toEqual(annBefore.inbox);
  expect((await ann.client.get_me()).inbox).toEqual(annBefore.inbox);
  // bo's request to confirm is resolved by the same write.
  const boAfter = await eventually(
    () => bo.client.get_me(),
    (r) => (r.inbox?.requires_action ?? 0) === 0,
    2000,
  );
  expect(boAfter.inbox?.requires_action ?? 0).toBe(0);
});

it("cancel_payments by the payer one after another all answer from the cache: a cancel wakes only the payee's inbox", async () => {
  const two = await pair();
  const { ann, bo } = two;
  const pays = await paymentsToBo(two, [100, 200, 300]);
  const annBefore = await ann.client.get_me(); // ann's summary read and cached
  const writeHits = s.kitty.inboxCache.stats.writeHits;
  for (const [i, pay] of pays.entries()) {
    const cancelled = await ann.client.cancel_payment({ payment_id: pay.payment.payment_id });
    expect(cancelled.inbox).toEqual(annBefore.inbox);
    expect(s.kitty.inboxCache.stats.writeHits).toBe(writeHits + i + 1);
  }
  // The cached summary is still what the database holds; bo's three requests to confirm are resolved.
  const fresh = await s.kitty.inboxCache.get(ann.agentId, { fresh: true });
  expect(fresh ?? null).toEqual(annBefore.inbox ?? null);
  const boAfter = await eventually(
    () => bo.client.get_me(),
    (r) => (r.inbox?.requires_action ?? 0) === 0,
    2000,
  );
  expect(boAfter.inbox?.requires_action ?? 0).toBe(0);
});

it("a payee confirming payments below their summary's top items answers with the cached summary brought up to date, equal to what the database holds", async () => {
  const two = await pair();
  const { bo } = two;
  const pays = await paymentsToBo(two, [100, 200, 300, 400, 500, 600]);
  await bo.client.mark_inbox_read({ all: true });
  // Six confirmation requests; the summary's top items are the three newest.
  const before = await eventually(
    () => bo.client.get_me(),
    (r) => r.inbox?.requires_action === 6 && r.inbox.unread === 0,
    2000,
  );
  const top = before.inbox!.top_items.map((i) => i.item_id);
  expect(top).toHaveLength(3);
  // Wake-ups go to this instance alone once it has looked for other listeners (runtime/local-wakes.ts).
  await eventually(
    async () => s.kitty.localWakes.local(),
    (v) => v,
    3000,
  );
  const kept = s.kitty.inboxCache.stats.writeKept;
  // The three oldest, one after another: each statement answers only the counts, and what it answers is cached again.
  for (const [i, pay] of pays.slice(0, 3).entries()) {
    const confirmed = await bo.client.confirm_payment({ payment_id: pay.payment.payment_id });
    expect(s.kitty.inboxCache.stats.writeKept).toBe(kept + i + 1);
    expect(confirmed.inbox).toEqual({ ...before.inbox, requires_action: 5 - i });
    expect(s.kitty.inboxCache.peek(bo.agentId, 'base')).toEqual(confirmed.inbox);
    expect((await s.kitty.inboxCache.get(bo.agentId, { fresh: true })) ?? null).toEqual(confirmed.inbox);
  }
  // A top item confirmed: the statement reads the summary (the next item moves up), and the answer is what it read.
  const newest = await bo.client.confirm_payment({ payment_id: pays[5]!.payment.payment_id });
  expect(s.kitty.inboxCache.stats.writeKept).toBe(kept + 3);
  expect(newest.inbox?.requires_action).toBe(2);
  expect(newest.inbox?.top_items.map((i) => i.item_id)).toEqual(top.slice(1));
  expect((await s.kitty.inboxCache.get(bo.agentId, { fresh: true })) ?? null).toEqual(newest.inbox);
});

it('a cached summary that no longer holds is not brought up to date: a change it missed makes the statement read the summary', async () => {
  const two = await pair();
  const { ann, bo, g } = two;
  const pays = await paymentsToBo(two, [100, 200, 300, 400]);
  await bo.client.mark_inbox_read({ all: true });
  await eventually(
    () => bo.client.get_me(),
    (r) => r.inbox?.requires_action === 4 && r.inbox.unread === 0,
    2000,
  );
  const cached = s.kitty.inboxCache.peek(bo.agentId, 'base');
  expect(cached?.requires_action).toBe(4);
  // A fifth request arrives while this instance has not heard of it: its cached summary is put back as it was.
  const fifth = await ann.client.record_payment({ group_id: g, to_handle: bo.handle, amount_minor: 500, allow_overpayment: true });
  s.kitty.inboxCache.remember(bo.agentId, cached!, s.kitty.inboxCache.mark(bo.agentId));
  expect(s.kitty.inboxCache.peek(bo.agentId, 'base')).toEqual(cached);
  const kept = s.kitty.inboxCache.stats.writeKept;
  // The oldest is confirmed: the counts the statement sees are not the cached ones plus this change, so it reads.
  const confirmed = await bo.client.confirm_payment({ payment_id: pays[0]!.payment.payment_id });
  expect(s.kitty.inboxCache.stats.writeKept).toBe(kept);
  expect(confirmed.inbox?.requires_action).toBe(4);
  expect(confirmed.inbox?.unread).toBe(1);
  expect(confirmed.inbox?.top_items[0]?.entity?.id).toBe(fifth.payment.payment_id);
  expect((await s.kitty.inboxCache.get(bo.agentId, { fresh: true })) ?? null).toEqual(confirmed.inbox);
});

it("with another instance listening (wake-ups through PostgreSQL), a kept summary is right and the write's own notification drops its entry", async () => {
  const two = await pair();
  const { bo } = two;
  const pays = await paymentsToBo(two, [100, 200, 300, 400]);
  await bo.client.mark_inbox_read({ all: true });
  const other = new pg.Client({ connectionString: s.databaseUrl });
  await other.connect();
  try {
    await other.query('LISTEN kitty_events; LISTEN kitty_inbox');
    // Within a look or two this instance sees the other listener and sends its wake-ups through PostgreSQL.
    await eventually(
      async () => s.kitty.localWakes.local(),
      (v) => !v,
      3000,
    );
    const before = await eventually(
      () => bo.client.get_me(),
      (r) => r.inbox?.requires_action === 4 && r.inbox.unread === 0,
      2000,
    );
    expect(s.kitty.inboxCache.peek(bo.agentId, 'base')).toEqual(before.inbox);
    const kept = s.kitty.inboxCache.stats.writeKept;
    const confirmed = await bo.client.confirm_payment({ payment_id: pays[0]!.payment.payment_id });
    expect(s.kitty.inboxCache.stats.writeKept).toBe(kept + 1);
    expect(confirmed.inbox).toEqual({ ...before.inbox, requires_action: 3 });
    // The write's own notification comes back through PostgreSQL and drops the entry, whether or not the kept summary
    // was stored before it arrived.
    await eventually(
      async () => s.kitty.inboxCache.peek(bo.agentId, 'base'),
      (v) => v === undefined,
      2000,
    );
    expect((await s.kitty.inboxCache.get(bo.agentId, { fresh: true })) ?? null).toEqual(confirmed.inbox);
    expect(s.kitty.localWakes.local()).toBe(false);
  } finally {
    await other.end();
  }
});
