/**
 * add_expense may decide on a read of its group kept in memory (access/group-reads.ts). These tests change the group
 * behind that cache's back — through the tools, or with plain SQL as another server instance would — and check that
 * the next write answers and writes what a fresh read would have given: the write's guard compares the fingerprint of
 * what it decided on with kitty_group_fingerprint, computed in the database.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { randomUUID } from 'node:crypto';
import { createHarness, type Harness, type TestAgent } from '../harness.ts';
import { groupWith, expectLedgerOk, balancesOf } from '../ledger-helpers.ts';
import { groupFingerprint, readGroupIdentities } from '../../src/access/group-reads.ts';
import { WriteBatch } from '../../src/kernel/write-batch.ts';

let h: Harness;
beforeAll(async () => {
  h = await createHarness();
});
afterAll(async () => {
  await h?.close();
});

const sql = (text: string, values: unknown[]) => h.services.pool.query(text, values);
const dbFingerprint = async (groupId: string) =>
  (await sql('SELECT kitty_group_fingerprint($1::uuid) AS f', [groupId])).rows[0].f as string | null;
const addExpense = (agent: TestAgent, groupId: string, extra: Record<string, unknown> = {}) =>
  h.call(agent, 'add_expense', { group_id: groupId, description: 'Lunch', amount_minor: 1200, ...extra });
/** The text of `agent`'s newest inbox item. */
const newestItem = async (agent: TestAgent) => (await h.call(agent, 'get_inbox', {})).items[0].text as string;

describe('the fingerprint of a group', () => {
  it('is the same computed from a read in TypeScript and from the tables in PostgreSQL, whatever the names hold', async () => {
    const names = ['Trip', 'Ferien 🏖️ in Zürich', 'e\u0301te\u0301 ~ 3:14', '東京旅行', 'שלום "quotes" \\ back', '𝔘𝔫𝔦𝔠𝔬𝔡𝔢'];
    for (const name of names) {
      const agents = [await h.agent('fa'), await h.agent('fb'), await h.agent('fc')];
      const g = await groupWith(h, agents, 'EUR', name.slice(0, 80));
      await h.call(agents[1]!, 'update_me', { display_name: `${name.slice(0, 20)} · ß` });
      const read = await readGroupIdentities(h.services.pool, g, agents[0]!.agentId, new WriteBatch(), undefined);
      expect(read.group.name).toBe(name.slice(0, 80));
      expect(read.fingerprint, name).toBe(await dbFingerprint(g));
      expect(groupFingerprint(read.group, read.members.values())).toBe(read.fingerprint);
    }
  });

  it('is the same for a direct ledger (direct key set), and changes with each field it sums up', async () => {
    const [a, b] = [await h.agent('da'), await h.agent('db')];
    await groupWith(h, [a, b]); // they share a group: either may open a direct ledger with the other
    const opened = await h.call(a, 'open_direct_group', { handle: b.handle, currency: 'EUR' });
    const g = opened.group.group_id as string;
    const read = await readGroupIdentities(h.services.pool, g, a.agentId, new WriteBatch(), undefined);
    expect(read.group.directKey).not.toBeNull();
    expect(read.fingerprint).toBe(await dbFingerprint(g));
    const before = read.fingerprint;
    await sql(`UPDATE agents SET display_name = display_name || '!' WHERE id = $1`, [a.agentId]);
    expect(await dbFingerprint(g)).not.toBe(before);
    expect(await dbFingerprint(randomUUID())).toBeNull();
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
