/**
 * add_expense may decide on a read of its group kept in memory (access/group-reads.ts). These tests change the group
 * behind that cache's back — through the tools, or with plain SQL as another server instance would — and check that
 * the next write answers and writes what a fresh read would have given: the write's guard compares the group's version
 * as read with groups.read_version, which triggers bump whenever what a decision may use changes.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { randomUUID } from 'node:crypto';
import { createHarness, type Harness, type TestAgent } from '../harness.ts';
import { groupWith, expectLedgerOk, balancesOf } from '../ledger-helpers.ts';
import { readGroupIdentities } from '../../src/access/group-reads.ts';
import { WriteBatch } from '../../src/kernel/write-batch.ts';
import { verifyLedger } from '../../src/index.ts';

let h: Harness;
beforeAll(async () => {
  h = await createHarness();
});
afterAll(async () => {
  await h?.close();
});

const sql = (text: string, values: unknown[]) => h.services.pool.query(text, values);
const addExpense = (agent: TestAgent, groupId: string, extra: Record<string, unknown> = {}) =>
  h.call(agent, 'add_expense', { group_id: groupId, description: 'Lunch', amount_minor: 1200, ...extra });
/** The text of `agent`'s newest inbox item. */
const newestItem = async (agent: TestAgent) => (await h.call(agent, 'get_inbox', {})).items[0].text as string;

const readVersion = async (groupId: string) =>
  (await sql('SELECT read_version::text AS v FROM groups WHERE id = $1', [groupId])).rows[0].v as string;
/** kitty_apply_batch with only a guard (a share lock on group `g` plus `guard`) for `agent`; its status, or the SQLSTATE it raised. */
const guardOnly = async (agent: TestAgent, g: string, guard: Record<string, unknown>) => {
  const doc = {
    idempotency: { agent_id: agent.agentId, tool: 'test', key: randomUUID(), request_hash: 'h', response: {} },
    group_id: g,
    guard: { lock: 'share', ...guard },
  };
  try {
    return (await sql('SELECT kitty_apply_batch($1::jsonb) AS o', [JSON.stringify(doc)])).rows[0].o.status as string;
  } catch (e) {
    return (e as { code: string }).code;
  }
};

