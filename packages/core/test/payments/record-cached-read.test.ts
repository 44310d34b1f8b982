/**
 * record_payment may decide on the read of its group kept in memory (access/group-reads.ts), which has no balances.
 * Its guard then carries the group's fingerprint, the overpayment rule for the database to check (max_payment) and
 * the MD5 of the payee's payout methods the answer shows (payout_methods). These tests change what the cached read
 * holds behind its back — through the tools, or with plain SQL as another server instance would — and check that the
 * answer and the rows are what a fresh read would have given. The last test holds the database's overpayment rule
 * equal to the TypeScript one (assertNotOverpaying) on the boundaries.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createHarness, type Harness, type TestAgent } from '../harness.ts';
import { groupWith, expectLedgerOk, balancesOf } from '../ledger-helpers.ts';
import { assertNotOverpaying } from '../../src/areas/payments/payments.ts';

let h: Harness;
beforeAll(async () => {
  h = await createHarness();
});
afterAll(async () => {
  await h?.close();
});

const sql = (text: string, values: unknown[]) => h.services.pool.query(text, values);
/** A group of `agents` where the second and third each owe the first 600 minor units; its read is cached afterwards. */
async function owingGroup(agents: TestAgent[]): Promise<string> {
  const g = await groupWith(h, agents);
  const [payee, ...payers] = agents;
  await h.call(payee!, 'add_expense', {
    group_id: g,
    description: 'Dinner',
    amount_minor: 600 * payers.length,
    split: { method: 'exact', participants: payers.map((p) => ({ handle: p.handle, amount_minor: 600 })) },
  });
  return g;
}
const pay = (payer: TestAgent, g: string, payee: TestAgent, amount: number, extra: Record<string, unknown> = {}) =>
  h.call(payer, 'record_payment', { group_id: g, to_handle: payee.handle, amount_minor: amount, ...extra });

describe('record_payment on a cached read of its group', () => {
  it('shows the payout methods stored now in pay_with, after another instance changed them (plain SQL)', async () => {
    const [ana, ben] = [await h.agent('pma'), await h.agent('pmb')];
    await h.call(ana, 'update_me', { payout_methods: [{ type: 'paypal_me', username: 'anaold' }] });
    const g = await owingGroup([ana, ben]);
    expect((await pay(ben, g, ana, 100)).payment.pay_with[0].url).toContain('/anaold/');
    await sql(`UPDATE agents SET payout_methods = '[{"type":"paypal_me","username":"ananew"}]'::jsonb WHERE id = $1`, [ana.agentId]);
    expect((await pay(ben, g, ana, 100)).payment.pay_with[0].url).toContain('/ananew/');
    await sql(`UPDATE agents SET payout_methods = NULL WHERE id = $1`, [ana.agentId]);
    expect((await pay(ben, g, ana, 100)).payment.pay_with).toBeUndefined();
    await expectLedgerOk(h);
  });

  it('records up to what is owed and refuses one minor unit more with what is owed, pending payments counted', async () => {
    const [ana, ben, cy] = [await h.agent('oa'), await h.agent('ob'), await h.agent('oc')];
    const g = await owingGroup([ana, ben, cy]);
    expect((await pay(ben, g, ana, 600)).payment.status).toBe('pending'); // exactly what ben owes
    const err = await h.fail(ben, 'record_payment', { group_id: g, to_handle: ana.handle, amount_minor: 1 });
    expect(err.kittyCode).toBe('OVERPAYMENT');
    expect(err.details).toMatchObject({ payer_owes_minor: 0, payee_is_owed_minor: 600, max_minor: 0 });
    // More debt since the read (a cached read has no balances): the database's rule counts it.
    await h.call(ana, 'add_expense', {
      group_id: g,
      description: 'Taxi',
      amount_minor: 250,
      split: { method: 'exact', participants: [{ handle: cy.handle, amount_minor: 250 }] },
    });
    expect((await pay(cy, g, ana, 850)).payment.status).toBe('pending');
    expect((await h.fail(cy, 'record_payment', { group_id: g, to_handle: ana.handle, amount_minor: 1 })).kittyCode).toBe('OVERPAYMENT');
    expect(await balancesOf(h, ana, g)).toEqual({ [ana.handle]: 1450, [ben.handle]: -600, [cy.handle]: -850 });
    await expectLedgerOk(h);
  });

  it('answers VALIDATION_ERROR for a payee who left since the read, and writes nothing', async () => {
    const [ana, ben, cy] = [await h.agent('la'), await h.agent('lb'), await h.agent('lc')];
    const g = await owingGroup([ana, ben]);
    const invite = await h.call(ana, 'create_invite', { group_id: g, max_uses: 1 });
    await h.call(cy, 'join_group', { code: invite.invite.code });
    await pay(ben, g, ana, 100, { allow_overpayment: true }); // cached: cy among the members
    await h.call(cy, 'leave_group', { group_id: g });
    const err = await h.fail(ben, 'record_payment', { group_id: g, to_handle: cy.handle, amount_minor: 50, allow_overpayment: true });
    expect(err.kittyCode).toBe('VALIDATION_ERROR');
    expect((await h.call(ben, 'list_payments', { group_id: g })).payments).toHaveLength(1);
    await expectLedgerOk(h);
  });

  it('previews (dry_run) on a fresh read: the payout methods stored now', async () => {
    const [ana, ben] = [await h.agent('va'), await h.agent('vb')];
    await h.call(ana, 'update_me', { payout_methods: [{ type: 'paypal_me', username: 'cachedname' }] });
    const g = await owingGroup([ana, ben]);
    await pay(ben, g, ana, 100);
    await sql(`UPDATE agents SET payout_methods = '[{"type":"paypal_me","username":"freshname"}]'::jsonb WHERE id = $1`, [ana.agentId]);
    const preview = await pay(ben, g, ana, 100, { dry_run: true });
    expect(preview.payment.pay_with[0].url).toContain('/freshname/');
  });
});

