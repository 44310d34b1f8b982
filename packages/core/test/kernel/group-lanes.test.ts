/**
 * Group commit (kernel/group-lanes.ts): batched writes into one group that queue behind one in flight are sent in one
 * statement (kitty_apply_batches_quiet), each with its own answer; a combined statement that fails is rolled back whole
 * and each of its writes is sent again on its own. The first write into the group is held (a hook on its statement)
 * until the others have queued, so what is combined is decided by the test, not by timing.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { randomUUID } from 'node:crypto';
import { ToolError, type Services } from '../../src/index.ts';
import { groupLanesFor } from '../../src/kernel/group-lanes.ts';
import { createHarness, type Harness, type TestAgent } from '../harness.ts';
import { groupWith, expectLedgerOk, balancesOf } from '../ledger-helpers.ts';
import { poolWithQuery, statementName } from '../pool-proxy.ts';

let h: Harness;
beforeAll(async () => {
  h = await createHarness();
});
afterAll(async () => {
  await h?.close();
});

/**
 * Services whose first single batch statement into `groupId` waits until `queued` more writes into that group wait
 * behind it. `sent` lists the statements by name with the documents each carried; `failCombined` replaces the combined
 * statement's answer with an error.
 */
function heldServices(groupId: string, queued: number, failCombined?: Error) {
  const sent: Array<{ name: string; documents: number }> = [];
  let held = false;
  const pool = poolWithQuery(h.services.pool, async (real, args) => {
    const name = statementName(args);
    if (name === 'kitty_apply_batch' || name === 'kitty_apply_batches') {
      const docs = JSON.parse((args[0] as { values: string[] }).values[0]!) as unknown;
      sent.push({ name, documents: Array.isArray(docs) ? docs.length : 1 });
      if (name === 'kitty_apply_batch' && !held) {
        held = true;
        const lanes = groupLanesFor(pool);
        for (let i = 0; i < 500 && lanes.queued(groupId) < queued; i++) await new Promise((r) => setTimeout(r, 10));
        expect(lanes.queued(groupId)).toBe(queued);
      }
      if (name === 'kitty_apply_batches' && failCombined) throw failCombined;
    }
    return real(...args);
  });
  const services: Services = { ...h.services, pool };
  return { services, sent, lanes: groupLanesFor(pool) };
}

async function callWith(services: Services, agent: TestAgent, tool: string, args: Record<string, unknown>) {
  const r = await h.registry.callTool(
    tool,
    { idempotency_key: `gl-${randomUUID()}`, ...args },
    { services, auth: agent.auth, requestId: `req_${randomUUID()}` },
  );
  return r.data as any;
}

const settled = <T>(p: Promise<T>) =>
  p.then(
    (value) => ({ value }),
    (error: unknown) => ({ error }),
  );

