/**
 * The feed functions behind the MCP resource kitty://events: the newest page (latestEvents), who
 * may read a feed (feedOwner), and the watch that tells a subscriber its feed gained events
 * (watchEvents) — for that agent only.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createHarness, type Harness } from '../harness.ts';
import { groupWith } from '../ledger-helpers.ts';
import { feedOwner, latestEvents, watchEvents, ToolError, type FeedEvent } from '../../src/index.ts';

let h: Harness;
beforeAll(async () => {
  h = await createHarness();
});
afterAll(async () => {
  await h?.close();
});

describe('latestEvents, feedOwner, watchEvents', () => {
  it('latestEvents: the newest page in feed order with the cursor list_events goes on from', async () => {
    const [ann, bob] = await Promise.all([h.agent('ann'), h.agent('bob')]);
    const g = await groupWith(h, [ann, bob]);
    for (let i = 0; i < 7; i++) await h.call(ann, 'add_expense', { group_id: g, description: `E${i}`, amount_minor: 100 + i });
    const all = await h.call(bob, 'list_events', { limit: 100 });
    expect(all.events.length).toBeGreaterThan(7);
    const page = await latestEvents(h.services.prisma, bob.agentId, 5);
    expect(page.events).toEqual(all.events.slice(-5));
    expect(page.next_cursor).toBe(all.next_cursor);
    // A page larger than the feed is the whole feed; an empty feed has no cursor.
    expect((await latestEvents(h.services.prisma, bob.agentId, 100)).events).toEqual(all.events);
    const nobody = await h.agent('nobody');
    expect(await latestEvents(h.services.prisma, nobody.agentId, 5)).toEqual({ events: [], next_cursor: null });
  });

  it('feedOwner: the credential’s own agent; UNAUTHENTICATED without one, FORBIDDEN without svc:read', async () => {
    const ann = await h.agent('ann');
    expect(feedOwner(ann.auth)).toBe(ann.agentId);
    expect(() => feedOwner(null)).toThrow(ToolError);
    try {
      feedOwner({ ...ann.auth, scopes: ['svc:write'] });
      expect.unreachable();
    } catch (e) {
      expect((e as ToolError).kittyCode).toBe('FORBIDDEN');
      expect((e as ToolError).details).toMatchObject({ required_scope: 'svc:read' });
    }
  });

  it('watchEvents: called with the events the agent gains after it started, never for another agent’s', async () => {
    const [ann, bob, out] = await Promise.all([h.agent('ann'), h.agent('bob'), h.agent('out')]);
    const g = await groupWith(h, [ann, bob]);
    await h.call(out, 'create_group', { name: 'Own', currency: 'EUR' });
    await h.call(ann, 'add_expense', { group_id: g, description: 'before', amount_minor: 100 });
    const ac = new AbortController();
    const bobGot: FeedEvent[] = [];
    const outGot: FeedEvent[] = [];
    const watching = Promise.all([
      watchEvents(h.services.prisma, undefined, bob.agentId, ac.signal, (e) => void bobGot.push(...e)),
      watchEvents(h.services.prisma, undefined, out.agentId, ac.signal, (e) => void outGot.push(...e)),
    ]);
    await new Promise((r) => setTimeout(r, 300));
    await h.call(ann, 'add_expense', { group_id: g, description: 'after', amount_minor: 200 });
    for (let i = 0; i < 200 && !bobGot.length; i++) await new Promise((r) => setTimeout(r, 25));
    ac.abort();
    await watching;
    expect(bobGot.map((e) => [e.type, e.data.description])).toEqual([['expense.created', 'after']]);
    expect(outGot).toEqual([]);
  });
});