describe("the database's overpayment rule (guard max_payment)", () => {
  it('accepts and refuses exactly what assertNotOverpaying accepts and refuses', async () => {
    const [ana, ben] = [await h.agent('ra'), await h.agent('rb')];
    const g = await groupWith(h, [ana, ben]);
    // [payer balance, payer pending, payee balance, payee pending], every combination of the values below plus the
    // largest safe amounts; each tried at max - 1, max and max + 1.
    const cases: number[][] = [[-9007199254740991, 0, 9007199254740991, 0]];
    for (const pb of [-900, -600, 0, 300])
      for (const pp of [0, 200, -100]) for (const qb of [600, 900, 0, -50]) for (const qp of [0, -200, 100]) cases.push([pb, pp, qb, qp]);
    const client = await h.services.pool.connect();
    try {
      for (const [pb, pp, qb, qp] of cases) {
        const max = [-(pb! + pp!), qb! + qp!].map((v) => (v > 0 ? v : 0)).reduce((a, b) => (a < b ? a : b));
        for (const amount of [max - 1, max, max + 1].filter((a) => a > 0)) {
          const label = `${[pb, pp, qb, qp].join(',')} amount ${amount}`;
          let tsAccepts = true;
          try {
            assertNotOverpaying(
              { id: g, currency: 'EUR' },
              { agentId: ben.agentId, handle: ben.handle, balanceMinor: BigInt(pb!), balancePendingMinor: BigInt(pp!) },
              { agentId: ana.agentId, handle: ana.handle, balanceMinor: BigInt(qb!), balancePendingMinor: BigInt(qp!) },
              BigInt(amount),
            );
          } catch {
            tsAccepts = false;
          }
          await client.query('BEGIN');
          const set = 'UPDATE memberships SET balance_minor = $3, balance_pending_minor = $4 WHERE group_id = $1 AND agent_id = $2';
          await client.query(set, [g, ben.agentId, pb, pp]);
          await client.query(set, [g, ana.agentId, qb, qp]);
          const doc = {
            group_id: g,
            guard: { lock: 'share', max_payment: { payer_id: ben.agentId, payee_id: ana.agentId, amount_minor: String(amount) } },
          };
          const dbAccepts = await client.query('SELECT kitty_apply_batch($1::jsonb)', [JSON.stringify(doc)]).then(
            () => true,
            (e: { code?: string }) => (e.code === 'KB001' ? false : Promise.reject(e)),
          );
          await client.query('ROLLBACK');
          expect(dbAccepts, label).toBe(tsAccepts);
        }
      }
    } finally {
      client.release();
    }
    await expectLedgerOk(h);
  });
});
