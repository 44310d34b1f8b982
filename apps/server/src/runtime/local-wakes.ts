/**
 * Wake-ups delivered inside the process when no other instance listens. A batched write wakes event readers and drops
 * inbox summaries by NOTIFY after its commit (core kernel/wakes.ts): one statement, delivered by PostgreSQL to every
 * LISTEN connection, this instance's own included. With a single instance that round trip reaches no one else, so
 * `LocalWakes` hands the same notifications straight to this instance's subscribers (pg-listener.ts `deliver`).
 *
 * Whether anyone else listens is read from `pg_stat_activity` (pg-listener.ts `OTHER_LISTENERS_SQL`: any other
 * session whose statement starts `LISTEN kitty`, which is every Kitty instance's listener, older versions included).
 * The rule that keeps other instances from missing a wake-up:
 * - local only while this instance's listener is trusted, and the last look was sent after that listener's LISTEN
 *   returned, less than `FRESH_MS` ago, and found no other listener;
 * - a listener that found another one when it started is trusted only after pg-listener.ts `TRUST_DELAY_MS`
 *   (> `FRESH_MS`), so every instance has looked again, seen it, and sends through PostgreSQL by then. What it
 *   delivered to itself before that committed before the newcomer's caches were trusted.
 * Looks are made on demand (a write asks, the answer is older than `REFRESH_MS`): an idle instance sends nothing. A
 * look that fails, or one not yet answered, means "through PostgreSQL".
 */
import { performance } from 'node:perf_hooks';
import type { Pool } from 'pg';
import type { LocalWakeRoute } from '@kitty/core';
import { OTHER_LISTENERS_SQL, TRUST_DELAY_MS, type PgListener } from './pg-listener.ts';

/** A look answers for this long (it must stay below pg-listener.ts TRUST_DELAY_MS). */
export const FRESH_MS = 1_500;
/** A write that finds the last look older than this starts the next one (so under steady writes local mode holds). */
const REFRESH_MS = 1_000;

if (FRESH_MS >= TRUST_DELAY_MS) throw new Error('local-wakes: FRESH_MS must stay below TRUST_DELAY_MS');

type Log = { warn(obj: unknown, msg: string): void };

export class LocalWakes implements LocalWakeRoute {
  /** Counters for tests and the benchmark: notifications delivered here, and looks at pg_stat_activity. */
  readonly stats = { delivered: 0, looks: 0 };
  private look: { sentAt: number; listenerSince: number; alone: boolean } | undefined;
  private looking = false;

  private readonly pool: Pool;
  private readonly listener: PgListener;
  private readonly log: Log;

  constructor(pool: Pool, listener: PgListener, log: Log = { warn: () => {} }) {
    this.pool = pool;
    this.listener = listener;
    this.log = log;
  }

  /** True when this instance's wake-ups may go to itself alone (the rule above); may start a look in the background. */
  local(): boolean {
    const session = this.listener.listening ? this.listener.session : undefined;
    if (!session) return false;
    const now = performance.now();
    const look = this.look;
    const current = look !== undefined && look.listenerSince === session.since && look.sentAt >= session.since;
    if (!current || now - look.sentAt >= REFRESH_MS) this.lookAgain(session);
    return current && look.alone && now - look.sentAt < FRESH_MS;
  }

  deliver(channel: 'kitty_events' | 'kitty_inbox', payload: string): void {
    this.stats.delivered++;
    this.listener.deliver(channel, payload);
  }

  private lookAgain(session: { pid: number; since: number }): void {
    if (this.looking) return;
    this.looking = true;
    this.stats.looks++;
    const sentAt = performance.now();
    this.pool
      .query<{ count: number }>({ name: 'kitty_other_listeners', text: OTHER_LISTENERS_SQL, values: [session.pid] })
      .then(
        (r) => {
          this.look = { sentAt, listenerSince: session.since, alone: r.rows[0]!.count === 0 };
        },
        (err: unknown) => {
          this.look = undefined;
          this.log.warn({ err }, 'Looking for other instances failed; wake-ups go through PostgreSQL');
        },
      )
      .finally(() => (this.looking = false));
  }
}
