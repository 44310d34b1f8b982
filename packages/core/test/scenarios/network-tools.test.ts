/**
 * Issue 4: the agent network — contacts, blocking, direct ledgers, invite lifecycle,
 * membership admin, messages and the inbox. Real PostgreSQL (fresh database per file).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createHarness, type Harness, type TestAgent } from '../harness.ts';

let h: Harness;
beforeAll(async () => {
  h = await createHarness();
});
afterAll(async () => {
  await h?.close();
});

const inbox = (a: TestAgent) => h.call(a, 'get_inbox', {});
const counters = async (a: TestAgent) => {
  const r = await inbox(a);
  return { unread: r.unread as number, requires_action: r.requires_action as number };
};
async function group(owner: TestAgent, name = 'Trip', currency = 'EUR') {
  return (await h.call(owner, 'create_group', { name, currency })).group.group_id as string;
}
async function joinVia(owner: TestAgent, groupId: string, joiner: TestAgent) {
  const inv = await h.call(owner, 'create_invite', { group_id: groupId });
  await h.call(joiner, 'join_group', { code: inv.invite.code });
}

describe('get_agent', () => {
  it('returns the public profile only, and how the agent stands with you', async () => {
    const a = await h.agent('ann');
    const b = await h.agent('bob');
    const r = await h.call(a, 'get_agent', { handle: b.handle });
    expect(Object.keys(r.agent).sort()).toEqual(['agent_id', 'created_at', 'description', 'display_name', 'handle']);
    expect(r.is_contact).toBe(false);
    expect(r.suggested_next[0]).toMatch(/^add_contact:/);
    expect((await h.fail(a, 'get_agent', { handle: 'no-such-agent-x' })).kittyCode).toBe('NOT_FOUND');
    expect((await h.call(a, 'get_agent', { handle: a.handle })).is_you).toBe(true);
  });
});

describe('contacts', () => {
  it('add, list, update, remove; private to their owner; the other agent is notified', async () => {
    const a = await h.agent('ann');
    const b = await h.agent('bob');
    const c = await h.agent('cat');
    const before = await counters(b);
    const r = await h.call(a, 'add_contact', { handle: b.handle, alias: 'Bobby', note: 'met in Lisbon' });
    expect(r.created).toBe(true);
    expect(r.contact).toMatchObject({ alias: 'Bobby', note: 'met in Lisbon', agent: { handle: b.handle } });
    expect(await counters(b)).toEqual({ unread: before.unread + 1, requires_action: before.requires_action });
    const item = (await inbox(b)).items[0];
    expect(item).toMatchObject({ kind: 'contact_added', read: false, requires_action: false });
    expect(item.text).toContain(a.handle);

    // adding again changes nothing and does not notify again
    const again = await h.call(a, 'add_contact', { handle: b.handle, alias: 'other' });
    expect(again.created).toBe(false);
    expect(again.contact.alias).toBe('Bobby');
    expect((await counters(b)).unread).toBe(before.unread + 1);

    const listA = await h.call(a, 'list_contacts', {});
    expect(listA.contacts.map((x: any) => x.agent.handle)).toEqual([b.handle]);
    // another agent's contacts are never readable: list_contacts only lists the caller's own
    expect((await h.call(c, 'list_contacts', {})).contacts).toEqual([]);
    expect((await h.call(b, 'list_contacts', {})).contacts).toEqual([]);

    const u = await h.call(a, 'update_contact', { handle: b.handle, alias: '', note: 'friend' });
    expect(u.contact).toMatchObject({ alias: null, note: 'friend' });
    expect((await h.fail(c, 'update_contact', { handle: b.handle, alias: 'x' })).kittyCode).toBe('NOT_A_CONTACT');
    expect((await h.fail(a, 'add_contact', { handle: a.handle })).kittyCode).toBe('VALIDATION_ERROR');
    expect((await h.fail(a, 'add_contact', { handle: b.handle, alias: 'bad\u0007' })).kittyCode).toBe('VALIDATION_ERROR');

    await h.call(a, 'remove_contact', { handle: b.handle });
    expect((await h.call(a, 'list_contacts', {})).contacts).toEqual([]);
    expect((await h.fail(a, 'remove_contact', { handle: b.handle })).kittyCode).toBe('NOT_A_CONTACT');
  });

  it('paginates newest first', async () => {
    const a = await h.agent('ann');
    const others = [];
    for (let i = 0; i < 5; i++) {
      const o = await h.agent(`p${i}x`);
      others.push(o);
      await h.call(a, 'add_contact', { handle: o.handle });
    }
    const p1 = await h.call(a, 'list_contacts', { limit: 3 });
    expect(p1.contacts).toHaveLength(3);
    const p2 = await h.call(a, 'list_contacts', { limit: 3, cursor: p1.next_cursor });
    expect(p2.contacts).toHaveLength(2);
    expect(p2.next_cursor).toBeNull();
    const seen = [...p1.contacts, ...p2.contacts].map((c: any) => c.agent.handle);
    expect(new Set(seen).size).toBe(5);
  });
});

describe('blocking', () => {
  it('a blocked agent cannot add, message or target-invite the blocker; it only gets a generic refusal; shared groups keep working', async () => {
    const a = await h.agent('ann');
    const b = await h.agent('bob');
    const g = await group(b, 'Shared');
    await joinVia(b, g, a);
    await h.call(a, 'add_contact', { handle: b.handle });
    const blk = await h.call(a, 'block_agent', { handle: b.handle });
    expect(blk.already_blocked).toBe(false);
    expect((await h.call(a, 'block_agent', { handle: b.handle })).already_blocked).toBe(true);
    // the blocker's own contact entry is gone; the block shows in include_blocked
    const la = await h.call(a, 'list_contacts', { include_blocked: true });
    expect(la.contacts).toEqual([]);
    expect(la.blocked_count).toBe(1);
    expect(la.blocked[0].agent.handle).toBe(b.handle);
    expect((await h.call(a, 'get_agent', { handle: b.handle })).blocked_by_you).toBe(true);

    const inboxBefore = await counters(a);
    // cannot add as contact
    const e1 = await h.fail(b, 'add_contact', { handle: a.handle });
    expect(e1.kittyCode).toBe('FORBIDDEN');
    // cannot message directly — same refusal as for a stranger
    const e2 = await h.fail(b, 'send_message', { to_handle: a.handle, body: 'hi' });
    const stranger = await h.agent('zed');
    const e3 = await h.fail(stranger, 'send_message', { to_handle: a.handle, body: 'hi' });
    expect(e2.kittyCode).toBe('FORBIDDEN');
    expect(e2.message).toBe(e3.message);
    expect(e2.message).not.toMatch(/block/i);
    expect(e2.suggestedAction).toBe(e3.suggestedAction);
    for (const e of [e1, e2]) expect(`${e.message} ${e.suggestedAction} ${JSON.stringify(e.details ?? {})}`).not.toMatch(/block/i);
    // cannot target-invite (even though b would have a as a contact)
    // (b could not add a as a contact, so the contact rule refuses first; the next test covers an existing contact)
    const g2 = await group(b, 'Other');
    const e4 = await h.fail(b, 'create_invite', { group_id: g2, target_handle: a.handle });
    expect(['NOT_A_CONTACT', 'FORBIDDEN']).toContain(e4.kittyCode);
    expect(`${e4.message} ${e4.suggestedAction}`).not.toMatch(/block/i);
    // nothing reached a's inbox
    expect(await counters(a)).toEqual(inboxBefore);

    // shared group keeps working: b can still read the group and post in the group conversation
    await h.call(b, 'get_group', { group_id: g });
    await h.call(b, 'send_message', { group_id: g, body: 'about the rent' });
    // a (who blocked b) sees the group message in the conversation but gets no inbox item for it
    const msgs = await h.call(a, 'list_messages', { group_id: g });
    expect(msgs.messages[0].body).toBe('about the rent');
    expect(await counters(a)).toEqual(inboxBefore);

    // the blocker cannot add the blocked agent while blocking; unblock lifts all refusals
    expect((await h.fail(a, 'add_contact', { handle: b.handle })).kittyCode).toBe('INVALID_STATE');
    expect((await h.call(a, 'unblock_agent', { handle: b.handle })).was_blocked).toBe(true);
    expect((await h.call(a, 'unblock_agent', { handle: b.handle })).was_blocked).toBe(false);
    await h.call(b, 'add_contact', { handle: a.handle });
    await h.call(b, 'send_message', { to_handle: a.handle, body: 'thanks' });
  });

  it('a block placed after the contact exists still refuses target invites', async () => {
    const a = await h.agent('ann');
    const b = await h.agent('bob');
    await h.call(b, 'add_contact', { handle: a.handle });
    await h.call(a, 'block_agent', { handle: b.handle });
    const g = await group(b);
    const e = await h.fail(b, 'create_invite', { group_id: g, target_handle: a.handle });
    expect(e.kittyCode).toBe('FORBIDDEN');
    expect(`${e.message} ${e.suggestedAction}`).not.toMatch(/block/i);
    const e2 = await h.fail(b, 'open_direct_group', { handle: a.handle, currency: 'EUR' });
    expect(e2.kittyCode).toBe('FORBIDDEN');
    expect(`${e2.message} ${e2.suggestedAction}`).not.toMatch(/block/i);
  });
});

describe('open_direct_group', () => {
  it('get-or-create per pair and currency, exactly two members, no invites, derived name', async () => {
    const a = await h.agent('ann');
    const b = await h.agent('bob');
    const stranger = await h.agent('zed');
    expect((await h.fail(a, 'open_direct_group', { handle: stranger.handle, currency: 'EUR' })).kittyCode).toBe('NOT_A_CONTACT');
    await h.call(a, 'add_contact', { handle: b.handle });
    const r1 = await h.call(a, 'open_direct_group', { handle: b.handle, currency: 'EUR' });
    expect(r1.created).toBe(true);
    // b has not added a: the ledger waits for b's acceptance
    expect(r1).toMatchObject({ accepted: false, group: { kind: 'direct', member_count: 1, currency: 'EUR' } });
    expect(r1.group.name).toContain(`@${a.handle}`);
    expect(r1.group.name).toContain(`@${b.handle}`);
    // either side gets the same ledger back; b opening it is b's acceptance (b does not need a as a contact)
    const r2 = await h.call(b, 'open_direct_group', { handle: a.handle, currency: 'EUR' });
    expect(r2.created).toBe(false);
    expect(r2).toMatchObject({ accepted: true, group: { group_id: r1.group.group_id, member_count: 2 } });
    // another currency → another ledger
    const r3 = await h.call(a, 'open_direct_group', { handle: b.handle, currency: 'USD' });
    expect(r3.group.group_id).not.toBe(r1.group.group_id);
    // idempotent by key
    const key = 'direct-key-123456';
    const k1 = await h.call(a, 'open_direct_group', { handle: b.handle, currency: 'JPY', idempotency_key: key });
    const k2 = await h.call(a, 'open_direct_group', { handle: b.handle, currency: 'JPY', idempotency_key: key });
    expect(k2).toEqual({ ...k1, replayed: true });
    // no invites, no leaving, no removing, no role changes
    const gid = r1.group.group_id;
    expect((await h.fail(a, 'create_invite', { group_id: gid })).kittyCode).toBe('INVALID_STATE');
    expect((await h.fail(a, 'leave_group', { group_id: gid })).kittyCode).toBe('INVALID_STATE');
    expect((await h.fail(a, 'remove_member', { group_id: gid, handle: b.handle })).kittyCode).toBe('INVALID_STATE');
    expect((await h.fail(a, 'set_member_role', { group_id: gid, handle: b.handle, role: 'member' })).kittyCode).toBe('INVALID_STATE');
    const detail = await h.call(b, 'get_group', { group_id: gid });
    expect(detail.members.map((m: any) => m.role)).toEqual(['admin', 'admin']);
    expect((await h.fail(a, 'open_direct_group', { handle: a.handle, currency: 'EUR' })).kittyCode).toBe('VALIDATION_ERROR');
    expect((await h.fail(a, 'open_direct_group', { handle: b.handle, currency: 'ZZZ' })).kittyCode).toBe('VALIDATION_ERROR');
  });

  it('concurrent opens from both sides create one ledger', async () => {
    const a = await h.agent('ann');
    const b = await h.agent('bob');
    await h.call(a, 'add_contact', { handle: b.handle });
    await h.call(b, 'add_contact', { handle: a.handle });
    const rs = await Promise.all([
      h.call(a, 'open_direct_group', { handle: b.handle, currency: 'GBP' }),
      h.call(b, 'open_direct_group', { handle: a.handle, currency: 'GBP' }),
      h.call(a, 'open_direct_group', { handle: b.handle, currency: 'GBP' }),
    ]);
    expect(new Set(rs.map((r) => r.group.group_id)).size).toBe(1);
    expect(rs.filter((r) => r.created)).toHaveLength(1);
  });

  it('a fellow group member without contact may open one; after archiving a fresh one opens', async () => {
    const a = await h.agent('ann');
    const b = await h.agent('bob');
    const g = await group(a);
    await joinVia(a, g, b);
    const r = await h.call(b, 'open_direct_group', { handle: a.handle, currency: 'EUR' });
    expect(r.accepted).toBe(false); // sharing a group is not consent to a direct ledger
    expect((await h.call(a, 'open_direct_group', { handle: b.handle, currency: 'EUR' })).accepted).toBe(true);
    await h.call(a, 'archive_group', { group_id: r.group.group_id });
    const r2 = await h.call(b, 'open_direct_group', { handle: a.handle, currency: 'EUR' });
    expect(r2.created).toBe(true);
    expect(r2.group.group_id).not.toBe(r.group.group_id);
  });
});

describe('membership admin', () => {
  it('only admins remove members; the member must be settled; members are notified', async () => {
    const a = await h.agent('ann');
    const b = await h.agent('bob');
    const c = await h.agent('cat');
    const g = await group(a);
    await joinVia(a, g, b);
    await joinVia(a, g, c);
    expect((await h.fail(b, 'remove_member', { group_id: g, handle: c.handle })).kittyCode).toBe('FORBIDDEN');
    expect((await h.fail(b, 'set_member_role', { group_id: g, handle: b.handle, role: 'admin' })).kittyCode).toBe('FORBIDDEN');
    const outsider = await h.agent('out');
    expect((await h.fail(outsider, 'remove_member', { group_id: g, handle: c.handle })).kittyCode).toBe('FORBIDDEN');
    expect((await h.fail(a, 'remove_member', { group_id: g, handle: outsider.handle })).kittyCode).toBe('NOT_FOUND');
    expect((await h.fail(a, 'remove_member', { group_id: g, handle: a.handle })).kittyCode).toBe('INVALID_STATE');
    expect((await h.fail(a, 'remove_member', { group_id: g })).kittyCode).toBe('VALIDATION_ERROR');

    // an unsettled member cannot be removed
    await h.services.prisma.membership.update({
      where: { groupId_agentId: { groupId: g, agentId: c.agentId } },
      data: { balanceMinor: 500n },
    });
    const ns = await h.fail(a, 'remove_member', { group_id: g, agent_id: c.agentId });
    expect(ns.kittyCode).toBe('NOT_SETTLED');
    expect(ns.details).toMatchObject({ balance_minor: 500 });
    await h.services.prisma.membership.update({
      where: { groupId_agentId: { groupId: g, agentId: c.agentId } },
      data: { balanceMinor: 0n, pendingCount: 1 },
    });
    expect((await h.fail(a, 'remove_member', { group_id: g, agent_id: c.agentId })).kittyCode).toBe('NOT_SETTLED');
    await h.services.prisma.membership.update({
      where: { groupId_agentId: { groupId: g, agentId: c.agentId } },
      data: { pendingCount: 0 },
    });

    const cBefore = (await counters(c)).unread;
    const bBefore = (await counters(b)).unread;
    const r = await h.call(a, 'remove_member', { group_id: g, agent_id: c.agentId });
    expect(r.member_count).toBe(2);
    expect((await counters(c)).unread).toBe(cBefore + 1);
    expect((await inbox(c)).items[0].kind).toBe('member_removed');
    expect((await counters(b)).unread).toBe(bBefore + 1);
    expect((await h.fail(c, 'get_group', { group_id: g })).kittyCode).toBe('FORBIDDEN');
  });

  it('roles: admin ↔ member, and a group always keeps one admin', async () => {
    const a = await h.agent('ann');
    const b = await h.agent('bob');
    const g = await group(a);
    await joinVia(a, g, b);
    expect((await h.fail(a, 'set_member_role', { group_id: g, handle: a.handle, role: 'member' })).kittyCode).toBe('LAST_ADMIN');
    const r = await h.call(a, 'set_member_role', { group_id: g, handle: b.handle, role: 'admin' });
    expect(r).toMatchObject({ changed: true, member: { role: 'admin', handle: b.handle } });
    expect((await h.call(a, 'set_member_role', { group_id: g, handle: b.handle, role: 'admin' })).changed).toBe(false);
    // now a can step down; b is the only admin and cannot
    await h.call(a, 'set_member_role', { group_id: g, handle: a.handle, role: 'member' });
    expect((await h.fail(b, 'set_member_role', { group_id: g, handle: b.handle, role: 'member' })).kittyCode).toBe('LAST_ADMIN');
    expect((await h.fail(a, 'set_member_role', { group_id: g, handle: b.handle, role: 'member' })).kittyCode).toBe('FORBIDDEN');
    const detail = await h.call(a, 'get_group', { group_id: g });
    expect(detail.members.filter((m: any) => m.role === 'admin')).toHaveLength(1);
  });
});

describe('invite lifecycle', () => {
  it('targeted invites need a contact; only the target can use, preview-join or decline them', async () => {
    const a = await h.agent('ann');
    const b = await h.agent('bob');
    const c = await h.agent('cat');
    const g = await group(a);
    expect((await h.fail(a, 'create_invite', { group_id: g, target_handle: b.handle })).kittyCode).toBe('NOT_A_CONTACT');
    await h.call(a, 'add_contact', { handle: b.handle });
    const inv = (await h.call(a, 'create_invite', { group_id: g, target_handle: b.handle, note: 'for the trip' })).invite;
    expect((await counters(b)).requires_action).toBe(1);

    // preview does not consume
    const pb = await h.call(b, 'get_invite', { code: inv.url });
    expect(pb).toMatchObject({
      can_join: true,
      already_member: false,
      invite: { status: 'active', uses: 0, note: 'for the trip', group_name: 'Trip' },
    });
    expect(pb.suggested_next.some((s: string) => s.startsWith('join_group:'))).toBe(true);
    const pc = await h.call(c, 'get_invite', { code: inv.code });
    expect(pc).toMatchObject({ can_join: false, reason: 'this invite is for another agent' });
    // by id: only creator, target, members
    expect((await h.fail(c, 'get_invite', { invite_id: inv.invite_id })).kittyCode).toBe('NOT_FOUND');
    await h.call(b, 'get_invite', { invite_id: inv.invite_id });

    expect((await h.fail(c, 'join_group', { code: inv.code })).kittyCode).toBe('FORBIDDEN');
    expect((await h.fail(c, 'decline_invite', { invite_id: inv.invite_id })).kittyCode).toBe('FORBIDDEN');
    expect((await h.fail(c, 'decline_invite', { code: inv.code })).kittyCode).toBe('FORBIDDEN');
    expect((await h.fail(b, 'decline_invite', {})).kittyCode).toBe('VALIDATION_ERROR');

    const aBefore = (await counters(a)).unread;
    const d = await h.call(b, 'decline_invite', { invite_id: inv.invite_id });
    expect(d.invite.status).toBe('declined');
    expect((await counters(b)).requires_action).toBe(0);
    expect((await counters(a)).unread).toBe(aBefore + 1);
    expect((await inbox(a)).items[0].kind).toBe('invite_declined');
    expect((await h.call(b, 'decline_invite', { invite_id: inv.invite_id })).invite.status).toBe('declined');
    const j = await h.fail(b, 'join_group', { code: inv.code });
    expect(j.kittyCode).toBe('INVITE_UNAVAILABLE');
    expect(j.details).toMatchObject({ status: 'declined' });
    expect(j.message).toContain('declined');
    expect((await h.fail(a, 'revoke_invite', { invite_id: inv.invite_id })).details).toMatchObject({ status: 'declined' });
    // untargeted invites cannot be declined
    const open = (await h.call(a, 'create_invite', { group_id: g })).invite;
    expect((await h.fail(b, 'decline_invite', { invite_id: open.invite_id })).kittyCode).toBe('INVALID_STATE');
  });

  it('active → revoked (creator or admin; clears requires_action), expired (time), exhausted (uses)', async () => {
    const a = await h.agent('ann');
    const b = await h.agent('bob');
    const c = await h.agent('cat');
    const g = await group(a);
    await joinVia(a, g, c);
    await h.call(a, 'add_contact', { handle: b.handle });
    const t = (await h.call(a, 'create_invite', { group_id: g, target_handle: b.handle })).invite;
    expect((await counters(b)).requires_action).toBe(1);
    // c is a member but neither creator nor admin
    expect((await h.fail(c, 'revoke_invite', { invite_id: t.invite_id })).kittyCode).toBe('FORBIDDEN');
    // an outsider does not even see it
    expect((await h.fail(b, 'revoke_invite', { invite_id: t.invite_id })).kittyCode).toBe('NOT_FOUND');
    const r = await h.call(a, 'revoke_invite', { invite_id: t.invite_id });
    expect(r.invite.status).toBe('revoked');
    expect((await counters(b)).requires_action).toBe(0);
    expect((await h.call(a, 'revoke_invite', { invite_id: t.invite_id })).invite.status).toBe('revoked');
    const jr = await h.fail(b, 'join_group', { code: t.code });
    expect(jr.details).toMatchObject({ status: 'revoked' });
    expect((await h.fail(b, 'decline_invite', { invite_id: t.invite_id })).details).toMatchObject({ status: 'revoked' });

    // a member's invite can be revoked by an admin
    const byC = (await h.call(c, 'create_invite', { group_id: g })).invite;
    expect((await h.call(a, 'revoke_invite', { invite_id: byC.invite_id })).invite.status).toBe('revoked');

    // exhausted
    const once = (await h.call(a, 'create_invite', { group_id: g, max_uses: 1 })).invite;
    await h.call(b, 'join_group', { code: once.code });
    const d = await h.agent('dan');
    const je = await h.fail(d, 'join_group', { code: once.code });
    expect(je.details).toMatchObject({ status: 'exhausted' });
    expect((await h.call(d, 'get_invite', { code: once.code })).invite.status).toBe('exhausted');
    expect((await h.fail(a, 'revoke_invite', { invite_id: once.invite_id })).details).toMatchObject({ status: 'exhausted' });

    // expired
    const short = (await h.call(a, 'create_invite', { group_id: g, expires_in: '1h' })).invite;
    h.advance(3_600_001);
    const jx = await h.fail(d, 'join_group', { code: short.code });
    expect(jx.details).toMatchObject({ status: 'expired' });
    expect((await h.call(d, 'get_invite', { code: short.code })).reason).toBe('this invite is expired');
  });

  it('joining resolves the invite item; the members are told', async () => {
    const a = await h.agent('ann');
    const b = await h.agent('bob');
    const g = await group(a);
    await h.call(a, 'add_contact', { handle: b.handle });
    const t = (await h.call(a, 'create_invite', { group_id: g, target_handle: b.handle })).invite;
    const ib = await h.call(b, 'get_inbox', { filter: 'requires_action' });
    expect(ib.items).toHaveLength(1);
    expect(ib.suggested_next[0]).toBe(
      `join_group: accept the invite to "Trip" (code "${t.code}"), or decline_invite with invite_id ${t.invite_id}`,
    );
    const aBefore = (await counters(a)).unread;
    await h.call(b, 'join_group', { code: t.code });
    expect((await counters(b)).requires_action).toBe(0);
    expect((await h.call(b, 'get_inbox', { filter: 'requires_action' })).items).toHaveLength(0);
    expect((await counters(a)).unread).toBe(aBefore + 1);
    expect((await inbox(a)).items[0].kind).toBe('member_joined');
  });
});

describe('messages', () => {
  it('who may message whom', async () => {
    const a = await h.agent('ann');
    const b = await h.agent('bob');
    const c = await h.agent('cat');
    const d = await h.agent('dan');
    // stranger → refused
    expect((await h.fail(a, 'send_message', { to_handle: b.handle, body: 'hi' })).kittyCode).toBe('FORBIDDEN');
    // own contact → ok; and the contact may answer (the sender has it as a contact)
    await h.call(a, 'add_contact', { handle: b.handle });
    await h.call(a, 'send_message', { to_handle: b.handle, body: 'hi b' });
    await h.call(b, 'send_message', { to_handle: a.handle, body: 'hi a' }); // a has b as a contact
    // fellow group member → ok
    const g = await group(c);
    await joinVia(c, g, d);
    await h.call(d, 'send_message', { to_handle: c.handle, body: 'hey' });
    // not yourself, exactly one recipient, text rules
    expect((await h.fail(a, 'send_message', { to_handle: a.handle, body: 'me' })).kittyCode).toBe('VALIDATION_ERROR');
    expect((await h.fail(a, 'send_message', { body: 'nobody' })).kittyCode).toBe('VALIDATION_ERROR');
    expect((await h.fail(c, 'send_message', { to_handle: d.handle, group_id: g, body: 'both' })).kittyCode).toBe('VALIDATION_ERROR');
    expect((await h.fail(a, 'send_message', { to_handle: b.handle, body: '' })).kittyCode).toBe('VALIDATION_ERROR');
    expect((await h.fail(a, 'send_message', { to_handle: b.handle, body: 'x'.repeat(4001) })).kittyCode).toBe('VALIDATION_ERROR');
    expect((await h.fail(a, 'send_message', { to_handle: b.handle, body: 'bell\u0007' })).kittyCode).toBe('VALIDATION_ERROR');
    // newlines, tabs and HTML are kept verbatim (plain text)
    const html = '<script>alert(1)</script>\n\tline two & <b>bold</b>';
    const sent = await h.call(a, 'send_message', { to_handle: b.handle, body: html });
    expect(sent.message.body).toBe(html);
    expect((await h.call(b, 'list_messages', { conversation_id: sent.conversation_id })).messages[0].body).toBe(html);
    // non-members cannot post to or read a group
    expect((await h.fail(a, 'send_message', { group_id: g, body: 'let me in' })).kittyCode).toBe('FORBIDDEN');
    expect((await h.fail(a, 'list_messages', { group_id: g })).kittyCode).toBe('FORBIDDEN');
  });

  it("another agent's messages are never readable", async () => {
    const a = await h.agent('ann');
    const b = await h.agent('bob');
    const eve = await h.agent('eve');
    await h.call(a, 'add_contact', { handle: b.handle });
    const s = await h.call(a, 'send_message', { to_handle: b.handle, body: 'secret' });
    expect((await h.fail(eve, 'list_messages', { conversation_id: s.conversation_id })).kittyCode).toBe('NOT_FOUND');
    expect((await h.fail(eve, 'mark_inbox_read', { conversation_id: s.conversation_id })).kittyCode).toBe('NOT_FOUND');
    expect((await h.call(eve, 'list_conversations', {})).conversations).toEqual([]);
    expect((await h.call(eve, 'list_messages', { with_handle: a.handle })).messages).toEqual([]);
    // eve cannot touch b's inbox items either: NOT_FOUND, nothing marked
    const bItem = (await inbox(b)).items[0];
    expect((await h.fail(eve, 'mark_inbox_read', { item_ids: [bItem.item_id] })).kittyCode).toBe('NOT_FOUND');
    expect((await inbox(b)).items[0].read).toBe(false);
    // a group conversation is readable only by active members (not after leaving)
    const g = await group(a);
    await joinVia(a, g, eve);
    await h.call(a, 'send_message', { group_id: g, body: 'welcome' });
    const convs = await h.call(eve, 'list_conversations', {});
    const gc = convs.conversations.find((c: any) => c.kind === 'group');
    expect(gc.group.group_id).toBe(g);
    await h.call(eve, 'leave_group', { group_id: g });
    expect((await h.fail(eve, 'list_messages', { conversation_id: gc.conversation_id })).kittyCode).toBe('NOT_FOUND');
    expect((await h.call(eve, 'list_conversations', {})).conversations.find((c: any) => c.kind === 'group')).toBeUndefined();
  });

  it('conversations: unread counts rise and fall; list newest first with last message; pagination', async () => {
    const a = await h.agent('ann');
    const b = await h.agent('bob');
    const c = await h.agent('cat');
    await h.call(a, 'add_contact', { handle: b.handle });
    await h.call(a, 'add_contact', { handle: c.handle });
    const g = await group(a, 'Flat');
    await joinVia(a, g, b);
    await joinVia(a, g, c);
    await h.call(b, 'mark_inbox_read', { all: true });
    await h.call(a, 'send_message', { to_handle: b.handle, body: 'one' });
    await h.call(a, 'send_message', { to_handle: b.handle, body: 'two' });
    const gm = await h.call(c, 'send_message', { group_id: g, body: 'group hello' });
    const lc = await h.call(b, 'list_conversations', {});
    expect(lc.conversations).toHaveLength(2);
    expect(lc.conversations[0]).toMatchObject({
      kind: 'group',
      unread_count: 1,
      last_message: { body: 'group hello' },
      group: { name: 'Flat' },
    });
    expect(lc.conversations[1]).toMatchObject({
      kind: 'direct',
      unread_count: 2,
      with: { handle: a.handle },
      last_message: { body: 'two' },
    });
    expect(lc.suggested_next[0]).toMatch(/^list_messages:/);
    expect((await h.call(b, 'list_conversations', { unread_only: true })).conversations).toHaveLength(2);
    expect((await counters(b)).unread).toBe(3);
    // the sender's own unread count does not rise
    const la = await h.call(a, 'list_conversations', {});
    expect(la.conversations.find((x: any) => x.kind === 'direct').unread_count).toBe(0);

    // list_messages: newest first, paginated, no side effects
    const m1 = await h.call(b, 'list_messages', { with_handle: a.handle, limit: 1 });
    expect(m1.messages.map((m: any) => m.body)).toEqual(['two']);
    expect(m1.unread_count).toBe(2);
    expect(m1.suggested_next[0]).toMatch(/^mark_inbox_read:/);
    const m2 = await h.call(b, 'list_messages', { with_handle: a.handle, limit: 1, cursor: m1.next_cursor });
    expect(m2.messages.map((m: any) => m.body)).toEqual(['one']);
    expect(m2.next_cursor).toBeNull();
    expect((await counters(b)).unread).toBe(3);

    // marking the direct conversation read clears its 2 message items and its unread count
    const mr = await h.call(b, 'mark_inbox_read', { conversation_id: m1.conversation_id });
    expect(mr).toMatchObject({ marked: 2, unread: 1 });
    const lc2 = await h.call(b, 'list_conversations', { unread_only: true });
    expect(lc2.conversations.map((x: any) => x.conversation_id)).toEqual([gm.conversation_id]);
    // marking the group message item by id lowers the group conversation's unread count too
    const item = (await h.call(b, 'get_inbox', { filter: 'unread' })).items[0];
    expect(item.kind).toBe('message');
    expect((await h.call(b, 'mark_inbox_read', { item_ids: [item.item_id] })).marked).toBe(1);
    expect((await h.call(b, 'list_conversations', { unread_only: true })).conversations).toEqual([]);
    expect(await counters(b)).toEqual({ unread: 0, requires_action: 0 });

    // pagination of conversations
    const p1 = await h.call(b, 'list_conversations', { limit: 1 });
    const p2 = await h.call(b, 'list_conversations', { limit: 1, cursor: p1.next_cursor });
    expect(p1.conversations[0].conversation_id).not.toBe(p2.conversations[0].conversation_id);
    expect(p2.next_cursor).toBeNull();
  });

  it("a direct ledger's messages go to the pair's conversation", async () => {
    const a = await h.agent('ann');
    const b = await h.agent('bob');
    await h.call(a, 'add_contact', { handle: b.handle });
    const d = await h.call(a, 'open_direct_group', { handle: b.handle, currency: 'EUR' });
    await h.call(b, 'open_direct_group', { handle: a.handle, currency: 'EUR' }); // b accepts
    const s1 = await h.call(a, 'send_message', { group_id: d.group.group_id, body: 'via ledger' });
    const s2 = await h.call(b, 'send_message', { to_handle: a.handle, body: 'via handle' });
    expect(s1.conversation_id).toBe(s2.conversation_id);
    const lm = await h.call(b, 'list_messages', { group_id: d.group.group_id });
    expect(lm.kind).toBe('direct');
    expect(lm.messages.map((m: any) => m.body)).toEqual(['via handle', 'via ledger']);
  });

  it('messages about an expense or a payment reference it', async () => {
    const a = await h.agent('ann');
    const b = await h.agent('bob');
    const outsider = await h.agent('out');
    const g = await group(a);
    await joinVia(a, g, b);
    // ledger rows written directly (the ledger tools are another area's)
    const e = await h.services.prisma.expense.create({
      data: {
        groupId: g,
        description: 'Dinner',
        amountMinor: 1000n,
        date: new Date('2026-01-01'),
        splitMethod: 'equal',
        createdById: a.agentId,
      },
    });
    const p = await h.services.prisma.payment.create({
      data: { groupId: g, payerId: b.agentId, payeeId: a.agentId, amountMinor: 500n, status: 'pending', recordedById: b.agentId },
    });
    const m1 = await h.call(b, 'send_message', { about: { type: 'expense', id: e.id }, body: 'was that with tip?' });
    expect(m1.message.about).toEqual({ type: 'expense', id: e.id });
    const gl = await h.call(a, 'list_messages', { group_id: g });
    expect(gl.messages[0]).toMatchObject({ about: { type: 'expense', id: e.id }, conversation_id: m1.conversation_id });
    const m2 = await h.call(b, 'send_message', { about: { type: 'payment', id: p.id }, to_handle: a.handle, body: 'sent it' });
    expect(m2.message.about).toEqual({ type: 'payment', id: p.id });
    expect(m2.conversation_id).not.toBe(m1.conversation_id);
    // not visible to outsiders; not a different group; recipient must be in that group
    expect((await h.fail(outsider, 'send_message', { about: { type: 'expense', id: e.id }, body: '?' })).kittyCode).toBe('NOT_FOUND');
    const g2 = await group(a, 'Other');
    expect((await h.fail(a, 'send_message', { group_id: g2, about: { type: 'expense', id: e.id }, body: '?' })).kittyCode).toBe(
      'VALIDATION_ERROR',
    );
    await h.call(a, 'add_contact', { handle: outsider.handle });
    expect(
      (await h.fail(a, 'send_message', { to_handle: outsider.handle, about: { type: 'expense', id: e.id }, body: '?' })).kittyCode,
    ).toBe('VALIDATION_ERROR');
  });
});

describe('inbox', () => {
  it('filters, pagination, counters, and the summary on every response', async () => {
    const a = await h.agent('ann');
    const b = await h.agent('bob');
    const g = await group(a);
    await h.call(a, 'add_contact', { handle: b.handle });
    await h.call(a, 'create_invite', { group_id: g, target_handle: b.handle });
    for (let i = 0; i < 3; i++) await h.call(a, 'send_message', { to_handle: b.handle, body: `m${i}` });
    // summary on any response: 5 unread (contact, invite, 3 messages), 1 requires action, top lists the invite first
    const me = await h.call(b, 'get_me', {});
    expect(me.inbox).toMatchObject({ unread: 5, requires_action: 1 });
    expect(me.inbox.top).toHaveLength(3);
    expect(me.inbox.top[0]).toContain('invited you');
    const all = await h.call(b, 'get_inbox', { limit: 2 });
    expect(all.items).toHaveLength(2);
    expect(all.items[0].text).toContain('m2');
    const rest = await h.call(b, 'get_inbox', { limit: 10, cursor: all.next_cursor });
    expect(rest.items).toHaveLength(3);
    expect((await h.call(b, 'get_inbox', { filter: 'requires_action' })).items).toHaveLength(1);
    expect((await h.call(b, 'get_inbox', { filter: 'unread' })).items).toHaveLength(5);
    // marking read never resolves the action
    const r = await h.call(b, 'mark_inbox_read', { all: true });
    expect(r).toMatchObject({ marked: 5, unread: 0, requires_action: 1 });
    expect((await h.call(b, 'mark_inbox_read', { all: true })).marked).toBe(0);
    const after = await h.call(b, 'get_me', {});
    expect(after.inbox).toMatchObject({ unread: 0, requires_action: 1 });
    expect((await h.call(b, 'get_inbox', { filter: 'unread' })).items).toHaveLength(0);
    expect((await h.fail(b, 'mark_inbox_read', { all: true, item_ids: [a.agentId] })).kittyCode).toBe('VALIDATION_ERROR');
    // the counters agree with the items
    const agent = await h.services.prisma.agent.findUniqueOrThrow({ where: { id: b.agentId } });
    const unread = await h.services.prisma.inboxItem.count({ where: { agentId: b.agentId, readAt: null } });
    const open = await h.services.prisma.inboxItem.count({ where: { agentId: b.agentId, requiresAction: true, resolvedAt: null } });
    expect([agent.inboxUnread, agent.inboxRequiresAction]).toEqual([unread, open]);
  });

  it('an archived group notifies its members; no inbox key when nothing is unread', async () => {
    const a = await h.agent('ann');
    const b = await h.agent('bob');
    const g = await group(a);
    await joinVia(a, g, b);
    await h.call(b, 'mark_inbox_read', { all: true });
    const quiet = await h.call(b, 'get_me', {});
    expect(quiet.inbox).toBeUndefined();
    await h.call(a, 'archive_group', { group_id: g });
    expect((await inbox(b)).items[0].kind).toBe('group_archived');
    // archived groups stay readable and can still be left when settled
    await h.call(b, 'leave_group', { group_id: g });
  });

  it('member left notifies the remaining members', async () => {
    const a = await h.agent('ann');
    const b = await h.agent('bob');
    const g = await group(a);
    await joinVia(a, g, b);
    await h.call(a, 'mark_inbox_read', { all: true });
    await h.call(b, 'leave_group', { group_id: g });
    expect((await inbox(a)).items[0]).toMatchObject({ kind: 'member_left', group_id: g });
  });
});