describe('the read version of a group', () => {
  it('is what the read answers, and moves with each field a decision may use, not with balances or a description', async () => {
    const [a, b, c] = [await h.agent('va'), await h.agent('vb'), await h.agent('vc')];
    const g = await groupWith(h, [a, b]);
    const read = await readGroupIdentities(h.services.pool, g, a.agentId, new WriteBatch(), undefined);
    expect(read.readVersion).toBe(await readVersion(g));
    let last = read.readVersion;
    /** Runs `change`, then says whether the group's version moved. */
    const moved = async (change: () => Promise<unknown>) => {
      await change();
      const now = await readVersion(g);
      const was = last;
      last = now;
      return now !== was;
    };
    expect(await moved(() => addExpense(a, g))).toBe(false); // balances, counters, inbox items
    expect(await moved(() => h.call(a, 'update_group', { group_id: g, description: 'Only words' }))).toBe(false);
    expect(await moved(() => h.call(b, 'update_me', { description: 'About me' }))).toBe(false);
    expect(await moved(() => h.call(a, 'update_group', { group_id: g, name: 'Renamed' }))).toBe(true);
    expect(await moved(() => h.call(b, 'update_me', { display_name: 'Bea · ß 東京' }))).toBe(true);
    expect(await moved(() => h.call(c, 'update_me', { display_name: 'Not a member' }))).toBe(false);
    const invite = await h.call(a, 'create_invite', { group_id: g, max_uses: 1 });
    expect(await moved(() => h.call(c, 'join_group', { code: invite.invite.code }))).toBe(true);
    expect(await moved(() => h.call(c, 'leave_group', { group_id: g }))).toBe(true);
    expect(await moved(() => h.call(c, 'update_me', { display_name: 'Left already' }))).toBe(false);
    // Plain SQL, as another instance or an operator would change the rows: the triggers still see it.
    expect(await moved(() => sql(`UPDATE agents SET display_name = display_name || '!' WHERE id = $1`, [a.agentId]))).toBe(true);
    // A membership left and back by SQL alone, member_count untouched (which stays right for the ledger checks).
    const setLeftAt = (value: string) =>
      sql(`UPDATE memberships SET left_at = ${value} WHERE group_id = $1 AND agent_id = $2`, [g, b.agentId]);
    expect(await moved(() => setLeftAt('now()'))).toBe(true);
    expect(await moved(() => setLeftAt('NULL'))).toBe(true);
    expect(await moved(() => sql(`UPDATE memberships SET balance_minor = balance_minor WHERE group_id = $1`, [g]))).toBe(false);
    expect(await moved(() => sql(`UPDATE groups SET members_can_edit = false WHERE id = $1`, [g]))).toBe(false);
  });

  it('relies on member_count for joins, which the ledger check holds to the active members', async () => {
    const [a, b] = [await h.agent('ma'), await h.agent('mb')];
    const g = await groupWith(h, [a, b]);
    expect((await verifyLedger(h.services.prisma, { groupId: g })).problems).toEqual([]);
    await sql('UPDATE groups SET member_count = 3 WHERE id = $1', [g]);
    expect((await verifyLedger(h.services.prisma, { groupId: g })).problems).toEqual([`group ${g}: member_count 3 ≠ 2 active members`]);
    await sql('UPDATE groups SET member_count = 2 WHERE id = $1', [g]);
  });

  it("is the guard's test: a write naming an older version writes nothing (KB001); the fingerprint key of the previous version still works", async () => {
    const [a, b] = [await h.agent('ka'), await h.agent('kb')];
    const g = await groupWith(h, [a, b]);
    const v = await readVersion(g);
    expect(await guardOnly(a, g, { read_version: v })).toBe('applied');
    await h.call(a, 'update_group', { group_id: g, name: 'Moved on' });
    expect(await guardOnly(a, g, { read_version: v })).toBe('KB001');
    expect(await guardOnly(a, g, { read_version: await readVersion(g) })).toBe('applied');
    // An instance of the previous version, during a deploy, sends the fingerprint computed from its read.
    const fingerprint = (await sql('SELECT kitty_group_fingerprint($1::uuid) AS f', [g])).rows[0].f as string;
    expect(await guardOnly(a, g, { fingerprint })).toBe('applied');
    expect(await guardOnly(a, g, { fingerprint: fingerprint.replace(/^./, (x) => (x === '0' ? '1' : '0')) })).toBe('KB001');
  });

  it('a display-name change waits for a write holding the group before it locks its agent row (no deadlock)', async () => {
    const [a, b] = [await h.agent('xa'), await h.agent('xb')];
    const g = await groupWith(h, [a, b]);
    // A write in progress, as kitty_apply_batch holds it: the group locked FOR SHARE; it will update b's inbox counters.
    const write = await h.services.pool.connect();
    try {
      await write.query('BEGIN');
      await write.query('SELECT 1 FROM groups WHERE id = $1 FOR SHARE', [g]);
      const rename = h.call(b, 'update_me', { display_name: 'Bea Waits' });
      await new Promise((r) => setTimeout(r, 300)); // update_me is now waiting for the group
      // Had update_me locked b's row first (then the group, in the trigger), this would wait for it: a deadlock.
      await write.query(`SET LOCAL lock_timeout = '5s'`);
      await write.query('UPDATE agents SET inbox_unread = inbox_unread + 1 WHERE id = $1', [b.agentId]);
      await write.query('COMMIT');
      expect((await rename).agent.display_name).toBe('Bea Waits');
    } finally {
      write.release();
    }
  });
});