describe('writes into one group that queue behind one in flight', () => {
  it('are sent in one statement, each with its own answer, stored once and replayed as answered', async () => {
    const [a, b, c] = [await h.agent('gla'), await h.agent('glb'), await h.agent('glc')];
    const groupId = await groupWith(h, [a, b, c]);
    const { services, sent, lanes } = heldServices(groupId, 11);
    const payers = [a, b, c];
    const calls = Array.from({ length: 12 }, (_, i) => ({
      payer: payers[i % 3]!,
      args: { group_id: groupId, description: `Round ${i}`, amount_minor: 300 + i, idempotency_key: `gl-round-${randomUUID()}` },
    }));
    const answers = await Promise.all(calls.map((x) => callWith(services, x.payer, 'add_expense', x.args)));

    expect(sent).toEqual([
      { name: 'kitty_apply_batch', documents: 1 },
      { name: 'kitty_apply_batches', documents: 11 },
    ]);
    expect(lanes.stats).toEqual({ combined: 1, documents: 11 });
    expect(lanes.queued(groupId)).toBe(0);
    // Each call answered its own expense, as decided.
    answers.forEach((r, i) => {
      expect(r.expense.description).toBe(`Round ${i}`);
      expect(r.expense.amount_minor).toBe(300 + i);
    });
    expect(new Set(answers.map((r) => r.expense.expense_id)).size).toBe(12);
    const listed = await h.call(a, 'list_expenses', { group_id: groupId, limit: 50 });
    expect(listed.expenses).toHaveLength(12);
    // Balances are the sum of the twelve equal splits (each payer paid theirs; everyone owes a third of each).
    const total = calls.reduce((s, x) => s + x.args.amount_minor, 0);
    const bal = await balancesOf(h, a, groupId);
    expect(Object.values(bal).reduce((s, v) => s + v, 0)).toBe(0);
    const paidBy = (p: TestAgent) => calls.filter((x) => x.payer === p).reduce((s, x) => s + x.args.amount_minor, 0);
    expect(bal[a.handle]! + bal[b.handle]! + bal[c.handle]!).toBe(0);
    expect(Math.abs(bal[a.handle]! - (paidBy(a) - total / 3))).toBeLessThanOrEqual(12);
    // A retry of a combined write replays its stored answer.
    const again = await callWith(h.services, calls[7]!.payer, 'add_expense', calls[7]!.args);
    expect(again.expense).toEqual(answers[7].expense);
    expect(again.replayed).toBe(true);
    await expectLedgerOk(h);
  });

  it('two payments that only together overpay: the combined statement is rolled back, one lands, the other is refused', async () => {
    const [a, b, c] = [await h.agent('glp'), await h.agent('glq'), await h.agent('glr')];
    const groupId = await groupWith(h, [a, b, c]);
    await h.call(a, 'add_expense', { group_id: groupId, description: 'Dinner', amount_minor: 900 }); // b owes a 300
    const { services, sent } = heldServices(groupId, 2);
    const first = settled(callWith(services, c, 'add_expense', { group_id: groupId, description: 'Taxi', amount_minor: 30 }));
    await new Promise((r) => setTimeout(r, 50)); // the add_expense is in flight (held) before the payments are decided
    const pays = [200, 200].map((amount) =>
      settled(callWith(services, b, 'record_payment', { group_id: groupId, to_handle: a.handle, amount_minor: amount })),
    );
    const [taxi, ...payments] = await Promise.all([first, ...pays]);
    expect('value' in taxi).toBe(true);
    const landed = payments.filter((p) => 'value' in p);
    const refused = payments.filter((p) => 'error' in p).map((p) => (p as { error: unknown }).error);
    expect(landed).toHaveLength(1);
    expect(refused).toHaveLength(1);
    expect(refused[0]).toBeInstanceOf(ToolError);
    expect((refused[0] as ToolError).kittyCode).toBe('OVERPAYMENT');
    // The combined statement failed (KB001 on the second payment) and wrote nothing; both were then sent alone.
    expect(sent.map((s) => s.name)).toEqual(['kitty_apply_batch', 'kitty_apply_batches', 'kitty_apply_batch', 'kitty_apply_batch']);
    const listed = await h.call(b, 'list_payments', { group_id: groupId });
    expect(listed.payments).toHaveLength(1);
    await expectLedgerOk(h);
  });

  it('the same key twice in one combined statement: one write, the second answers its replay', async () => {
    const [a, b] = [await h.agent('gld'), await h.agent('gle')];
    const groupId = await groupWith(h, [a, b]);
    const { services, sent } = heldServices(groupId, 3);
    const args = { group_id: groupId, description: 'Museum', amount_minor: 2400, idempotency_key: `gl-dup-${randomUUID()}` };
    const [x, y, z] = await Promise.all([
      callWith(services, b, 'add_expense', { group_id: groupId, description: 'Bus', amount_minor: 100 }),
      callWith(services, a, 'add_expense', args),
      callWith(services, a, 'add_expense', args),
      callWith(services, b, 'add_expense', { group_id: groupId, description: 'Tea', amount_minor: 200 }),
    ]);
    expect(sent.map((s) => s.documents)).toEqual([1, 3]);
    expect(x.expense.description).toBe('Bus');
    expect(z.expense.expense_id).toBe(y.expense.expense_id);
    expect([y.replayed, z.replayed].filter(Boolean)).toEqual([true]);
    const listed = await h.call(a, 'list_expenses', { group_id: groupId });
    expect(listed.expenses.map((e: { description: string }) => e.description).sort()).toEqual(['Bus', 'Museum', 'Tea']);
    await expectLedgerOk(h);
  });

  it('a combined statement whose connection is lost tells each of its callers the outcome is unknown', async () => {
    const [a, b] = [await h.agent('glf'), await h.agent('glg')];
    const groupId = await groupWith(h, [a, b]);
    const { services } = heldServices(groupId, 2, new Error('Connection terminated unexpectedly'));
    const results = await Promise.all(
      ['One', 'Two', 'Three'].map((d) =>
        settled(callWith(services, a, 'add_expense', { group_id: groupId, description: d, amount_minor: 50 })),
      ),
    );
    // The held write was sent alone and landed; the two combined behind it were not answered.
    expect(results.filter((r) => 'value' in r)).toHaveLength(1);
    const errors = results.filter((r) => 'error' in r).map((r) => (r as { error: unknown }).error as ToolError);
    expect(errors).toHaveLength(2);
    for (const e of errors) {
      expect(e).toBeInstanceOf(ToolError);
      expect(e.kittyCode).toBe('INTERNAL');
      expect(e.details).toMatchObject({ outcome: 'unknown' });
    }
  });

  it('one at a time, each write is sent alone (nothing waits)', async () => {
    const [a, b] = [await h.agent('glh'), await h.agent('gli')];
    const groupId = await groupWith(h, [a, b]);
    const { services, sent, lanes } = heldServices(groupId, 0);
    for (const d of ['Bread', 'Milk', 'Eggs'])
      await callWith(services, a, 'add_expense', { group_id: groupId, description: d, amount_minor: 120 });
    expect(sent.map((s) => s.name)).toEqual(['kitty_apply_batch', 'kitty_apply_batch', 'kitty_apply_batch']);
    expect(lanes.stats.combined).toBe(0);
  });

  it('a write of more rows than a combined statement takes (a group of 7: 41 rows) is sent at once, beside the one in flight', async () => {
    const members: TestAgent[] = [];
    for (let i = 0; i < 7; i++) members.push(await h.agent(`glw${i}`));
    const groupId = await groupWith(h, members);
    const order: string[] = [];
    let secondArrived!: () => void;
    const second = new Promise<void>((r) => (secondArrived = r));
    let n = 0;
    const pool = poolWithQuery(h.services.pool, async (real, args) => {
      if (statementName(args) === 'kitty_apply_batch' && n++ === 0) {
        // The first write waits (at most 5 s) for the second to be sent; queued behind it, the second never would be.
        await Promise.race([second, new Promise((r) => setTimeout(r, 5000))]);
        order.push('first');
      } else if (statementName(args) === 'kitty_apply_batch') {
        order.push('second');
        secondArrived();
      }
      return real(...args);
    });
    const services: Services = { ...h.services, pool };
    const [x, y] = await Promise.all(
      ['Hotel', 'Car'].map((d) =>
        callWith(services, members[0]!, 'add_expense', { group_id: groupId, description: d, amount_minor: 7000 }),
      ),
    );
    expect(order).toEqual(['second', 'first']);
    expect([x.expense.description, y.expense.description]).toEqual(['Hotel', 'Car']);
    expect(groupLanesFor(pool).stats.combined).toBe(0);
    await expectLedgerOk(h);
  });

  it('the database refuses documents of different groups in one statement', async () => {
    const err = await h.services.pool
      .query('SELECT kitty_apply_batches_quiet($1::jsonb)', [JSON.stringify([{ group_id: randomUUID() }, { group_id: randomUUID() }])])
      .catch((e: unknown) => e as { code?: string });
    expect((err as { code?: string }).code).toBe('22023');
  });
});
