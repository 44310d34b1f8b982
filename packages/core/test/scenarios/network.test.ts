/**
 * Issue 4 end-to-end scenario through the registry (the same path REST and MCP take):
 * two agents meet by handle, become contacts, open a direct ledger, one sends a targeted
 * invite, the other previews and declines it, a second invite is accepted, messages flow,
 * and the inbox counts rise and fall as expected at every step.
 */
import { afterAll, beforeAll, expect, it } from 'vitest';
import { createHarness, type Harness, type TestAgent } from '../harness.ts';

let h: Harness;
beforeAll(async () => {
  h = await createHarness();
});
afterAll(async () => {
  await h?.close();
});

/** The inbox summary as it rides on any response ({unread:0, requires_action:0} when absent). */
async function summary(a: TestAgent) {
  const r = await h.call(a, 'get_me', {});
  return { unread: r.inbox?.unread ?? 0, requires_action: r.inbox?.requires_action ?? 0 };
}

it('two agents meet, trade invites, talk, and their inboxes follow', async () => {
  const ann = await h.agent('ann');
  const bob = await h.agent('bob');
  expect(await summary(ann)).toEqual({ unread: 0, requires_action: 0 });
  expect(await summary(bob)).toEqual({ unread: 0, requires_action: 0 });

  // 1. meet by handle
  const look = await h.call(ann, 'get_agent', { handle: bob.handle });
  expect(look.agent.handle).toBe(bob.handle);
  expect(look.suggested_next[0]).toBe(`add_contact: add @${bob.handle} to your contacts (handle "${bob.handle}")`);

  // 2. become contacts (each side is told once)
  await h.call(ann, 'add_contact', { handle: bob.handle, alias: 'Bob from the hostel' });
  expect(await summary(bob)).toEqual({ unread: 1, requires_action: 0 });
  await h.call(bob, 'add_contact', { handle: ann.handle });
  expect(await summary(ann)).toEqual({ unread: 1, requires_action: 0 });

  // 3. open a direct ledger (bob is told; opening again is the same ledger)
  const direct = await h.call(ann, 'open_direct_group', { handle: bob.handle, currency: 'EUR' });
  expect(direct.group).toMatchObject({ kind: 'direct', member_count: 2 });
  expect(await summary(bob)).toEqual({ unread: 2, requires_action: 0 });
  expect((await h.call(bob, 'open_direct_group', { handle: ann.handle, currency: 'EUR' })).group.group_id).toBe(direct.group.group_id);

  // 4. ann creates a trip group and sends bob a targeted invite
  const trip = (await h.call(ann, 'create_group', { name: 'Lisbon trip', currency: 'EUR' })).group;
  const first = await h.call(ann, 'create_invite', { group_id: trip.group_id, target_handle: bob.handle, note: 'come along!' });
  expect(await summary(bob)).toEqual({ unread: 3, requires_action: 1 });
  const me = await h.call(bob, 'get_me', {});
  expect(me.pending_invites_count).toBe(1);
  expect(me.inbox.top[0]).toContain('invited you to "Lisbon trip"');

  // 5. bob previews it (nothing consumed) and declines it
  const preview = await h.call(bob, 'get_invite', { code: first.invite.url });
  expect(preview).toMatchObject({
    can_join: true,
    invite: { status: 'active', uses: 0, note: 'come along!', created_by: { handle: ann.handle } },
  });
  await h.call(bob, 'decline_invite', { invite_id: first.invite.invite_id });
  expect(await summary(bob)).toEqual({ unread: 2, requires_action: 0 }); // the declined invite item is resolved: read, no longer unread
  expect(await summary(ann)).toEqual({ unread: 2, requires_action: 0 }); // "bob declined your invite"
  expect((await h.call(bob, 'get_invite', { code: first.invite.code })).invite.status).toBe('declined');
  expect((await h.fail(bob, 'join_group', { code: first.invite.code })).details).toMatchObject({ status: 'declined' });

  // 6. a second invite is accepted
  const second = await h.call(ann, 'create_invite', { group_id: trip.group_id, target_handle: bob.handle });
  expect(await summary(bob)).toEqual({ unread: 3, requires_action: 1 });
  const joined = await h.call(bob, 'join_group', { code: second.invite.code });
  expect(joined.already_member).toBe(false);
  expect(await summary(bob)).toEqual({ unread: 2, requires_action: 0 });
  expect(await summary(ann)).toEqual({ unread: 3, requires_action: 0 }); // "bob joined"

  // 7. messages flow: direct, via the direct ledger (same conversation) and in the group
  await h.call(ann, 'send_message', { to_handle: bob.handle, body: 'Flights booked ✈️' });
  await h.call(ann, 'send_message', { group_id: direct.group.group_id, body: 'I paid the deposit' });
  await h.call(bob, 'send_message', { group_id: trip.group_id, body: 'Hi all!\nSee you Friday.' });
  expect(await summary(bob)).toEqual({ unread: 4, requires_action: 0 });
  expect(await summary(ann)).toEqual({ unread: 4, requires_action: 0 });
  const convs = await h.call(bob, 'list_conversations', {});
  expect(convs.conversations.map((c: any) => [c.kind, c.unread_count])).toEqual([
    ['group', 0],
    ['direct', 2],
  ]);
  const thread = await h.call(bob, 'list_messages', { with_handle: ann.handle });
  expect(thread.messages.map((m: any) => m.body)).toEqual(['I paid the deposit', 'Flights booked ✈️']);

  // 8. counts fall: bob reads the thread, then clears the rest; ann clears hers
  await h.call(bob, 'mark_inbox_read', { conversation_id: thread.conversation_id });
  expect(await summary(bob)).toEqual({ unread: 2, requires_action: 0 });
  await h.call(bob, 'mark_inbox_read', { all: true });
  expect(await summary(bob)).toEqual({ unread: 0, requires_action: 0 });
  expect((await h.call(bob, 'get_me', {})).inbox).toBeUndefined();
  const annInbox = await h.call(ann, 'get_inbox', { filter: 'unread' });
  expect(annInbox.items.map((i: any) => i.kind)).toEqual(['message', 'member_joined', 'invite_declined', 'contact_added']);
  await h.call(ann, 'mark_inbox_read', { item_ids: annInbox.items.map((i: any) => i.item_id) });
  expect(await summary(ann)).toEqual({ unread: 0, requires_action: 0 });
});
