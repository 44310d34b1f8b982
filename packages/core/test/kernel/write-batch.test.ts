/**
 * Batched writes (add_expense, record_payment, confirm/reject/cancel_payment, create_group) decide
 * from a read without locks and write in one statement that re-checks, under the group lock, what
 * the decision rested on. These tests change that state exactly between the read and the write
 * (a hook runs another tool just before the batch statement is sent) and check that the call is
 * decided again on the new state — never written on the old one — and that the ledger holds.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { randomUUID } from 'node:crypto';
import { ToolError, type Services } from '../../src/index.ts';
import { createHarness, type Harness, type TestAgent } from '../harness.ts';
import { groupWith, expectLedgerOk, balancesOf, inboxRowsAndCounters } from '../ledger-helpers.ts';
import { poolWithQuery, statementName } from '../pool-proxy.ts';
import { WriteBatch } from '../../src/kernel/write-batch.ts';
import type { EventSpec } from '../../src/kernel/events.ts';

let h: Harness;
beforeAll(async () => {
  h = await createHarness();
});
afterAll(async () => {
  await h?.close();
});

/**
 * Services whose first `n` batch statements are preceded by `between()` (run on the real
 * services, i.e. by another caller); counts the batch statements sent.
 */
function interleaved(between: () => Promise<unknown>, n = 1) {
  const seen = { batches: 0 };
  const services: Services = {
    ...h.services,
    pool: poolWithQuery(h.services.pool, async (real, args) => {
      if (statementName(args) === 'kitty_apply_batch' && seen.batches++ < n) await between();
      return real(...args);
    }),
  };
  return { services, seen };
}

async function callWith(services: Services, agent: TestAgent, tool: string, args: Record<string, unknown>) {
  const r = await h.registry.callTool(
    tool,
    { idempotency_key: `wb-${randomUUID()}`, ...args },
    { services, auth: agent.auth, requestId: `req_${randomUUID()}` },
  );
  return r.data as any;
}

async function failureWith(services: Services, agent: TestAgent, tool: string, args: Record<string, unknown>): Promise<ToolError> {
  try {
    await callWith(services, agent, tool, args);
  } catch (e) {
    if (e instanceof ToolError) return e;
    throw e;
  }
  throw new Error(`expected ${tool} to fail`);
}

