/**
 * EventNotifier (event-notify.ts) without a database: a notification that arrives while a recent
 * reader of the agent is between two waits (reading) is not lost — the agent's next wait returns at
 * once — while an agent that never waited, or a notification older than 2 s, does not wake anyone.
 */
import { afterEach, describe, expect, it, vi } from 'vitest';
import { EventNotifier } from '../../src/runtime/event-notify.ts';
import type { ChannelSubscriber, PgListener } from '../../src/runtime/pg-listener.ts';

function notifier() {
  let sub: ChannelSubscriber | undefined;
  const listener = { subscribe: (_c: string, s: ChannelSubscriber) => (sub = s) } as unknown as PgListener;
  const n = new EventNotifier(listener);
  return { n, notify: (payload: string) => sub!.notify(payload) };
}

afterEach(() => {
  vi.useRealTimers();
});

describe('EventNotifier', () => {
  it('wakes a waiting reader of a notified agent, and only that agent', async () => {
    const { n, notify } = notifier();
    const a = n.wait('a', 5000);
    const b = n.wait('b', 50);
    notify('a,c');
    expect(await a).toBe(true);
    expect(await b).toBe(false);
    expect(n.size).toBe(0);
  });

  it('keeps a notification that arrived between two waits of the agent for its next wait', async () => {
    vi.useFakeTimers();
    const { n, notify } = notifier();
    const first = n.wait('a', 1000);
    notify('a');
    expect(await first).toBe(true);
    // The reader is reading now (no waiter): the next notification must not be lost.
    notify('a');
    expect(await n.wait('a', 5000)).toBe(true);
    // Kept once: the wait after it sleeps again until its timeout.
    const again = n.wait('a', 1000);
    await vi.advanceTimersByTimeAsync(1000);
    expect(await again).toBe(false);
  });

  it('does not keep notifications for agents that never waited, nor old ones', async () => {
    vi.useFakeTimers();
    const { n, notify } = notifier();
    notify('x');
    const never = n.wait('x', 100);
    await vi.advanceTimersByTimeAsync(100);
    expect(await never).toBe(false);
    notify('x'); // x has waited now: kept…
    await vi.advanceTimersByTimeAsync(2500); // …but too long ago when the next wait comes
    const stale = n.wait('x', 100);
    await vi.advanceTimersByTimeAsync(100);
    expect(await stale).toBe(false);
  });

  it("'*' wakes every waiter and is kept for recent readers not waiting", async () => {
    const { n, notify } = notifier();
    const a = n.wait('a', 5000);
    const b = n.wait('b', 5000);
    notify('b');
    expect(await b).toBe(true);
    notify('*');
    expect(await a).toBe(true);
    expect(await n.wait('b', 5000)).toBe(true);
  });
});