describe('add_expense on a cached read of its group', () => {
  it('names the group as it is now after another instance renamed it (plain SQL: no cache here was told)', async () => {
    const [a, b] = [await h.agent('ra'), await h.agent('rb')];
    const g = await groupWith(h, [a, b], 'EUR', 'Old name');
    await addExpense(a, g); // the read is cached now
    await sql(`UPDATE groups SET name = 'New name' WHERE id = $1`, [g]);
    const r = await addExpense(a, g);
    expect(r.suggested_next.join(' ')).toContain('"New name"');
    expect(await newestItem(b)).toContain('"New name"');
    await expectLedgerOk(h);
  });

  it("shows a member's new display name in the shares it answers", async () => {
    const [a, b] = [await h.agent('na'), await h.agent('nb')];
    const g = await groupWith(h, [a, b]);
    await addExpense(a, g);
    await h.call(b, 'update_me', { display_name: 'Bea Renamed' });
    const r = await addExpense(a, g);
    expect(r.expense.shares.find((s: { handle: string }) => s.handle === b.handle).display_name).toBe('Bea Renamed');
  });

  it('splits equally between the members as they are now: one who joined, one who left since the read', async () => {
    const [a, b, c, d] = [await h.agent('ja'), await h.agent('jb'), await h.agent('jc'), await h.agent('jd')];
    const g = await groupWith(h, [a, b, c]);
    await addExpense(a, g, { split: { participants: [{ handle: a.handle }, { handle: b.handle }] } }); // c owes nothing
    const invite = await h.call(a, 'create_invite', { group_id: g, max_uses: 1 });
    await h.call(d, 'join_group', { code: invite.invite.code });
    await h.call(c, 'leave_group', { group_id: g });
    const r = await addExpense(b, g, { amount_minor: 600 });
    expect(r.expense.shares.map((s: { handle: string }) => s.handle).sort()).toEqual([a.handle, b.handle, d.handle].sort());
    expect(await balancesOf(h, a, g)).toEqual({ [a.handle]: 400, [b.handle]: -200, [d.handle]: -200 });
    await expectLedgerOk(h);
  });

  it('accepts a split naming a member the cached read did not have yet (refused on the cache, decided again)', async () => {
    const [a, b, c] = [await h.agent('sa'), await h.agent('sb'), await h.agent('sc')];
    const g = await groupWith(h, [a, b]);
    await addExpense(a, g);
    const invite = await h.call(a, 'create_invite', { group_id: g, max_uses: 1 });
    await h.call(c, 'join_group', { code: invite.invite.code });
    const r = await addExpense(a, g, { split: { method: 'exact', participants: [{ handle: c.handle, amount_minor: 1200 }] } });
    expect(r.expense.shares.map((s: { handle: string }) => s.handle)).toContain(c.handle);
    await expectLedgerOk(h);
  });

  it('refuses a caller who left, and a group archived since the read, as a fresh read would; writes nothing', async () => {
    const [a, b, c] = [await h.agent('la'), await h.agent('lb'), await h.agent('lc')];
    const g = await groupWith(h, [a, b, c]);
    await addExpense(a, g, { split: { participants: [{ handle: a.handle }, { handle: b.handle }] } }); // cached, c among the members
    await h.call(c, 'leave_group', { group_id: g });
    expect((await h.fail(c, 'add_expense', { group_id: g, description: 'x', amount_minor: 100 })).kittyCode).toBe('FORBIDDEN');
    await addExpense(a, g); // cached again
    await sql('UPDATE groups SET archived_at = now() WHERE id = $1', [g]); // another instance archived it
    expect((await h.fail(a, 'add_expense', { group_id: g, description: 'y', amount_minor: 100 })).kittyCode).toBe('GROUP_ARCHIVED');
    expect((await h.call(a, 'list_expenses', { group_id: g })).expenses).toHaveLength(2);
    await expectLedgerOk(h);
  });

  it('previews (dry_run) on a fresh read, not on the cache', async () => {
    const [a, b] = [await h.agent('pa'), await h.agent('pb')];
    const g = await groupWith(h, [a, b], 'EUR', 'Before');
    await addExpense(a, g);
    await sql(`UPDATE agents SET display_name = 'Shown Fresh' WHERE id = $1`, [b.agentId]);
    const preview = await addExpense(a, g, { dry_run: true });
    expect(preview.expense.shares.find((s: { handle: string }) => s.handle === b.handle).display_name).toBe('Shown Fresh');
  });
});