describe('batched writes decide again when their state changed before the write', () => {
  it('add_expense split equally: a member who left in between is not charged', async () => {
    const [a, b, c] = [await h.agent('wa'), await h.agent('wb'), await h.agent('wc')];
    const g = await groupWith(h, [a, b, c]);
    const { services, seen } = interleaved(() => h.call(c, 'leave_group', { group_id: g }));
    const r = await callWith(services, a, 'add_expense', { group_id: g, description: 'Dinner', amount_minor: 3000 });
    expect(seen.batches).toBe(2); // the first batch was refused (members changed), the second written
    expect(r.expense.shares.map((s: { handle: string }) => s.handle).sort()).toEqual([a.handle, b.handle].sort());
    expect(await balancesOf(h, a, g)).toEqual({ [a.handle]: 1500, [b.handle]: -1500 });
    await expectLedgerOk(h);
  });

  it('add_expense into a group archived in between answers GROUP_ARCHIVED and writes nothing', async () => {
    const [a, b] = [await h.agent('xa'), await h.agent('xb')];
    const g = await groupWith(h, [a, b]);
    const { services } = interleaved(() => h.call(a, 'archive_group', { group_id: g }));
    const e = await failureWith(services, b, 'add_expense', { group_id: g, description: 'Late', amount_minor: 100 });
    expect(e.kittyCode).toBe('GROUP_ARCHIVED');
    const list = await h.call(a, 'list_expenses', { group_id: g });
    expect(list.expenses).toHaveLength(0);
    await expectLedgerOk(h);
  });

  it('record_payment decided on balances that changed in between is checked again (OVERPAYMENT)', async () => {
    const [a, b] = [await h.agent('pa'), await h.agent('pb')];
    const g = await groupWith(h, [a, b]);
    await h.call(b, 'add_expense', { group_id: g, description: 'Hotel', amount_minor: 2000 }); // a owes b 1000
    // In between, a pays for something of the same size: a owes nothing any more.
    const { services, seen } = interleaved(() => h.call(a, 'add_expense', { group_id: g, description: 'Taxi', amount_minor: 2000 }));
    const e = await failureWith(services, a, 'record_payment', { group_id: g, to_handle: b.handle, amount_minor: 1000 });
    expect(seen.batches).toBe(1); // the decision was made again and refused before any second write
    expect(e.kittyCode).toBe('OVERPAYMENT');
    const payments = await h.call(a, 'list_payments', { group_id: g });
    expect(payments.payments).toHaveLength(0);
    await expectLedgerOk(h);
  });

  it('confirm_payment of a payment cancelled in between answers PAYMENT_NOT_PENDING; balances do not move', async () => {
    const [a, b] = [await h.agent('ca'), await h.agent('cb')];
    const g = await groupWith(h, [a, b]);
    await h.call(b, 'add_expense', { group_id: g, description: 'Hotel', amount_minor: 2000 });
    const p = await h.call(a, 'record_payment', { group_id: g, to_handle: b.handle, amount_minor: 1000 });
    const { services } = interleaved(() => h.call(a, 'cancel_payment', { payment_id: p.payment.payment_id }));
    const e = await failureWith(services, b, 'confirm_payment', { payment_id: p.payment.payment_id });
    expect(e.kittyCode).toBe('PAYMENT_NOT_PENDING');
    expect(await balancesOf(h, a, g)).toEqual({ [a.handle]: -1000, [b.handle]: 1000 });
    const inbox = await h.call(b, 'get_inbox', {});
    expect(inbox.inbox?.requires_action ?? 0).toBe(0);
    await expectLedgerOk(h);
  });

  it('confirm_payment decided on a cached group read that a rename made stale is decided again and answers the new name', async () => {
    const [a, b] = [await h.agent('va'), await h.agent('vb')];
    const g = await groupWith(h, [a, b]);
    await h.call(b, 'add_expense', { group_id: g, description: 'Hotel', amount_minor: 2000 }); // the group read is cached
    const p = await h.call(a, 'record_payment', { group_id: g, to_handle: b.handle, amount_minor: 1000 });
    const { services, seen } = interleaved(() => h.call(a, 'update_me', { display_name: 'Ann Renamed' }));
    const confirmed = await callWith(services, b, 'confirm_payment', { payment_id: p.payment.payment_id });
    expect(seen.batches).toBe(2); // the first statement found the group's version moved (KB001) and wrote nothing
    expect(confirmed.payment).toMatchObject({ status: 'confirmed', from: { handle: a.handle, display_name: 'Ann Renamed' } });
    expect(await balancesOf(h, a, g)).toEqual({ [a.handle]: 0, [b.handle]: 0 });
    await expectLedgerOk(h);
  });

  it('a state that keeps changing ends in TRANSIENT_CONFLICT with nothing written', async () => {
    const [a, b] = [await h.agent('ta'), await h.agent('tb')];
    const g = await groupWith(h, [a, b]);
    const extra: TestAgent[] = [];
    const { services, seen } = interleaved(async () => {
      const x = await h.agent('tx');
      extra.push(x);
      const inv = await h.call(a, 'create_invite', { group_id: g });
      await h.call(x, 'join_group', { code: inv.invite.code });
    }, 100);
    const e = await failureWith(services, a, 'add_expense', { group_id: g, description: 'Never', amount_minor: 900 });
    expect(e.kittyCode).toBe('TRANSIENT_CONFLICT');
    expect(e.retryAfter).toBeGreaterThan(0);
    expect(seen.batches).toBe(8);
    const list = await h.call(a, 'list_expenses', { group_id: g });
    expect(list.expenses).toHaveLength(0);
    await expectLedgerOk(h);
  });
});

