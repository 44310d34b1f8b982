/**
 * Group commit (kernel/group-commit.ts): batched writes that queue while their group has a statement in flight, or
 * while both of the instance's statement slots are taken, are sent in one statement (kitty_apply_batches_quiet, of
 * any groups), each with its own answer; a combined statement that fails is rolled back whole and each of its writes
 * is sent again on its own. The tests hold the first writes (a hook on their statements) until the others have
 * queued, so what is combined is decided by the test, not by timing.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { randomUUID } from 'node:crypto';
import { ToolError, type Services } from '../../src/index.ts';
import { groupCommitFor, type GroupCommit } from '../../src/kernel/group-commit.ts';
import { createHarness, type Harness, type TestAgent } from '../harness.ts';
import { groupWith, expectLedgerOk, balancesOf, inboxRowsAndCounters } from '../ledger-helpers.ts';
import { poolWithQuery, sentDocument, statementName } from '../pool-proxy.ts';

let h: Harness;
beforeAll(async () => {
  h = await createHarness();
});
afterAll(async () => {
  await h?.close();
});

/** The groups of the documents a batch statement (`kitty_apply_batch` or `kitty_apply_batches`) carries, in order. */
const groupsSent = (args: unknown[]): string[] =>
  ([JSON.parse(sentDocument(args))].flat() as Array<{ group_id: string }>).map((d) => d.group_id);

/**
 * Services whose first `hold` single batch statements wait until `queued` writes wait in the lane of `groupId` (none:
 * the lane of writes into no existing group). `sent` lists the statements by name with the documents each carried;
 * `failCombined` replaces the combined statement's answer with an error.
 */
