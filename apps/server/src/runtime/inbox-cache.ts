/**
 * Inbox summary cache: the `inbox` block on every response without a database read per request.
 *
 * The counters live on the agent row (maintained in the same transaction as each inbox event);
 * a trigger (migration 20261121130000_inbox_notify) NOTIFYs channel `kitty_inbox` with the agent id
 * whenever they change, delivered on commit to every instance. Each instance LISTENs on its one
 * dedicated connection (pg-listener.ts, shared with credential-notify.ts) and drops that agent's
 * cached summary. A value read from the database is cached only if no notification for that agent
 * arrived while it was being read (per-agent epoch), so a cached summary is at most one notification delivery (milliseconds) behind. While the LISTEN
 * connection is down the cache is bypassed and emptied; it reconnects with backoff (pg-listener.ts).
 * Write tools ask with `fresh: true` and always read the database (their own change shows at once).
 * While no other instance listens, batched writes hand their `kitty_inbox` notifications to this instance directly
 * (local-wakes.ts), before they answer.
 */
import { LRUCache } from 'lru-cache';
import { expiringAfter, upTo } from './lru.ts';
import type { PgListener } from './pg-listener.ts';
import type { PrismaClient } from '@kitty/db';
import { inboxSummaryFor, type InboxSummary, type InboxSummarySource } from '@kitty/core';

const INBOX_CHANNEL = 'kitty_inbox';

export class InboxSummaryCache implements InboxSummarySource {
  // 20k summaries ≈ a few MB; an evicted agent's summary is read again from its row (one indexed read).
  private readonly cache = new LRUCache<string, { value: InboxSummary | null }>({ ...upTo(20_000), ...expiringAfter(5 * 60_000) });
  private readonly epochs = new LRUCache<string, number>(upTo(100_000));
  /**
   * Counters for tests and the benchmark (`writeHits`: batched writes answered with a cached summary; `writeKept`:
   * batched writes answered with a cached summary their statement brought up to date).
   */
  readonly stats = { hits: 0, misses: 0, invalidations: 0, writeHits: 0, writeKept: 0 };

  private readonly listener: PgListener;
  private readonly prisma: PrismaClient;

  /**
   * Subscribes to `kitty_inbox` on `listener`, which must not be started yet (PgListener.subscribe
   * throws otherwise); the cache is used only while `listener` is listening.
   */
  constructor(listener: PgListener, prisma: PrismaClient) {
    this.listener = listener;
    this.prisma = prisma;
    listener.subscribe(INBOX_CHANNEL, {
      notify: (agentId) => {
        if (agentId) this.invalidate(agentId);
      },
      // Notifications may be missed from now on: the cache is bypassed (listener.listening) and emptied.
      down: () => this.cache.clear(),
      whileDown: 'inbox summaries are read from the database',
    });
  }

  /** Entry counts (soak script, tests): both bounded by their LRU `max`. */
  sizes(): Record<string, number> {
    return { inbox_summaries: this.cache.size, inbox_epochs: this.epochs.size };
  }

  /** Drops an agent's cached summary (a notification arrived). */
  invalidate(agentId: string): void {
    this.stats.invalidations++;
    this.cache.delete(agentId);
    this.epochs.set(agentId, (this.epochs.get(agentId) ?? 0) + 1);
  }

  /** The summary for `agentId`; `fresh` skips the cache (after a write) and stores what it read. */
  async get(agentId: string, opts: { fresh: boolean }): Promise<InboxSummary | undefined> {
    const hit = opts.fresh ? undefined : this.entry(agentId);
    if (hit) {
      this.stats.hits++;
      return hit.value ?? undefined;
    }
    this.stats.misses++;
    const mark = this.mark(agentId);
    const value = await inboxSummaryFor(this.prisma, agentId);
    this.remember(agentId, value ?? null, mark);
    return value;
  }

  /**
   * The cached summary while the listener is trusted (null: nothing unread or to do), else undefined; reads nothing.
   * A batched write that cannot change the caller's inbox answers with it (`use` 'answer', counted in `writeHits`);
   * one that resolves the caller's own items may have its statement bring it up to date ('base'; core
   * kernel/caller-summary.ts).
   */
  peek(agentId: string, use: 'answer' | 'base' = 'answer'): InboxSummary | null | undefined {
    const hit = this.entry(agentId);
    if (hit && use === 'answer') this.stats.writeHits++;
    return hit?.value;
  }

  /** The agent's cache entry, used only while the listener is trusted (pg-listener.ts). */
  private entry(agentId: string): { value: InboxSummary | null } | undefined {
    return this.listener.listening ? this.cache.get(agentId) : undefined;
  }

  /** Taken before a summary is read: the listener's and the agent's epochs (undefined while the listener is not trusted). */
  mark(agentId: string): ReadMark | undefined {
    return this.listener.listening ? { listener: this.listener.epoch, agent: this.epochs.get(agentId) ?? 0 } : undefined;
  }

  /**
   * Stores `value`, read after `mark` was taken, only if the listener was trusted for the whole read and no
   * notification about the agent arrived meanwhile (it would have been about a change the read may not show), other
   * than `after.ownWakes`: those the writing call delivered here itself after its commit, about the change its
   * statement's read already shows (core kernel/caller-summary.ts). One more notification than that, and nothing is
   * stored.
   */
  remember(agentId: string, value: InboxSummary | null, mark: unknown, after?: { ownWakes: number; kept: boolean }): void {
    if (after?.kept) this.stats.writeKept++;
    const m = mark as ReadMark | undefined;
    const expected = m ? m.agent + (after?.ownWakes ?? 0) : undefined;
    if (m && this.listener.listening && this.listener.epoch === m.listener && (this.epochs.get(agentId) ?? 0) === expected)
      this.cache.set(agentId, { value });
  }
}

/** What `mark` takes: the listener's epoch (pg-listener.ts) and the agent's notification count. */
interface ReadMark {
  listener: number;
  agent: number;
}
