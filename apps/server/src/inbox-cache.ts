/**
 * Inbox summary cache: the `inbox` block on every response without a database read per request.
 *
 * The counters live on the agent row (maintained in the same transaction as each inbox event);
 * a trigger (migration 20261121130000_inbox_notify) NOTIFYs channel `kitty_inbox` with the agent id
 * whenever they change, delivered on commit to every instance. Each instance LISTENs on a
 * dedicated connection and drops that agent's cached summary. A value read from the database is
 * cached only if no notification for that agent arrived while it was being read (per-agent epoch),
 * so a cached summary is at most one notification delivery (milliseconds) behind. While the LISTEN
 * connection is down the cache is bypassed and emptied; it reconnects with backoff.
 * Write tools ask with `fresh: true` and always read the database (their own change shows at once).
 */
import pg from 'pg';
import { LRUCache } from 'lru-cache';
import { upTo } from './lru.ts';
import type { PrismaClient } from '@kitty/db';
import { inboxSummaryFor, type InboxSummary } from '@kitty/core';

const INBOX_CHANNEL = 'kitty_inbox';

export class InboxSummaryCache {
  // 20k summaries ≈ a few MB; an evicted agent's summary is read again from its row (one indexed read).
  private readonly cache = new LRUCache<string, { value: InboxSummary | null }>({ ...upTo(20_000), ttl: 5 * 60_000 });
  private readonly epochs = new LRUCache<string, number>(upTo(100_000));
  private client: pg.Client | undefined;
  private listening = false;
  private stopped = false;
  private retryMs = 500;
  private retryTimer: NodeJS.Timeout | undefined;
  /** Counters for tests and the benchmark. */
  readonly stats = { hits: 0, misses: 0, invalidations: 0 };

  private readonly databaseUrl: string;
  private readonly prisma: PrismaClient;
  private readonly log: { warn(obj: unknown, msg: string): void };

  constructor(databaseUrl: string, prisma: PrismaClient, log: { warn(obj: unknown, msg: string): void } = { warn: () => {} }) {
    this.databaseUrl = databaseUrl;
    this.prisma = prisma;
    this.log = log;
  }

  /** Opens the LISTEN connection. Resolves once listening (or after the first failure, then retries in the background). */
  async start(): Promise<void> {
    try {
      const client = new pg.Client({ connectionString: this.databaseUrl });
      client.on('notification', (msg) => {
        if (msg.channel === INBOX_CHANNEL && msg.payload) this.invalidate(msg.payload);
      });
      const down = (err?: Error) => {
        if (this.client !== client) return;
        this.client = undefined;
        this.listening = false;
        this.cache.clear();
        client.removeAllListeners();
        client.on('error', () => {}); // a late error (e.g. 57P01 at server shutdown) must not crash the process
        client.end().catch(() => {});
        if (!this.stopped) {
          if (err) this.log.warn({ err }, 'inbox LISTEN connection lost; summaries read from the database until it is back');
          this.retryTimer = setTimeout(() => void this.start(), this.retryMs);
          this.retryTimer.unref();
          this.retryMs = Math.min(this.retryMs * 2, 30_000);
        }
      };
      client.on('error', down);
      client.on('end', () => down());
      this.client = client;
      await client.connect();
      await client.query(`LISTEN ${INBOX_CHANNEL}`);
      this.listening = true;
      this.retryMs = 500;
    } catch (err) {
      this.log.warn({ err }, 'inbox LISTEN failed; retrying');
      const c = this.client;
      this.client = undefined;
      this.listening = false;
      c?.end().catch(() => {});
      if (!this.stopped) {
        this.retryTimer = setTimeout(() => void this.start(), this.retryMs);
        this.retryTimer.unref();
        this.retryMs = Math.min(this.retryMs * 2, 30_000);
      }
    }
  }

  async stop(): Promise<void> {
    this.stopped = true;
    clearTimeout(this.retryTimer);
    const c = this.client;
    this.client = undefined;
    this.listening = false;
    if (c) {
      c.removeAllListeners();
      c.on('error', () => {}); // see above: an 'error' event without a listener would crash the process
      await c.end().catch(() => {});
    }
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

  /** The summary for `agentId`; `fresh` skips the cache (after a write). */
  async get(agentId: string, opts: { fresh: boolean }): Promise<InboxSummary | undefined> {
    if (!opts.fresh && this.listening) {
      const hit = this.cache.get(agentId);
      if (hit) {
        this.stats.hits++;
        return hit.value ?? undefined;
      }
    }
    this.stats.misses++;
    const epoch = this.epochs.get(agentId) ?? 0;
    const value = await inboxSummaryFor(this.prisma, agentId);
    if (this.listening && (this.epochs.get(agentId) ?? 0) === epoch) this.cache.set(agentId, { value: value ?? null });
    return value;
  }
}