describe('one effect per idempotency key', () => {
  it('the same add_expense sent 20 times at once: one expense, the same answer 20 times, 19 replayed', async () => {
    const [a, b] = [await h.agent('ia'), await h.agent('ib')];
    const g = await groupWith(h, [a, b]);
    const key = `same-${randomUUID()}`;
    const calls = await Promise.all(
      Array.from({ length: 20 }, () =>
        h.registry.callTool(
          'add_expense',
          { group_id: g, description: 'Once', amount_minor: 777, idempotency_key: key },
          { services: h.services, auth: a.auth, requestId: `req_${randomUUID()}` },
        ),
      ),
    );
    // The same content (a replay also says replayed: true).
    const content = (d: unknown) => ({ ...(d as Record<string, unknown>), replayed: undefined });
    for (const c of calls) expect(content(c.data)).toEqual(content(calls[0]!.data));
    expect(calls.filter((c) => c.call.replayed)).toHaveLength(19);
    const list = await h.call(a, 'list_expenses', { group_id: g });
    expect(list.expenses).toHaveLength(1);
    await expectLedgerOk(h);
  });

  it('a retry after the state changed (group archived) answers the stored result, not the refusal', async () => {
    const [a, b] = [await h.agent('ka'), await h.agent('kb')];
    const g = await groupWith(h, [a, b]);
    const key = `retry-${randomUUID()}`;
    // Only a shares it, so everyone stays settled and the group can be archived.
    const args = {
      group_id: g,
      description: 'Before archiving',
      amount_minor: 500,
      split: { method: 'equal', participants: [{ handle: a.handle }] },
      idempotency_key: key,
    };
    const first = await h.registry.callTool('add_expense', args, { services: h.services, auth: a.auth, requestId: 'r1' });
    await h.call(a, 'archive_group', { group_id: g });
    expect((await h.fail(a, 'add_expense', { ...args, idempotency_key: `other-${randomUUID()}` })).kittyCode).toBe('GROUP_ARCHIVED');
    const again = await h.registry.callTool('add_expense', args, { services: h.services, auth: a.auth, requestId: 'r2' });
    expect(again.call.replayed).toBe(true);
    expect((again.data as any).expense).toEqual((first.data as any).expense);
  });

  it('the same key with other arguments is IDEMPOTENCY_KEY_REUSED, also when both arrive at once', async () => {
    const a = await h.agent('ra');
    const key = `reuse-${randomUUID()}`;
    const results = await Promise.allSettled(
      ['One', 'Two'].map((name) =>
        h.registry.callTool(
          'create_group',
          { name, currency: 'EUR', idempotency_key: key },
          { services: h.services, auth: a.auth, requestId: `req_${randomUUID()}` },
        ),
      ),
    );
    expect(results.filter((r) => r.status === 'fulfilled')).toHaveLength(1);
    const refused = results.find((r) => r.status === 'rejected') as PromiseRejectedResult;
    expect((refused.reason as ToolError).kittyCode).toBe('IDEMPOTENCY_KEY_REUSED');
  });
});

/**
 * Marks everything of `agent`'s read, then gives it `n` open items (unread, requiring action), "act 0" the oldest, the
 * newest a minute ago, counted on its counters. Returns their entity ids, oldest first.
 */
async function openItems(agent: TestAgent, n: number): Promise<string[]> {
  await h.call(agent, 'mark_inbox_read', { all: true });
  const entities = Array.from({ length: n }, () => randomUUID());
  for (const [i, entityId] of entities.entries())
    await h.services.pool.query(
      `INSERT INTO inbox_items (id, agent_id, kind, text, requires_action, priority, entity_type, entity_id, created_at)
       VALUES (gen_random_uuid(), $1, 'test', $2, true, 1, 'test', $3, now() - make_interval(mins => $4))`,
      [agent.agentId, `act ${i}`, entityId, n - i],
    );
  await h.services.pool.query(
    'UPDATE agents SET inbox_unread = inbox_unread + $2, inbox_requires_action = inbox_requires_action + $2 WHERE id = $1',
    [agent.agentId, n],
  );
  return entities;
}

