import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createHarness, type Harness } from './harness.ts';

let h: Harness;
beforeAll(async () => {
  h = await createHarness();
});
afterAll(async () => {
  await h?.close();
});

describe('smoke', () => {
  it('registers, creates a group, invites and joins', async () => {
    const alice = await h.agent('alice');
    const bob = await h.agent('bob');
    const g = await h.call(alice, 'create_group', { name: 'Trip', currency: 'EUR' });
    expect(g.group.currency).toBe('EUR');
    const inv = await h.call(alice, 'create_invite', { group_id: g.group.group_id });
    const j = await h.call(bob, 'join_group', { code: inv.invite.code.toUpperCase().replaceAll('-', ' ') });
    expect(j.already_member).toBe(false);
    const detail = await h.call(bob, 'get_group', { group_id: g.group.group_id });
    expect(detail.members).toHaveLength(2);
  });
});
