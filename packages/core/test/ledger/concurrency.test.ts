/** Concurrency on real PostgreSQL (issue 3 "Proof"): no invariant breaks, no 500. */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createHarness, type Harness, type TestAgent } from '../harness.ts';
import { groupWith, expectLedgerOk } from '../ledger-helpers.ts';
import { ToolError } from '../../src/index.ts';

let h: Harness;
beforeAll(async () => {
  h = await createHarness();
});
afterAll(async () => {
  await h?.close();
});

async function settle<T>(p: Promise<T>): Promise<{ ok: true; v: T } | { ok: false; e: ToolError }> {
  try {
    return { ok: true, v: await p };
  } catch (e) {
    if (e instanceof ToolError) return { ok: false, e };
    throw e;
  }
}

describe('concurrency', () => {
  it('50 agents add expenses to one group at once', async () => {
    const agents: TestAgent[] = [];
    for (let i = 0; i < 50; i++) agents.push(await h.agent(`c${i}`));
    const g = await groupWith(h, agents.slice(0, 1), 'EUR', 'Crowd');
    const inv = await h.call(agents[0]!, 'create_invite', { group_id: g, max_uses: 49 });
    for (const a of agents.slice(1)) await h.call(a, 'join_group', { code: inv.invite.code });
    const results = await Promise.all(
      agents.map((a, i) => settle(h.call(a, 'add_expense', { group_id: g, description: `round ${i}`, amount_minor: 1001 + i }))),
    );
    const failures = results.filter((r) => !r.ok) as Array<{ ok: false; e: ToolError }>;
    // Transient contention may ask for a retry (409 TRANSIENT_CONFLICT with retry_after), never a 500.
    for (const f of failures) expect(f.e.kittyCode).toBe('TRANSIENT_CONFLICT');
    expect(failures.length).toBeLessThan(5);
    const list = await h.call(agents[0]!, 'list_expenses', { group_id: g, limit: 100 });
    expect(list.expenses).toHaveLength(50 - failures.length);
    await expectLedgerOk(h);
  });

  it('confirm vs cancel of the same payment: exactly one wins', async () => {
    for (let round = 0; round < 5; round++) {
      const [a, b] = [await h.agent('pa'), await h.agent('pb')];
      const g = await groupWith(h, [a, b]);
      await h.call(a, 'add_expense', { group_id: g, description: 'x', amount_minor: 1000 });
      const p = await h.call(b, 'record_payment', { group_id: g, to_handle: a.handle, amount_minor: 500 });
      const [conf, canc] = await Promise.all([
        settle(h.call(a, 'confirm_payment', { payment_id: p.payment.payment_id })),
        settle(h.call(b, 'cancel_payment', { payment_id: p.payment.payment_id })),
      ]);
      expect([conf.ok, canc.ok].filter(Boolean)).toHaveLength(1);
      const loser = (conf.ok ? canc : conf) as { ok: false; e: ToolError };
      expect(loser.e.kittyCode).toBe('PAYMENT_NOT_PENDING');
      const final = await h.call(a, 'get_payment', { payment_id: p.payment.payment_id });
      expect(final.payment.status).toBe(conf.ok ? 'confirmed' : 'cancelled');
    }
    await expectLedgerOk(h);
  });

  it('leave_group racing add_expense: either the expense includes the member or they left settled', async () => {
    for (let round = 0; round < 8; round++) {
      const [a, b, c] = [await h.agent('la'), await h.agent('lb'), await h.agent('lc')];
      const g = await groupWith(h, [a, b, c]);
      const [leave, add] = await Promise.all([
        settle(h.call(c, 'leave_group', { group_id: g })),
        settle(h.call(a, 'add_expense', { group_id: g, description: 'race', amount_minor: 300 })),
      ]);
      expect(add.ok).toBe(true);
      const shares = (add as any).v.expense.shares.map((s: any) => s.handle);
      if (leave.ok) {
        // left first: the default split no longer includes c
        expect(shares).not.toContain(c.handle);
      } else {
        expect(leave.e.kittyCode).toBe('NOT_SETTLED');
        expect(shares).toContain(c.handle);
      }
    }
    await expectLedgerOk(h);
  });
});
