/**
 * Wakes the readers of event feeds waiting on this instance (list_events' long poll, SSE streams,
 * areas/events/feed.ts) when events may have been appended on any instance: kitty_append_events
 * NOTIFYs `kitty_events` on commit with the recipients' ids (comma-separated; '*' = everyone),
 * received on the instance's one LISTEN connection (pg-listener.ts). The log is the truth: a
 * wake-up only makes a reader query again, and readers also re-read every few seconds, so a
 * notification missed while the connection was down delays an event but never loses it (every
 * waiter is woken when the connection is back).
 *
 * A reader is between two waits while it reads: a notification for its agent that arrives then
 * would be lost and the reader would sleep until the next one (or its 5 s safety re-read). So a
 * notification for an agent that waited recently but has no waiter right now is kept, and the
 * agent's next wait() returns at once (measured: the cause of 5 s SSE delays at 100 events/s).
 */
import type { EventWaiter } from '@kitty/core';
import type { PgListener } from './pg-listener.ts';

const CHANNEL = 'kitty_events';
/** A notification kept for an agent between two waits counts this long; agents that waited this long ago are forgotten. */
const KEEP_MS = 2000;
const FORGET_MS = 30_000;

type Waiting = { wake(): void };

export class EventNotifier implements EventWaiter {
  private readonly waiting = new Map<string, Set<Waiting>>();
  private readonly watchers = new Set<() => void>();
  /** When each agent last called wait() (only those: a bounded map of this instance's readers). */
  private readonly lastWait = new Map<string, number>();
  /** Notifications that found no waiter of a recently waiting agent: when they arrived. */
  private readonly missed = new Map<string, number>();
  private sweptAt = Date.now();

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
    const now = Date.now();
    this.lastWait.set(agentId, now);
    const missedAt = this.missed.get(agentId);
    if (missedAt !== undefined) {
      this.missed.delete(agentId);
      if (now - missedAt <= KEEP_MS) return Promise.resolve(true);
    }
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
    const set = this.waiting.get(agentId);
    if (set) for (const w of [...set]) w.wake();
    else if (this.lastWait.has(agentId)) this.missed.set(agentId, Date.now());
    this.sweep();
  }

  private wakeAll(): void {
    const now = Date.now();
    for (const agentId of this.lastWait.keys()) if (!this.waiting.has(agentId)) this.missed.set(agentId, now);
    for (const set of [...this.waiting.values()]) for (const w of [...set]) w.wake();
    this.sweep();
  }

  /** Forgets agents that have not waited for FORGET_MS (at most once per FORGET_MS). */
  private sweep(): void {
    const now = Date.now();
    if (now - this.sweptAt < FORGET_MS) return;
    this.sweptAt = now;
    for (const [agentId, at] of this.lastWait)
      if (now - at > FORGET_MS && !this.waiting.has(agentId)) {
        this.lastWait.delete(agentId);
        this.missed.delete(agentId);
      }
  }
}