function heldServices(groupId: string | undefined, queued: number, opts: { failCombined?: Error; hold?: number } = {}) {
  const sent: Array<{ name: string; documents: number }> = [];
  let held = 0;
  const pool = poolWithQuery(h.services.pool, async (real, args) => {
    const name = statementName(args);
    if (name === 'kitty_apply_batch' || name === 'kitty_apply_batches') {
      sent.push({ name, documents: groupsSent(args).length });
      if (name === 'kitty_apply_batch' && held < (opts.hold ?? 1)) {
        held++;
        for (let i = 0; i < 500 && lanes.queued(groupId) < queued; i++) await new Promise((r) => setTimeout(r, 10));
        expect(lanes.queued(groupId)).toBe(queued);
      }
      if (name === 'kitty_apply_batches' && opts.failCombined) throw opts.failCombined;
    }
    return real(...args);
  });
  const lanes = groupCommitFor(pool);
  const services: Services = { ...h.services, pool };
  return { services, sent, lanes };
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

describe('writes that queue while the lanes are busy', () => {
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
    expect(lanes.queued()).toBe(0);
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
    while (!sent.length) await new Promise((r) => setTimeout(r, 10)); // the add_expense is held before the payments are decided
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
    const { services } = heldServices(groupId, 2, { failCombined: new Error('Connection terminated unexpectedly') });
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
    const lanes = groupCommitFor(pool); // one statement in flight per group: were it not sent at once, the second would wait
    const services: Services = { ...h.services, pool };
    const [x, y] = await Promise.all(
      ['Hotel', 'Car'].map((d) =>
        callWith(services, members[0]!, 'add_expense', { group_id: groupId, description: d, amount_minor: 7000 }),
      ),
    );
    expect(order).toEqual(['second', 'first']);
    expect([x.expense.description, y.expense.description]).toEqual(['Hotel', 'Car']);
    expect(lanes.stats.combined).toBe(0);
    await expectLedgerOk(h);
  });

  it('confirms and rejects combined while the payee marks everything read: each item counted once, counters equal the rows', async () => {
    const [ana, bob] = [await h.agent('glca'), await h.agent('glcb')];
    const groupId = await groupWith(h, [ana, bob]);
    await h.call(ana, 'add_expense', { group_id: groupId, description: 'Rent', amount_minor: 100_000 });
    for (let round = 0; round < 3; round++) {
      const ids: string[] = [];
      for (let i = 0; i < 6; i++)
        ids.push(
          (await h.call(bob, 'record_payment', { group_id: groupId, to_handle: ana.handle, amount_minor: 100 + i })).payment.payment_id,
        );
      const { services, sent } = heldServices(groupId, 5);
      const marks: Array<Promise<unknown>> = [];
      const answers = await Promise.all(
        ids.map((payment_id, i) => {
          // Once five transitions wait, two mark_inbox_read calls race the combined statement.
          if (i === 5) marks.push(h.call(ana, 'mark_inbox_read', { all: true }), h.call(ana, 'mark_inbox_read', { all: true }));
          return callWith(services, ana, i % 2 ? 'confirm_payment' : 'reject_payment', { payment_id });
        }),
      );
      await Promise.all(marks);
      expect(sent.map((x) => x.documents)).toEqual([1, 5]);
      expect(answers.map((a) => a.payment.status)).toEqual(ids.map((_, i) => (i % 2 ? 'confirmed' : 'rejected')));
      const inbox = await inboxRowsAndCounters(h, ana);
      expect(inbox.rows).toEqual(inbox.counters);
      expect(inbox.counters.open).toBe(0);
    }
    await expectLedgerOk(h);
  });

  it('a write into another group is not held up by a busy group: it is sent at once, alone', async () => {
    const [a, b, c] = [await h.agent('glx'), await h.agent('gly'), await h.agent('glz')];
    const g1 = await groupWith(h, [a, b]);
    const g2 = await groupWith(h, [b, c]);
    const { services, sent } = heldServices(g1, 1);
    // The second write into g1 starts once Fuel is answered (not merely sent): until it queues, Lunch stays held.
    let fuelAnswered!: () => void;
    const fuelDone = new Promise<void>((resolve) => (fuelAnswered = resolve));
    const [one, two, three] = await Promise.all([
      callWith(services, a, 'add_expense', { group_id: g1, description: 'Lunch', amount_minor: 1000 }),
      (async () => {
        while (sent.length < 1) await new Promise((r) => setTimeout(r, 10)); // Lunch is held in g1's lane
        const fuel = await callWith(services, c, 'add_expense', { group_id: g2, description: 'Fuel', amount_minor: 3000 });
        // Fuel was answered while Lunch is still held; now a second write into g1 queues behind it and releases it.
        expect(sent.map((x) => x.documents)).toEqual([1, 1]);
        fuelAnswered();
        return fuel;
      })(),
      (async () => {
        await fuelDone;
        return callWith(services, b, 'record_payment', { group_id: g1, to_handle: a.handle, amount_minor: 200, allow_overpayment: true });
      })(),
    ]);
    expect([one.expense.description, two.expense.description, three.payment.amount_minor]).toEqual(['Lunch', 'Fuel', 200]);
    expect(await balancesOf(h, a, g1)).toEqual({ [a.handle]: 500, [b.handle]: -500 });
    expect(await balancesOf(h, b, g2)).toEqual({ [b.handle]: -1500, [c.handle]: 1500 });
    await expectLedgerOk(h);
  });

  it('new groups share a statement once two are in flight; each is its own group with its creator as admin', async () => {
    const a = await h.agent('gln');
    const { services, sent, lanes } = heldServices(undefined, 4, { hold: 2 });
    const names = ['One', 'Two', 'Three', 'Four', 'Five', 'Six'];
    const made = await Promise.all(names.map((name) => callWith(services, a, 'create_group', { name, currency: 'EUR' })));
    expect(sent.map((x) => x.documents)).toEqual([1, 1, 4]);
    expect(lanes.stats).toEqual({ combined: 1, documents: 4 });
    expect(made.map((m) => m.group.name)).toEqual(names);
    const listed = await h.call(a, 'list_groups', {});
    const mine = new Set(listed.groups.map((g: { group_id: string }) => g.group_id));
    for (const m of made) expect(mine.has(m.group.group_id)).toBe(true);
    for (const m of made) expect((await h.call(a, 'get_group', { group_id: m.group.group_id })).group.name).toBe(m.group.name);
    await expectLedgerOk(h);
  });

  it('writes into other groups share one statement once both slots are taken, each answered as if alone', async () => {
    const [a, b] = [await h.agent('glk'), await h.agent('gll')];
    const groups: string[] = [];
    for (let i = 0; i < 5; i++) groups.push(await groupWith(h, [a, b]));
    const sent: Array<{ name: string; groups: string[] }> = [];
    let held = 0;
    const queuedInAll = () => groups.reduce((n, g) => n + lanes.queued(g), 0);
    const pool = poolWithQuery(h.services.pool, async (real, args) => {
      const name = statementName(args);
      if (name === 'kitty_apply_batch' || name === 'kitty_apply_batches') {
        sent.push({ name, groups: groupsSent(args) });
        // The first two writes take both slots and wait until the three others have queued behind them.
        if (name === 'kitty_apply_batch' && held++ < 2)
          for (let i = 0; i < 500 && queuedInAll() < 3; i++) await new Promise((r) => setTimeout(r, 10));
      }
      return real(...args);
    });
    const lanes: GroupCommit = groupCommitFor(pool);
    const services: Services = { ...h.services, pool };
    const answers = await Promise.all(
      groups.map((g, i) => callWith(services, a, 'add_expense', { group_id: g, description: `Trip ${i}`, amount_minor: 1000 + 2 * i })),
    );
    expect(sent.map((x) => x.name)).toEqual(['kitty_apply_batch', 'kitty_apply_batch', 'kitty_apply_batches']);
    expect(new Set(sent[2]!.groups).size).toBe(3);
    expect(sent.flatMap((x) => x.groups).sort()).toEqual([...groups].sort());
    expect(lanes.stats).toEqual({ combined: 1, documents: 3 });
    answers.forEach((r, i) => {
      expect(r.expense.group_id).toBe(groups[i]);
      expect(r.expense.description).toBe(`Trip ${i}`);
    });
    for (const [i, g] of groups.entries()) expect(await balancesOf(h, a, g)).toEqual({ [a.handle]: 500 + i, [b.handle]: -(500 + i) });
    await expectLedgerOk(h);
  });

  it('a write whose group has a statement in flight waits, and the writes of other groups behind it are sent without it', async () => {
    const [a, b, c] = [await h.agent('glo'), await h.agent('glu'), await h.agent('glv')];
    const g1 = await groupWith(h, [a, b]);
    const g2 = await groupWith(h, [b, c]);
    const g3 = await groupWith(h, [a, c]);
    const sent: string[][] = [];
    let releaseFirst!: () => void;
    const firstHeld = new Promise<void>((r) => (releaseFirst = r));
    let n = 0;
    const pool = poolWithQuery(h.services.pool, async (real, args) => {
      const name = statementName(args);
      if (name === 'kitty_apply_batch' || name === 'kitty_apply_batches') {
        sent.push(groupsSent(args));
        if (n++ === 0) await firstHeld;
      }
      return real(...args);
    });
    const lanes = groupCommitFor(pool);
    const services: Services = { ...h.services, pool };
    const first = callWith(services, a, 'add_expense', { group_id: g1, description: 'First', amount_minor: 100 });
    while (sent.length < 1) await new Promise((r) => setTimeout(r, 10));
    // g1 is busy: its second write waits, while g2's (a free slot) leaves at once and is answered.
    const second = callWith(services, b, 'add_expense', { group_id: g1, description: 'Second', amount_minor: 200 });
    for (let i = 0; i < 500 && lanes.queued(g1) < 1; i++) await new Promise((r) => setTimeout(r, 10));
    expect(lanes.queued(g1)).toBe(1);
    expect(
      (await callWith(services, c, 'add_expense', { group_id: g2, description: 'Other', amount_minor: 300 })).expense.description,
    ).toBe('Other');
    expect(sent).toEqual([[g1], [g2]]);
    releaseFirst();
    const [x, y, z] = await Promise.all([
      first,
      second,
      callWith(services, c, 'add_expense', { group_id: g3, description: 'Third', amount_minor: 400 }),
    ]);
    expect([x.expense.description, y.expense.description, z.expense.description]).toEqual(['First', 'Second', 'Third']);
    // The second write of g1 went only once the first was answered.
    expect(sent.slice(2).flat()).toContain(g1);
    expect(await balancesOf(h, a, g1)).toEqual({ [a.handle]: -50, [b.handle]: 50 });
    await expectLedgerOk(h);
  });

  it('a statement that waits long (a lock held elsewhere) gives its slot back: a write into another group leaves after 100 ms', async () => {
    const [a, b] = [await h.agent('glt'), await h.agent('glj')];
    const [g1, g2, g3] = [await groupWith(h, [a, b]), await groupWith(h, [a, b]), await groupWith(h, [a, b])];
    const sent: Array<{ group: string; at: number }> = [];
    let thirdSent!: () => void;
    const third = new Promise<void>((r) => (thirdSent = r));
    const pool = poolWithQuery(h.services.pool, async (real, args) => {
      if (statementName(args) === 'kitty_apply_batch') {
        const group = groupsSent(args)[0]!;
        sent.push({ group, at: Date.now() });
        // The writes into g1 and g2 take both slots and stay in flight until g3's is sent (at most 5 s).
        if (group === g3) thirdSent();
        else await Promise.race([third, new Promise((r) => setTimeout(r, 5000))]);
      }
      return real(...args);
    });
    const services: Services = { ...h.services, pool };
    const expense = (group_id: string, description: string) =>
      callWith(services, a, 'add_expense', { group_id, description, amount_minor: 400 });
    const held = [expense(g1, 'Held one'), expense(g2, 'Held two')];
    while (sent.length < 2) await new Promise((r) => setTimeout(r, 5));
    const z = await expense(g3, 'Meanwhile');
    expect(z.expense.description).toBe('Meanwhile');
    expect(sent.map((x) => x.group).slice(2)).toEqual([g3]);
    // Both slots were taken: it left once the first held statement had been in flight 100 ms, not when they ended.
    const after = sent[2]!.at - sent[0]!.at;
    expect(after).toBeGreaterThanOrEqual(80);
    expect(after).toBeLessThan(2000);
    expect((await Promise.all(held)).map((r) => r.expense.description)).toEqual(['Held one', 'Held two']);
    await expectLedgerOk(h);
  });

  it('two instances writing concurrently over groups that share members: combined statements of several groups, no deadlock, the ledger holds', async () => {
    const agents: TestAgent[] = [];
    for (let i = 0; i < 6; i++) agents.push(await h.agent(`gls${i}`));
    const [p, q, r, s, t, u] = agents as [TestAgent, TestAgent, TestAgent, TestAgent, TestAgent, TestAgent];
    const members = [
      [p, q, r],
      [r, s, t],
      [t, u, p],
      [u, q, s],
      [p, s],
      [q, t],
    ];
    const groups: string[] = [];
    for (const m of members) groups.push(await groupWith(h, m));
    const mixed: number[] = [];
    const instance = () => {
      let held = 0;
      const queuedInAll = () => groups.reduce((n, g) => n + lanes.queued(g), 0);
      const pool = poolWithQuery(h.services.pool, async (real, args) => {
        if (statementName(args) === 'kitty_apply_batches') mixed.push(new Set(groupsSent(args)).size);
        // Each instance's first two statements wait (at most 5 s) until 20 writes queue behind them: at most 18 of
        // those can be of the two busy groups (ten writes per group), so a freed statement takes writes of two groups.
        if (statementName(args) === 'kitty_apply_batch' && held++ < 2)
          for (let i = 0; i < 500 && queuedInAll() < 20; i++) await new Promise((r) => setTimeout(r, 10));
        return real(...args);
      });
      const lanes = groupCommitFor(pool);
      return { services: { ...h.services, pool } as Services, lanes };
    };
    const instances = [instance(), instance()];
    const started = Date.now();
    const results = await Promise.all(
      Array.from({ length: 120 }, (_, i) => {
        const g = i % groups.length;
        const m = members[g]!;
        const [payer, other] = [m[i % m.length]!, m[(i + 1) % m.length]!];
        const { services } = instances[Math.floor(i / groups.length) % 2]!; // each instance writes into all six groups
        return settled(
          i % 3 === 2
            ? callWith(services, payer, 'record_payment', {
                group_id: groups[g],
                to_handle: other.handle,
                amount_minor: 5 + i,
                allow_overpayment: true,
              })
            : callWith(services, payer, 'add_expense', { group_id: groups[g], description: `Mixed ${i}`, amount_minor: 60 + i }),
        );
      }),
    );
    expect(results.filter((x) => 'error' in x)).toEqual([]);
    // Statements carried writes of several groups (what could deadlock, were rows locked write by write).
    expect(Math.max(...mixed)).toBeGreaterThan(1);
    // A deadlock costs PostgreSQL's deadlock_timeout (1 s) before one statement is rolled back and sent again.
    expect(Date.now() - started).toBeLessThan(15_000);
    const listed = await Promise.all(groups.map((g, i) => h.call(members[i]![0]!, 'list_expenses', { group_id: g, limit: 100 })));
    expect(listed.reduce((n, l) => n + l.expenses.length, 0)).toBe(80);
    await expectLedgerOk(h);
  });

  it('many concurrent writes over groups that share members: all land once, no deadlock, the ledger holds', async () => {
    const agents: TestAgent[] = [];
    for (let i = 0; i < 5; i++) agents.push(await h.agent(`glm${i}`));
    const [p, q, r, s, t] = agents as [TestAgent, TestAgent, TestAgent, TestAgent, TestAgent];
    const groups = [
      await groupWith(h, [p, q, r]),
      await groupWith(h, [q, r, s, t]),
      await groupWith(h, [t, p, s]),
      await groupWith(h, [r, p]),
    ];
    const pool = poolWithQuery(h.services.pool, (real, args) => real(...args));
    const lanes = groupCommitFor(pool);
    const services: Services = { ...h.services, pool };
    const members = [
      [p, q, r],
      [q, r, s, t],
      [t, p, s],
      [r, p],
    ];
    const calls = Array.from({ length: 80 }, (_, i) => {
      const g = i % groups.length;
      const [payer, other] = [members[g]![i % members[g]!.length]!, members[g]![(i + 1) % members[g]!.length]!];
      return i % 4 === 3
        ? callWith(services, payer, 'record_payment', {
            group_id: groups[g],
            to_handle: other.handle,
            amount_minor: 10 + i,
            allow_overpayment: true,
          })
        : callWith(services, payer, 'add_expense', { group_id: groups[g], description: `Shared ${i}`, amount_minor: 100 + i });
    });
    const results = await Promise.all(calls.map(settled));
    expect(results.filter((x) => 'error' in x)).toEqual([]);
    expect(lanes.stats.combined).toBeGreaterThan(0);
    const listed = await Promise.all(groups.map((g, i) => h.call(members[i]![0]!, 'list_expenses', { group_id: g, limit: 100 })));
    expect(listed.reduce((n, l) => n + l.expenses.length, 0)).toBe(60);
    await expectLedgerOk(h);
  });
});