describe('the inbox summary a batched write answers with', () => {
  it("is the caller's as the write left it, read in the same statement", async () => {
    const [a, b] = [await h.agent('na'), await h.agent('nb')];
    const g = await groupWith(h, [a, b]);
    await h.call(a, 'add_expense', { group_id: g, description: 'Lunch', amount_minor: 2400 }); // b gets an item
    // b records a pending payment: a gets an item requiring action; b's own inbox is unchanged by it.
    const paid = await h.call(b, 'record_payment', { group_id: g, to_handle: a.handle, amount_minor: 1200 });
    const { inboxSummaryFor } = await import('../../src/index.ts');
    expect(paid.inbox).toEqual(await inboxSummaryFor(h.services.prisma, b.agentId));
    expect(paid.inbox.top.join(' ')).toMatch(/Lunch/);
    const confirmed = await h.call(a, 'confirm_payment', { payment_id: paid.payment.payment_id });
    // Confirming resolved a's item requiring action in the same statement.
    expect(confirmed.inbox).toEqual(await inboxSummaryFor(h.services.prisma, a.agentId));
    expect(confirmed.inbox?.requires_action ?? 0).toBe(0);
  });

  it("is not read when the document says the caller's summary is cached (summary_cached): inbox null, the rest written", async () => {
    const [a, b] = [await h.agent('sa'), await h.agent('sb')];
    const g = await groupWith(h, [a, b]);
    const doc = (key: string, cached: boolean) =>
      JSON.stringify({
        idempotency: { agent_id: a.agentId, tool: 'test', key, request_hash: 'h', response: {} },
        group_id: g,
        counters: [{ agent_id: b.agentId, unread: 1, requires_action: 0 }],
        ...(cached ? { summary_cached: true } : {}),
      });
    const apply = async (key: string, cached: boolean) =>
      (
        await h.services.pool.query<{ o: { status: string; inbox: unknown } }>('SELECT kitty_apply_batch($1::jsonb) AS o', [
          doc(key, cached),
        ])
      ).rows[0]!.o;
    const { inboxSummaryFor } = await import('../../src/index.ts');
    expect(await inboxSummaryFor(h.services.prisma, a.agentId)).toBeDefined(); // a has something unread (b joined)
    expect(await apply(randomUUID(), false)).toMatchObject({ status: 'applied', inbox: { unread: expect.any(Number) } });
    expect(await apply(randomUUID(), true)).toEqual({ status: 'applied', inbox: null });
    // The counters were still applied both times.
    const row = await h.services.pool.query<{ n: number }>('SELECT inbox_unread AS n FROM agents WHERE id = $1', [b.agentId]);
    expect(row.rows[0]!.n).toBeGreaterThanOrEqual(2);
  });

  it("answers only the caller's counts (inbox_kept) when the cached summary it was sent (summary_kept) still holds, else reads it", async () => {
    const [a, b] = [await h.agent('ma'), await h.agent('mb')];
    const g = await groupWith(h, [a, b]);
    // Five open items of a's, oldest first (each unread and requiring action).
    const entities = await openItems(a, 5);
    const { inboxSummaryFor } = await import('../../src/index.ts');
    const summary = async () => (await inboxSummaryFor(h.services.prisma, a.agentId))!;
    const kept = (s: Awaited<ReturnType<typeof summary>>) => ({
      unread: s.unread,
      requires_action: s.requires_action,
      top: s.top_items.map((t) => t.item_id),
    });
    const apply = async (entityId: string, summaryKept: unknown, counters?: unknown[]) =>
      (
        await h.services.pool.query<{ o: Record<string, unknown> }>('SELECT kitty_apply_batch($1::jsonb) AS o', [
          JSON.stringify({
            idempotency: { agent_id: a.agentId, tool: 'test', key: randomUUID(), request_hash: 'h', response: {} },
            group_id: g,
            resolve: [{ entity_type: 'test', entity_id: entityId, resolution: 'done', agent_id: a.agentId }],
            ...(counters ? { counters } : {}),
            summary_kept: summaryKept,
          }),
        ])
      ).rows[0]!.o;
    const first = await summary();
    expect(first).toMatchObject({ unread: 5, requires_action: 5 });
    expect(first.top).toEqual(['act 4', 'act 3', 'act 2']);
    // The oldest item is below the top three: only the counts come back, and they are what the database holds.
    expect(await apply(entities[0]!, kept(first))).toEqual({
      status: 'applied',
      inbox: null,
      inbox_kept: { unread: 4, requires_action: 4 },
    });
    expect(await summary()).toEqual({ ...first, unread: 4, requires_action: 4 });
    // The same cached summary again: its counts are one change behind the database's, so the statement reads it.
    const stale = await apply(entities[1]!, kept(first));
    expect(stale.inbox_kept).toBeUndefined();
    expect(stale.inbox).toMatchObject({ unread: 3, requires_action: 3, top: ['act 4', 'act 3', 'act 2'] });
    // A top item resolved: read (the next item moves up).
    const top = await apply(entities[4]!, kept(await summary()));
    expect(top.inbox_kept).toBeUndefined();
    expect(top.inbox).toMatchObject({ unread: 2, requires_action: 2, top: ['act 3', 'act 2'] });
    // The caller's own counters named in the document (an item of the caller's added): read.
    const counted = await apply(entities[2]!, kept(await summary()), [{ agent_id: a.agentId, unread: 1, requires_action: 0 }]);
    expect(counted.inbox_kept).toBeUndefined();
    expect(counted.inbox).toMatchObject({ unread: 2, requires_action: 1 });
  });

  it("of a cancel_payment (by the payer) is the payer's as it is: the payee's confirmation request is the only item resolved", async () => {
    const [a, b] = [await h.agent('ca'), await h.agent('cb')];
    const g = await groupWith(h, [a, b]);
    await h.call(a, 'add_expense', { group_id: g, description: 'Dinner', amount_minor: 3000 }); // b gets an item
    const paid = await h.call(b, 'record_payment', { group_id: g, to_handle: a.handle, amount_minor: 1000 });
    const { inboxSummaryFor } = await import('../../src/index.ts');
    const before = await inboxSummaryFor(h.services.prisma, a.agentId);
    expect(before?.requires_action).toBe(1);
    const cancelled = await h.call(b, 'cancel_payment', { payment_id: paid.payment.payment_id });
    expect(cancelled.inbox).toEqual(await inboxSummaryFor(h.services.prisma, b.agentId));
    expect(cancelled.inbox.top.join(' ')).toMatch(/Dinner/);
    expect((await inboxSummaryFor(h.services.prisma, a.agentId))?.requires_action ?? 0).toBe(0);
    await expectLedgerOk(h);
  });
});

