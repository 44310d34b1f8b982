/**
 * Consent and removal: nobody can put a debt on an agent who has not agreed to share that ledger,
 * and removal by an admin holds against the invites the removed agent came in with.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createHarness, type Harness } from '../harness.ts';
import { expectLedgerOk, groupWith } from '../ledger-helpers.ts';

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

describe('a direct ledger books nothing on an agent who has not accepted it', () => {
  const summary = async (a: Parameters<Harness['call']>[0]) =>
    (await h.call(a, 'get_inbox', {})) as { unread: number; requires_action: number; items: any[] };

  it('a one-sided contact opens it awaiting acceptance: every booking is refused with DIRECT_LEDGER_NOT_ACCEPTED and the other agent is untouched', async () => {
    const [ann, bob] = [await h.agent('ann'), await h.agent('bob')];
    await h.call(ann, 'add_contact', { handle: bob.handle }); // one-sided
    const before = await summary(bob);
    const opened = await h.call(ann, 'open_direct_group', { handle: bob.handle, currency: 'EUR' });
    expect(opened).toMatchObject({ created: true, accepted: false, group: { kind: 'direct', member_count: 1 } });
    expect(opened.acceptance_invite).toMatchObject({ status: 'active', target: { handle: bob.handle } });
    const g = opened.group.group_id;
    const after = await summary(bob);
    expect(after.requires_action).toBe(before.requires_action + 1);
    expect(after.items[0]).toMatchObject({ requires_action: true });
    expect(after.items[0].text).toContain(`@${ann.handle}`);

    const refusals = [
      await h.fail(ann, 'add_expense', {
        group_id: g,
        description: 'Dinner',
        amount_minor: 5000,
        split: { method: 'equal', participants: [{ handle: ann.handle }, { handle: bob.handle }] },
      }),
      await h.fail(ann, 'add_expense', { group_id: g, description: 'Solo', amount_minor: 5000 }),
      await h.fail(ann, 'add_expense', { group_id: g, description: 'Rent', amount_minor: 5000, repeat: { every: 1, unit: 'month' } }),
      await h.fail(ann, 'record_payment', { group_id: g, to_handle: bob.handle, amount_minor: 100 }),
      await h.fail(ann, 'record_payment', { group_id: g, from_handle: bob.handle, to_handle: ann.handle, amount_minor: 100 }),
      await h.fail(ann, 'import_expenses', {
        group_id: g,
        format: 'splitwise',
        csv: `Date,Description,Category,Cost,Currency,${ann.handle},${bob.handle}\n2026-01-02,Taxi,Transport,10.00,EUR,10.00,-10.00\n`,
      }),
    ];
    for (const e of refusals) {
      expect(e.kittyCode).toBe('DIRECT_LEDGER_NOT_ACCEPTED');
      expect(e.status).toBe(409);
      expect(e.message).toContain(`@${bob.handle}`);
      expect(e.suggestedAction).toMatch(/accept/);
    }
    // Bob is not in it: no balance, no membership.
    expect((await h.fail(bob, 'get_group', { group_id: g })).kittyCode).toBe('FORBIDDEN');
    expect(await h.services.prisma.membership.count({ where: { groupId: g, agentId: bob.agentId } })).toBe(0);
    expect(await h.services.prisma.expense.count({ where: { groupId: g } })).toBe(0);
    // Opening again changes nothing and does not nag bob again.
    const again = await h.call(ann, 'open_direct_group', { handle: bob.handle, currency: 'EUR' });
    expect(again).toMatchObject({ created: false, accepted: false, group: { group_id: g, member_count: 1 } });
    expect((await summary(bob)).requires_action).toBe(after.requires_action);

    // Bob accepts by opening the ledger with ann: now both are members (admins) and booking works.
    const accepted = await h.call(bob, 'open_direct_group', { handle: ann.handle, currency: 'EUR' });
    expect(accepted).toMatchObject({ created: false, accepted: true, group: { group_id: g, member_count: 2 } });
    expect((await summary(bob)).requires_action).toBe(before.requires_action);
    const detail = await h.call(ann, 'get_group', { group_id: g });
    expect(detail.members.map((m: any) => m.role)).toEqual(['admin', 'admin']);
    await h.call(ann, 'add_expense', { group_id: g, description: 'Dinner', amount_minor: 5000 });
    expect((await h.call(bob, 'get_group', { group_id: g })).group.my_balance_minor).toBe(-2500);
    await expectLedgerOk(h);
  });

  it('accepting with join_group and the code from the inbox; declining keeps it closed', async () => {
    const [cat, dan, eve] = [await h.agent('cat'), await h.agent('dan'), await h.agent('eve')];
    await h.call(cat, 'add_contact', { handle: dan.handle });
    const opened = await h.call(cat, 'open_direct_group', { handle: dan.handle, currency: 'USD' });
    // The code admits only dan.
    expect((await h.fail(eve, 'join_group', { code: opened.acceptance_invite.code })).kittyCode).toBe('FORBIDDEN');
    const joined = await h.call(dan, 'join_group', { code: opened.acceptance_invite.code });
    expect(joined.membership.role).toBe('admin');
    expect(joined.group.member_count).toBe(2);
    await h.call(dan, 'add_expense', { group_id: opened.group.group_id, description: 'Taxi', amount_minor: 1000 });

    await h.call(cat, 'add_contact', { handle: eve.handle });
    const toEve = await h.call(cat, 'open_direct_group', { handle: eve.handle, currency: 'USD' });
    await h.call(eve, 'decline_invite', { invite_id: toEve.acceptance_invite.invite_id });
    const e = await h.fail(cat, 'add_expense', { group_id: toEve.group.group_id, description: 'x', amount_minor: 100 });
    expect(e.kittyCode).toBe('DIRECT_LEDGER_NOT_ACCEPTED');
    const again = await h.call(cat, 'open_direct_group', { handle: eve.handle, currency: 'USD' });
    expect(again).toMatchObject({ accepted: false, acceptance_invite: { status: 'declined' } });
    expect((await h.fail(eve, 'join_group', { code: toEve.acceptance_invite.code })).kittyCode).toBe('INVITE_UNAVAILABLE');
    await expectLedgerOk(h);
  });

  it('an agent who has you as a contact has accepted you: the ledger opens with both at once', async () => {
    const [fox, gus] = [await h.agent('fox'), await h.agent('gus')];
    await h.call(gus, 'add_contact', { handle: fox.handle });
    await h.call(fox, 'add_contact', { handle: gus.handle });
    const opened = await h.call(fox, 'open_direct_group', { handle: gus.handle, currency: 'EUR' });
    expect(opened).toMatchObject({ created: true, accepted: true, acceptance_invite: null, group: { member_count: 2 } });
    await h.call(fox, 'add_expense', { group_id: opened.group.group_id, description: 'Lunch', amount_minor: 2000 });
    await expectLedgerOk(h);
  });

  it('while it waits: a message through the ledger is refused with a pointer to to_handle; archiving it withdraws the request', async () => {
    const [hal, ivy] = [await h.agent('hal'), await h.agent('ivy')];
    await h.call(hal, 'add_contact', { handle: ivy.handle });
    const before = (await summary(ivy)).requires_action;
    const opened = await h.call(hal, 'open_direct_group', { handle: ivy.handle, currency: 'EUR' });
    const e = await h.fail(hal, 'send_message', { group_id: opened.group.group_id, body: 'hi' });
    expect(e.kittyCode).toBe('DIRECT_LEDGER_NOT_ACCEPTED');
    expect(e.suggestedAction).toMatch(/to_handle/);
    expect((await h.call(hal, 'send_message', { to_handle: ivy.handle, body: 'hi' })).conversation_id).toBeDefined();
    expect((await summary(ivy)).requires_action).toBe(before + 1);
    await h.call(hal, 'archive_group', { group_id: opened.group.group_id });
    expect((await summary(ivy)).requires_action).toBe(before);
    expect((await h.fail(ivy, 'join_group', { code: opened.acceptance_invite.code })).kittyCode).toBe('INVITE_UNAVAILABLE');
  });

  it('accepting by code and by open_direct_group at once, while the opener opens again: one acceptance, both admins', async () => {
    const [joe, kay] = [await h.agent('joe'), await h.agent('kay')];
    await h.call(joe, 'add_contact', { handle: kay.handle });
    const base = (await summary(kay)).requires_action;
    const opened = await h.call(joe, 'open_direct_group', { handle: kay.handle, currency: 'GBP' });
    const rs = await Promise.all([
      h.call(kay, 'join_group', { code: opened.acceptance_invite.code }),
      h.call(kay, 'open_direct_group', { handle: joe.handle, currency: 'GBP' }),
      h.call(joe, 'open_direct_group', { handle: kay.handle, currency: 'GBP' }),
    ]);
    expect(rs.every((r) => r.group.group_id === opened.group.group_id)).toBe(true);
    const g = await h.call(joe, 'get_group', { group_id: opened.group.group_id });
    expect(g.members.map((m: any) => m.role)).toEqual(['admin', 'admin']);
    expect(g.group.member_count).toBe(2);
    expect((await summary(kay)).requires_action).toBe(base);
    await expectLedgerOk(h);
  });
});
