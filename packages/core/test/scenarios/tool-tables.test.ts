/**
 * The 13 specified tools against real PostgreSQL: every field, limit and rule of the
 * interface spec's tables (register_agent … list_invites), through registry.callTool.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { randomUUID } from 'node:crypto';
import { createHarness, type Harness, type TestAgent } from '../harness.ts';

let h: Harness;
beforeAll(async () => {
  h = await createHarness();
});
afterAll(async () => {
  await h?.close();
});

const DAY = 86_400_000;
const addContact = (owner: TestAgent, other: TestAgent) =>
  h.services.prisma.contact.create({ data: { ownerId: owner.agentId, contactId: other.agentId } });

describe('register_agent', () => {
  it('enforces the handle pattern and uniqueness', async () => {
    for (const handle of ['ab', 'Abc', '-abc', 'a'.repeat(33), 'a b c', 'abc!']) {
      const e = await h.fail(null, 'register_agent', { handle, display_name: 'X' });
      expect(e.kittyCode).toBe('VALIDATION_ERROR');
      expect((e.details!.issues as any[])[0].path).toBe('handle');
    }
    const handle = `taken-${randomUUID().slice(0, 6)}`;
    await h.call(null, 'register_agent', { handle, display_name: 'First' });
    const dup = await h.fail(null, 'register_agent', { handle, display_name: 'Second' });
    expect(dup.kittyCode).toBe('HANDLE_TAKEN');
    expect(dup.status).toBe(409);
  });

  it('checks display_name and description limits and control characters', async () => {
    const base = { handle: `lim-${randomUUID().slice(0, 6)}` };
    expect((await h.fail(null, 'register_agent', { ...base, display_name: '' })).kittyCode).toBe('VALIDATION_ERROR');
    expect((await h.fail(null, 'register_agent', { ...base, display_name: 'x'.repeat(81) })).kittyCode).toBe('VALIDATION_ERROR');
    expect((await h.fail(null, 'register_agent', { ...base, display_name: 'ok', description: 'd'.repeat(501) })).kittyCode).toBe(
      'VALIDATION_ERROR',
    );
    for (const bad of ['a\u0000b', 'tab\there', 'del\u007f', 'c1\u009f']) {
      const e = await h.fail(null, 'register_agent', { ...base, display_name: bad });
      expect((e.details!.issues as any[])[0].path).toBe('display_name');
    }
    const ok = await h.call(null, 'register_agent', { ...base, display_name: 'x'.repeat(80), description: 'é'.repeat(500) });
    expect(ok.agent.display_name).toHaveLength(80);
    expect(ok.api_key).toMatch(/^kitty_/);
  });

  it('rejects unknown fields (strict schemas)', async () => {
    const e = await h.fail(null, 'register_agent', { handle: 'strict-one', display_name: 'S', admin: true });
    expect(e.kittyCode).toBe('VALIDATION_ERROR');
  });

  it('invite-only deployments need a valid platform_invite_code', async () => {
    h.services.config.inviteOnly = true;
    h.services.config.platformInviteCodes = ['let-me-in'];
    try {
      expect((await h.fail(null, 'register_agent', { handle: `io-${randomUUID().slice(0, 6)}`, display_name: 'X' })).kittyCode).toBe(
        'FORBIDDEN',
      );
      expect(
        (
          await h.fail(null, 'register_agent', {
            handle: `io-${randomUUID().slice(0, 6)}`,
            display_name: 'X',
            platform_invite_code: 'nope',
          })
        ).kittyCode,
      ).toBe('FORBIDDEN');
      const ok = await h.call(null, 'register_agent', {
        handle: `io-${randomUUID().slice(0, 6)}`,
        display_name: 'X',
        platform_invite_code: 'let-me-in',
      });
      expect(ok.agent.handle).toMatch(/^io-/);
    } finally {
      h.services.config.inviteOnly = false;
    }
  });

  it('with invite_code registers and joins in one call; a bad code creates nothing', async () => {
    const host = await h.agent('host');
    const g = await h.call(host, 'create_group', { name: 'Club', currency: 'GBP' });
    const inv = await h.call(host, 'create_invite', { group_id: g.group.group_id });
    const handle = `joiner-${randomUUID().slice(0, 6)}`;
    const r = await h.call(null, 'register_agent', { handle, display_name: 'J', invite_code: inv.invite.url });
    expect(r.joined_group.group_id).toBe(g.group.group_id);
    expect(r.joined_group.member_count).toBe(2);
    const ghost = `ghost-${randomUUID().slice(0, 6)}`;
    const e = await h.fail(null, 'register_agent', { handle: ghost, display_name: 'G', invite_code: 'no-such-code-here' });
    expect(e.kittyCode).toBe('NOT_FOUND');
    expect(await h.services.prisma.agent.count({ where: { handle: ghost } })).toBe(0);
  });
});

describe('get_me / update_me', () => {
  it('returns profile, groups and pending invites; update_me changes only what is given', async () => {
    const me = await h.agent('me');
    const friend = await h.agent('friend');
    await addContact(friend, me);
    const g = await h.call(friend, 'create_group', { name: 'F', currency: 'EUR' });
    await h.call(friend, 'create_invite', { group_id: g.group.group_id, target_handle: me.handle });
    const r = await h.call(me, 'get_me');
    expect(r.agent.handle).toBe(me.handle);
    expect(r.pending_invites_count).toBe(1);
    expect(r.suggested_next[0]).toMatch(/^list_invites/);
    const u = await h.call(me, 'update_me', { description: 'I split bills' });
    expect(u.agent.display_name).toBe('me');
    expect(u.agent.description).toBe('I split bills');
    const e = await h.fail(me, 'update_me', { handle: 'newname' });
    expect(e.kittyCode).toBe('VALIDATION_ERROR');
  });
});

describe('groups', () => {
  it('create_group: real ISO currency, caller is admin, archived groups hidden from list_groups', async () => {
    const a = await h.agent('grp');
    expect((await h.fail(a, 'create_group', { name: 'X', currency: 'EURO' })).kittyCode).toBe('VALIDATION_ERROR');
    const fake = await h.fail(a, 'create_group', { name: 'X', currency: 'ABC' });
    expect((fake.details!.issues as any[])[0].path).toBe('currency');
    expect((await h.fail(a, 'create_group', { name: '', currency: 'EUR' })).kittyCode).toBe('VALIDATION_ERROR');
    const g = await h.call(a, 'create_group', { name: 'Yen trip', currency: 'JPY', description: 'Tokyo' });
    expect(g.group).toMatchObject({
      name: 'Yen trip',
      currency: 'JPY',
      kind: 'group',
      archived: false,
      member_count: 1,
      archived_at: null,
      my_balance_minor: 0,
    });
    expect(g.group.created_by.handle).toBe(a.handle);
    expect(g.suggested_next[0]).toContain(g.group.group_id);
    const detail = await h.call(a, 'get_group', { group_id: g.group.group_id });
    expect(detail.members[0]).toMatchObject({ handle: a.handle, role: 'admin', balance_minor: 0, balance_pending_minor: 0 });
    expect(detail.members[0].balance).toBe('¥0');
  });

  it('list_groups: newest first, cursor pagination, include_archived', async () => {
    const a = await h.agent('lister');
    const ids: string[] = [];
    for (let i = 0; i < 5; i++) {
      ids.push((await h.call(a, 'create_group', { name: `G${i}`, currency: 'EUR' })).group.group_id);
      h.advance(1000);
    }
    const p1 = await h.call(a, 'list_groups', { limit: 2 });
    expect(p1.groups.map((g: any) => g.name)).toEqual(['G4', 'G3']);
    const p2 = await h.call(a, 'list_groups', { limit: 2, cursor: p1.next_cursor });
    expect(p2.groups.map((g: any) => g.name)).toEqual(['G2', 'G1']);
    const p3 = await h.call(a, 'list_groups', { limit: 2, cursor: p2.next_cursor });
    expect(p3.groups.map((g: any) => g.name)).toEqual(['G0']);
    expect(p3.next_cursor).toBeNull();
    await h.call(a, 'archive_group', { group_id: ids[4] });
    expect((await h.call(a, 'list_groups', {})).groups.map((g: any) => g.name)).toEqual(['G3', 'G2', 'G1', 'G0']);
    expect((await h.call(a, 'list_groups', { include_archived: true })).groups[0].archived).toBe(true);
    expect((await h.fail(a, 'list_groups', { cursor: 'garbage' })).kittyCode).toBe('VALIDATION_ERROR');
    expect((await h.fail(a, 'list_groups', { limit: 101 })).kittyCode).toBe('VALIDATION_ERROR');
  });

  it('get_group / update_group need membership; currency cannot change', async () => {
    const a = await h.agent('owner');
    const stranger = await h.agent('stranger');
    const g = await h.call(a, 'create_group', { name: 'Private', currency: 'CHF' });
    expect((await h.fail(stranger, 'get_group', { group_id: g.group.group_id })).kittyCode).toBe('FORBIDDEN');
    expect((await h.fail(stranger, 'update_group', { group_id: g.group.group_id, name: 'Mine' })).kittyCode).toBe('FORBIDDEN');
    expect((await h.fail(a, 'get_group', { group_id: randomUUID() })).kittyCode).toBe('NOT_FOUND');
    expect((await h.fail(a, 'update_group', { group_id: g.group.group_id, currency: 'EUR' })).kittyCode).toBe('VALIDATION_ERROR');
    const u = await h.call(a, 'update_group', { group_id: g.group.group_id, name: 'Renamed', description: '' });
    expect(u.group).toMatchObject({ name: 'Renamed', description: null, currency: 'CHF' });
  });

  it('archive_group and leave_group require settled balances and no pending payments', async () => {
    const a = await h.agent('arch');
    const b = await h.agent('bee');
    const g = await h.call(a, 'create_group', { name: 'Settle', currency: 'EUR' });
    const gid = g.group.group_id;
    const inv = await h.call(a, 'create_invite', { group_id: gid });
    await h.call(b, 'join_group', { code: inv.invite.code });
    const setBal = (agentId: string, balance: bigint, pending = 0) =>
      h.services.prisma.membership.update({
        where: { groupId_agentId: { groupId: gid, agentId } },
        data: { balanceMinor: balance, pendingCount: pending },
      });
    await setBal(a.agentId, 500n);
    await setBal(b.agentId, -500n);
    const na = await h.fail(a, 'archive_group', { group_id: gid });
    expect(na.kittyCode).toBe('NOT_SETTLED');
    expect(na.details!.unsettled).toHaveLength(2);
    expect((await h.fail(b, 'leave_group', { group_id: gid })).kittyCode).toBe('NOT_SETTLED');
    await setBal(a.agentId, 0n);
    await setBal(b.agentId, 0n, 1);
    expect((await h.fail(b, 'leave_group', { group_id: gid })).kittyCode).toBe('NOT_SETTLED');
    expect((await h.fail(a, 'archive_group', { group_id: gid })).kittyCode).toBe('NOT_SETTLED');
    await setBal(b.agentId, 0n, 0);
    expect((await h.fail(b, 'archive_group', { group_id: gid })).kittyCode).toBe('FORBIDDEN'); // admins only
    const archived = await h.call(a, 'archive_group', { group_id: gid });
    expect(archived.group.archived).toBe(true);
    expect(archived.group.archived_at).not.toBeNull();
    // Still readable; no longer writable.
    expect((await h.call(b, 'get_group', { group_id: gid })).group.archived).toBe(true);
    expect((await h.fail(a, 'update_group', { group_id: gid, name: 'x' })).kittyCode).toBe('GROUP_ARCHIVED');
    expect((await h.fail(a, 'create_invite', { group_id: gid })).kittyCode).toBe('GROUP_ARCHIVED');
    const ok = await h.call(b, 'leave_group', { group_id: gid });
    expect(ok.ok).toBe(true);
    expect((await h.fail(b, 'get_group', { group_id: gid })).kittyCode).toBe('FORBIDDEN');
  });

  it('when the last admin leaves, the longest-standing member becomes admin', async () => {
    const a = await h.agent('boss');
    const b = await h.agent('second');
    const c = await h.agent('third');
    const g = await h.call(a, 'create_group', { name: 'Heirs', currency: 'EUR' });
    const inv = await h.call(a, 'create_invite', { group_id: g.group.group_id, max_uses: 5 });
    await h.call(b, 'join_group', { code: inv.invite.code });
    h.advance(1000);
    await h.call(c, 'join_group', { code: inv.invite.code });
    await h.call(a, 'leave_group', { group_id: g.group.group_id });
    const d = await h.call(b, 'get_group', { group_id: g.group.group_id });
    expect(d.members.find((m: any) => m.handle === b.handle).role).toBe('admin');
    expect(d.group.member_count).toBe(2);
  });
});

describe('invites', () => {
  async function groupWithInvite(args: Record<string, unknown> = {}) {
    const a = await h.agent('inviter');
    const g = await h.call(a, 'create_group', { name: 'Inv', currency: 'EUR' });
    const inv = await h.call(a, 'create_invite', { group_id: g.group.group_id, ...args });
    return { a, g, inv };
  }

  it('defaults to 7 days and one use; code is four words; message is ready to paste', async () => {
    const { inv } = await groupWithInvite();
    expect(inv.invite.code).toMatch(/^[a-z]+-[a-z]+-[a-z]+-[a-z]+$/);
    expect(inv.invite.max_uses).toBe(1);
    expect(inv.invite.uses).toBe(0);
    expect(inv.invite.status).toBe('active');
    expect(inv.invite.target).toBeNull();
    const days = (Date.parse(inv.invite.expires_at) - Date.parse(inv.invite.created_at)) / DAY;
    expect(days).toBeCloseTo(7, 5);
    expect(inv.invite.url).toBe(`http://kitty.test/i/${inv.invite.code}`);
    expect(inv.message).toContain(inv.invite.code);
    expect(inv.message).toContain('join_group');
  });

  it('validates expires_in, max_uses and note', async () => {
    const a = await h.agent('val');
    const g = await h.call(a, 'create_group', { name: 'V', currency: 'EUR' });
    const gid = g.group.group_id;
    for (const args of [
      { expires_in: '31d' },
      { expires_in: '0d' },
      { expires_in: '7w' },
      { expires_in: '721h' },
      { max_uses: 0 },
      { max_uses: 51 },
      { note: 'n'.repeat(201) },
      { note: 'bell\u0007' },
    ]) {
      const e = await h.fail(a, 'create_invite', { group_id: gid, ...args });
      expect(e.kittyCode, JSON.stringify(args)).toBe('VALIDATION_ERROR');
    }
    const ok = await h.call(a, 'create_invite', { group_id: gid, expires_in: '30d', max_uses: 50, note: 'n'.repeat(200) });
    expect(ok.invite.max_uses).toBe(50);
    const mins = await h.call(a, 'create_invite', { group_id: gid, expires_in: '90m' });
    expect(Date.parse(mins.invite.expires_at) - Date.parse(mins.invite.created_at)).toBe(90 * 60_000);
  });

  it('a targeted invite needs a contact and can be used only by its target', async () => {
    const a = await h.agent('tgt');
    const b = await h.agent('friend');
    const c = await h.agent('other');
    const g = await h.call(a, 'create_group', { name: 'T', currency: 'EUR' });
    const notContact = await h.fail(a, 'create_invite', { group_id: g.group.group_id, target_handle: b.handle });
    expect(notContact.kittyCode).toBe('NOT_A_CONTACT');
    expect((await h.fail(a, 'create_invite', { group_id: g.group.group_id, target_handle: 'nobody-here' })).kittyCode).toBe('NOT_FOUND');
    await addContact(a, b);
    const inv = await h.call(a, 'create_invite', { group_id: g.group.group_id, target_handle: b.handle, max_uses: 2 });
    expect(inv.invite.target.handle).toBe(b.handle);
    expect((await h.fail(c, 'join_group', { code: inv.invite.code })).kittyCode).toBe('FORBIDDEN');
    const received = await h.call(b, 'list_invites', { direction: 'received' });
    expect(received.invites.map((i: any) => i.invite_id)).toContain(inv.invite.invite_id);
    expect(received.suggested_next[0]).toMatch(/^join_group/);
    await h.call(b, 'join_group', { code: inv.invite.code });
    const sent = await h.call(a, 'list_invites', { direction: 'sent', group_id: g.group.group_id });
    expect(sent.invites[0].uses).toBe(1);
  });

  it('join_group ignores case, spaces and dashes, accepts pasted links and legacy inv_ codes', async () => {
    const { inv } = await groupWithInvite({ max_uses: 10 });
    const variants = [
      inv.invite.code.toUpperCase(),
      inv.invite.code.replaceAll('-', ' '),
      `  ${inv.invite.code.replaceAll('-', '')}  `,
      inv.invite.url,
      `${inv.invite.url}?utm=x`,
    ];
    for (const code of variants) {
      const who = await h.agent('variant');
      const r = await h.call(who, 'join_group', { code });
      expect(r.already_member).toBe(false);
    }
    // Legacy invite format (inv_ + base32), as older clients stored it.
    const legacy = await h.agent('legacy');
    const inviteRow = await h.services.prisma.invite.findUniqueOrThrow({ where: { id: inv.invite.invite_id } });
    await h.services.prisma.invite.create({
      data: {
        groupId: inviteRow.groupId,
        code: 'inv_MZXW6YTBOI',
        codeKey: 'inv_mzxw6ytboi',
        createdById: inviteRow.createdById,
        expiresAt: new Date(Date.now() + DAY),
        maxUses: 1,
      },
    });
    const r = await h.call(legacy, 'join_group', { code: 'INV_mzxw6ytboi' });
    expect(r.group.group_id).toBe(inviteRow.groupId);
  });

  it('already a member: unchanged, invite not consumed', async () => {
    const { a, inv } = await groupWithInvite();
    const r = await h.call(a, 'join_group', { code: inv.invite.code });
    expect(r.already_member).toBe(true);
    expect(r.membership.role).toBe('admin');
    const list = await h.call(a, 'list_invites', { direction: 'sent' });
    expect(list.invites[0].uses).toBe(0);
  });

  it('statuses: exhausted, expired and revoked invites cannot be joined, and say why', async () => {
    const { inv } = await groupWithInvite();
    await h.call(await h.agent('first'), 'join_group', { code: inv.invite.code });
    const ex = await h.fail(await h.agent('late'), 'join_group', { code: inv.invite.code });
    expect(ex.kittyCode).toBe('INVITE_UNAVAILABLE');
    expect(ex.details!.status).toBe('exhausted');

    const { inv: inv2 } = await groupWithInvite({ expires_in: '1h' });
    h.advance(61 * 60_000);
    const exp = await h.fail(await h.agent('slow'), 'join_group', { code: inv2.invite.code });
    expect(exp.details!.status).toBe('expired');

    const { inv: inv3 } = await groupWithInvite();
    await h.services.prisma.invite.update({ where: { id: inv3.invite.invite_id }, data: { status: 'revoked' } });
    const rev = await h.fail(await h.agent('nope'), 'join_group', { code: inv3.invite.code });
    expect(rev.details!.status).toBe('revoked');
    expect((await h.fail(await h.agent('typo'), 'join_group', { code: 'abandon-ability-able-about' })).kittyCode).toBe('NOT_FOUND');
    expect((await h.fail(await h.agent('short'), 'join_group', { code: 'short' })).kittyCode).toBe('VALIDATION_ERROR');
  });

  it('an archived group takes no new members', async () => {
    const { a, g, inv } = await groupWithInvite();
    await h.call(a, 'archive_group', { group_id: g.group.group_id });
    const e = await h.fail(await h.agent('toolate'), 'join_group', { code: inv.invite.code });
    expect(['GROUP_ARCHIVED', 'INVITE_UNAVAILABLE']).toContain(e.kittyCode);
  });
});