describe("a resolve that names the items' holder", () => {
  it("leaves the other agents known to be untouched (their cached summary may answer), and the holder's only change is the resolve", () => {
    const named = new WriteBatch().resolve('payment', randomUUID(), 'cancelled by @b', 'holder');
    expect(named.inboxChangeOf('payer')).toBe('none');
    expect(named.inboxChangeOf('holder')).toBe('resolves');
    expect(new WriteBatch().resolve('payment', randomUUID(), 'confirmed by @a').inboxChangeOf('payer')).toBe('other');
    // An item counted for the holder too (added, or read) is a change beyond the resolve.
    const counted = new WriteBatch()
      .resolve('payment', randomUUID(), 'confirmed by @holder', 'holder')
      .notify({ agentId: 'holder', kind: 'payment_confirmed', text: 'confirmed', entityType: 'payment', entityId: 'p', groupId: 'g' });
    expect(counted.inboxChangeOf('holder')).toBe('other');
    expect(counted.inboxChangeOf('payer')).toBe('none');
  });

  it("wakes the holder's inbox and the event recipients' feeds, not the other recipients' inboxes; without a holder, theirs too", () => {
    const event: EventSpec = {
      type: 'payment.cancelled',
      groupId: randomUUID(),
      actorId: 'payer',
      recipients: ['payer', 'holder'],
      data: {},
    };
    const named = new WriteBatch().resolve('payment', randomUUID(), 'cancelled by @payer', 'holder').event(event);
    expect(named.wakes('payer')).toEqual({ events: new Set(['payer', 'holder']), inbox: new Set(['holder']) });
    const unnamed = new WriteBatch().resolve('payment', randomUUID(), 'cancelled by @payer').event(event);
    expect(unnamed.wakes('actor')).toEqual({ events: new Set(['payer', 'holder']), inbox: new Set(['payer', 'holder', 'actor']) });
    // A counter change wakes its agent's inbox whatever the resolves name.
    const counted = new WriteBatch()
      .resolve('payment', randomUUID(), 'confirmed by @holder', 'holder')
      .notify({ agentId: 'payer', kind: 'payment_confirmed', text: 'confirmed', entityType: 'payment', entityId: 'p', groupId: 'g' });
    expect(counted.wakes('holder').inbox).toEqual(new Set(['payer', 'holder']));
  });

  it("resolves only the holder's open items about the entity; without a holder, every agent's", async () => {
    const [a, b] = [await h.agent('ra'), await h.agent('rb')];
    const g = await groupWith(h, [a, b]);
    const open = async (entityId: string) => {
      for (const agent of [a, b]) {
        await h.services.pool.query(
          `INSERT INTO inbox_items (id, agent_id, kind, text, requires_action, priority, entity_type, entity_id)
           VALUES (gen_random_uuid(), $1, 'test', 'act', true, 1, 'test', $2)`,
          [agent.agentId, entityId],
        );
      }
      await h.services.pool.query(
        'UPDATE agents SET inbox_unread = inbox_unread + 1, inbox_requires_action = inbox_requires_action + 1 WHERE id = ANY ($1)',
        [[a.agentId, b.agentId]],
      );
    };
    const stillOpen = async (entityId: string) =>
      (
        await h.services.pool.query<{ agent_id: string }>(
          `SELECT agent_id FROM inbox_items WHERE entity_type = 'test' AND entity_id = $1 AND resolved_at IS NULL ORDER BY agent_id`,
          [entityId],
        )
      ).rows.map((r) => r.agent_id);
    const apply = (resolve: Record<string, unknown>) =>
      h.services.pool.query('SELECT kitty_apply_batch($1::jsonb)', [JSON.stringify({ group_id: g, resolve: [resolve] })]);
    const [named, everyone] = [randomUUID(), randomUUID()];
    await open(named);
    await open(everyone);
    await apply({ entity_type: 'test', entity_id: named, resolution: 'done', agent_id: a.agentId });
    expect(await stillOpen(named)).toEqual([b.agentId]);
    await apply({ entity_type: 'test', entity_id: everyone, resolution: 'done' });
    expect(await stillOpen(everyone)).toEqual([]);
    // The counters follow the items resolved: both of a's, and b's about the entity resolved without a holder.
    const [ofA, ofB] = [await inboxRowsAndCounters(h, a), await inboxRowsAndCounters(h, b)];
    expect(ofA.counters.open).toBe(ofA.rows.open);
    expect(ofB.counters.open).toBe(ofB.rows.open);
    expect(ofB.counters.open).toBe(1);
  });

  it("is not held up, when sent together with other writes, by another agent's item about the same entity", async () => {
    const [a, b] = [await h.agent('rc'), await h.agent('rd')];
    const g = await groupWith(h, [a, b]);
    const entityId = randomUUID();
    for (const agent of [a, b])
      await h.services.pool.query(
        `INSERT INTO inbox_items (id, agent_id, kind, text, requires_action, priority, entity_type, entity_id)
         VALUES (gen_random_uuid(), $1, 'test', 'act', true, 1, 'test', $2)`,
        [agent.agentId, entityId],
      );
    const holder = await h.services.pool.connect();
    const c = await h.services.pool.connect();
    try {
      // Another transaction holds b's item about the entity.
      await holder.query('BEGIN');
      await holder.query(`SELECT 1 FROM inbox_items WHERE agent_id = $1 AND entity_id = $2 FOR UPDATE`, [b.agentId, entityId]);
      await c.query('BEGIN');
      await c.query(`SET LOCAL lock_timeout = '2s'`);
      const doc = { group_id: g, resolve: [{ entity_type: 'test', entity_id: entityId, resolution: 'done', agent_id: a.agentId }] };
      await c.query('SELECT kitty_apply_batches_quiet($1::jsonb)', [JSON.stringify([doc])]);
      const open = await c.query<{ agent_id: string }>(
        `SELECT agent_id FROM inbox_items WHERE entity_type = 'test' AND entity_id = $1 AND resolved_at IS NULL`,
        [entityId],
      );
      expect(open.rows.map((r) => r.agent_id)).toEqual([b.agentId]);
    } finally {
      await c.query('ROLLBACK').catch(() => undefined);
      await holder.query('ROLLBACK').catch(() => undefined);
      c.release();
      holder.release();
    }
  });
});

