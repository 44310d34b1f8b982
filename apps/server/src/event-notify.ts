/**
 * Wakes the readers of event feeds waiting on this instance (list_events' long poll, SSE streams,
 * areas/events/feed.ts) when events may have been appended on any instance: kitty_append_events
 * NOTIFYs `kitty_events` on commit with the recipients' ids (comma-separated; '*' = everyone),
 * received on the instance's one LISTEN connection (pg-listener.ts). The log is the truth: a
 * wake-up only makes a reader query again, and readers also re-read every few seconds, so a
 * notification missed while the connection was down delays an event but never loses it (every
 * waiter is woken when the connection is back).
 */
import type { EventWaiter } from '@kitty/core';
import type { PgListener } from './pg-listener.ts';

const CHANNEL = 'kitty_events';

type Waiting = { wake(): void };

export class EventNotifier implements EventWaiter {
  private readonly waiting = new Map<string, Set<Waiting>>();
  private readonly watchers = new Set<() => void>();

  constructor(listener: PgListener) {
    listener.subscribe(CHANNEL, {
      notify: (payload) => {
        if (payload === '*') this.wakeAll();
        else payload.split(',').forEach((id) => this.wakeAgent(id));
        this.watchers.forEach((w) => w());
      },
      listening: () => {
        this.wakeAll();
        this.watchers.forEach((w) => w());
      },
      whileDown: 'event readers on this instance re-read every 5 s instead of at once',
    });
  }

  /** Calls `fn` on every notification (the webhook dispatcher); returns the unsubscribe function. */
  onAnyEvent(fn: () => void): () => void {
    this.watchers.add(fn);
    return () => this.watchers.delete(fn);
  }

  /** Readers waiting now (for tests and metrics). */
  get size(): number {
    let n = 0;
    for (const s of this.waiting.values()) n += s.size;
    return n;
  }

  wait(agentId: string, ms: number, signal?: AbortSignal): Promise<boolean> {
    return new Promise<boolean>((resolve) => {
      let set = this.waiting.get(agentId);
      if (!set) this.waiting.set(agentId, (set = new Set()));
      const done = (woke: boolean) => {
        clearTimeout(timer);
        signal?.removeEventListener('abort', onAbort);
        set.delete(entry);
        if (!set.size && this.waiting.get(agentId) === set) this.waiting.delete(agentId);
        resolve(woke);
      };
      const entry: Waiting = { wake: () => done(true) };
      const onAbort = () => done(false);
      const timer = setTimeout(() => done(false), Math.max(0, ms));
      set.add(entry);
      signal?.addEventListener('abort', onAbort, { once: true });
    });
  }

  private wakeAgent(agentId: string): void {
    for (const w of [...(this.waiting.get(agentId) ?? [])]) w.wake();
  }

  private wakeAll(): void {
    for (const set of [...this.waiting.values()]) for (const w of [...set]) w.wake();
  }
}
