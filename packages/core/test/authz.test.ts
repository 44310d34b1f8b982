/**
 * Consent and removal: nobody can put a debt on an agent who has not agreed to share that ledger,
 * and removal by an admin holds against the invites the removed agent came in with.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createHarness, type Harness } from './harness.ts';
import { expectLedgerOk, groupWith } from './ledger-helpers.ts';

let h: Harness;
beforeAll(async () => {
  h = await createHarness();
});
afterAll(async () => {
  await h?.close();
});

describe('removed members cannot rejoin with an earlier invite', () => {
  it('the multi-use invite they joined with, and any invite created before the removal, no longer admit them; a new invite addressed to them does', async () => {
    const [admin, carl, dora] = [await h.agent('adm'), await h.agent('carl'), await h.agent('dora')];
    const g = (await h.call(admin, 'create_group', { name: 'Flat', currency: 'EUR' })).group.group_id;
    const multi = (await h.call(admin, 'create_invite', { group_id: g, max_uses: 10 })).invite;
    const spare = (await h.call(admin, 'create_invite', { group_id: g, max_uses: 5 })).invite; // created before the removal, never used by carl
    await h.call(carl, 'join_group', { code: multi.code });
    await h.call(dora, 'join_group', { code: multi.code });
    await h.call(admin, 'remove_member', { group_id: g, handle: carl.handle });

    for (const code of [multi.code, spare.code]) {
      const e = await h.fail(carl, 'join_group', { code });
      expect(e.kittyCode).toBe('FORBIDDEN');
      expect(e.message).toMatch(/removed/);
      expect(e.suggestedAction).toMatch(/new invite/);
    }
    // Not a member, the invites unconsumed by the refusals.
    expect((await h.fail(carl, 'get_group', { group_id: g })).kittyCode).toBe('FORBIDDEN');
    const after = (await h.call(admin, 'list_invites', { direction: 'sent', group_id: g })).invites;
    expect(after.find((i: { invite_id: string }) => i.invite_id === multi.invite_id).uses).toBe(2);

    // An untargeted invite created after the removal does not re-admit them either: it must name them.
    const fresh = (await h.call(admin, 'create_invite', { group_id: g, max_uses: 5 })).invite;
    expect((await h.fail(carl, 'join_group', { code: fresh.code })).kittyCode).toBe('FORBIDDEN');
    // Other agents still join with the old invite.
    const erin = await h.agent('erin');
    expect((await h.call(erin, 'join_group', { code: multi.code })).already_member).toBe(false);

    await h.call(admin, 'add_contact', { handle: carl.handle });
    const explicit = (await h.call(admin, 'create_invite', { group_id: g, target_handle: carl.handle })).invite;
    const joined = await h.call(carl, 'join_group', { code: explicit.code });
    expect(joined.already_member).toBe(false);
    expect(joined.group.member_count).toBe(4);

    // Back in, then leaving on their own: an earlier invite admits them again (only removal bars old invites).
    await h.call(carl, 'leave_group', { group_id: g });
    expect((await h.call(carl, 'join_group', { code: multi.code })).already_member).toBe(false);
    await expectLedgerOk(h);
  });

  it('a member who left on their own may come back with the invite they came in with', async () => {
    const [admin, fay] = [await h.agent('adm'), await h.agent('fay')];
    const g = await groupWith(h, [admin]);
    const inv = (await h.call(admin, 'create_invite', { group_id: g, max_uses: 3 })).invite;
    await h.call(fay, 'join_group', { code: inv.code });
    await h.call(fay, 'leave_group', { group_id: g });
    expect((await h.call(fay, 'join_group', { code: inv.code })).already_member).toBe(false);
  });
});