describe('writes sent together (kitty_apply_batches_quiet) and the inbox counters they change', () => {
  /** A document that gives `agent` one open item (and counts it), with an idempotency record of `caller` when given. */
  const itemFor = (groupId: string, agent: TestAgent, caller?: TestAgent, summaryCached = true) => ({
    ...(caller
      ? {
          idempotency: { agent_id: caller.agentId, tool: 'test', key: randomUUID(), request_hash: 'h', response: {} },
          ...(summaryCached ? { summary_cached: true } : {}),
        }
      : {}),
    group_id: groupId,
    rows: {
      inbox_items: [
        {
          id: randomUUID(),
          agent_id: agent.agentId,
          kind: 'test',
          text: 'act',
          requires_action: true,
          priority: 1,
          entity_type: 'test',
          entity_id: randomUUID(),
          group_id: groupId,
        },
      ],
    },
    counters: [{ agent_id: agent.agentId, unread: 1, requires_action: 1 }],
  });

  it("lock the agent rows only after the last document ran, and add every document's counters", async () => {
    const [payee, b, c] = [await h.agent('dc-payee'), await h.agent('dc-b'), await h.agent('dc-c')];
    const [g1, g2] = [await groupWith(h, [payee, b]), await groupWith(h, [payee, c])];
    const before = await inboxRowsAndCounters(h, payee);
    const holder = await h.services.pool.connect();
    const writer = await h.services.pool.connect();
    let sent: Promise<unknown> | undefined;
    try {
      // Another write holds the payee's agent row (its own counter change, not yet committed).
      await holder.query('BEGIN');
      await holder.query('SELECT 1 FROM agents WHERE id = $1 FOR NO KEY UPDATE', [payee.agentId]);
      const pid = (await writer.query<{ pid: number }>('SELECT pg_backend_pid() AS pid')).rows[0]!.pid;
      const docs = [itemFor(g1, payee, b), itemFor(g2, payee, c)];
      const statement = writer.query<{ answers: Array<Record<string, unknown>> }>(
        'SELECT kitty_apply_batches_quiet($1::jsonb) AS answers',
        [JSON.stringify(docs)],
      );
      sent = statement;
      // Wait until the statement waits for the agent row.
      for (let i = 0; ; i++) {
        const w = await h.services.pool.query<{ t: string | null }>('SELECT wait_event_type AS t FROM pg_stat_activity WHERE pid = $1', [
          pid,
        ]);
        if (w.rows[0]?.t === 'Lock') break;
        if (i > 200) throw new Error('the statement never waited for the agent row');
        await new Promise((r) => setTimeout(r, 10));
      }
      // By then both documents ran: their items are written (taken locks show it), only the counters wait.
      const locks = await h.services.pool.query<{ mode: string }>(
        `SELECT mode FROM pg_locks WHERE pid = $1 AND relation = 'inbox_items'::regclass AND mode = 'RowExclusiveLock'`,
        [pid],
      );
      expect(locks.rows).toHaveLength(1);
      await holder.query('ROLLBACK');
      const answers = (await statement).rows[0]!.answers;
      // Each answered as alone, without the deferred counters.
      expect(answers).toEqual([
        { status: 'applied', inbox: null },
        { status: 'applied', inbox: null },
      ]);
    } finally {
      await holder.query('ROLLBACK').catch(() => undefined);
      // The writer goes back to the pool only once its statement has ended.
      await sent?.catch(() => undefined);
      holder.release();
      writer.release();
    }
    const after = await inboxRowsAndCounters(h, payee);
    expect(after.counters).toEqual({ unread: before.counters.unread + 2, open: before.counters.open + 2 });
    expect(after.counters).toEqual(after.rows);
  });

  it("answer a caller's summary with the changes of the documents before it and its own, not yet on the agent row", async () => {
    const [a, b] = [await h.agent('dc-a'), await h.agent('dc-reader')];
    const g = await groupWith(h, [a, b]);
    // Five open items of a's, long ago (each unread and requiring action).
    const entities = await openItems(a, 5);
    const ofA = (entityId: string, more: Record<string, unknown>) => ({
      idempotency: { agent_id: a.agentId, tool: 'test', key: randomUUID(), request_hash: 'h', response: {} },
      group_id: g,
      resolve: [{ entity_type: 'test', entity_id: entityId, resolution: 'done', agent_id: a.agentId }],
      ...more,
    });
    const answers = (
      await h.services.pool.query<{ answers: Array<Record<string, any>> }>('SELECT kitty_apply_batches_quiet($1::jsonb) AS answers', [
        JSON.stringify([
          // b's write gives a a sixth item: 6 unread, 6 to act on.
          itemFor(g, a, b),
          // a's write resolves its oldest item, sent with a's summary as cached after b's write: the counts still hold.
          ofA(entities[0]!, { summary_kept: { unread: 6, requires_action: 6, top: [] } }),
          // a's write resolves the next one and reads a's summary.
          ofA(entities[1]!, {}),
        ]),
      ])
    ).rows[0]!.answers;
    expect(answers[0]).toEqual({ status: 'applied', inbox: null });
    expect(answers[1]).toEqual({ status: 'applied', inbox: null, inbox_kept: { unread: 5, requires_action: 5 } });
    expect(answers[2]).toMatchObject({ status: 'applied', inbox: { unread: 4, requires_action: 4 } });
    expect(answers[2]!.inbox.top).toEqual(['act', 'act 4', 'act 3']);
    const after = await inboxRowsAndCounters(h, a);
    expect(after.rows).toEqual({ unread: 4, open: 4 });
    expect(after.counters).toEqual(after.rows);
  });
});
