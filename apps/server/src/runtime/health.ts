/**
 * Database health for GET /health: a `SELECT 1` bounded by a short timeout, its result cached
 * for `cacheMs` so probes and load balancers polling /health cost the database at most one
 * query per interval, and concurrent checks share one query.
 */
import type pg from 'pg';

export interface HealthState {
  ok: boolean;
  /** Why the database is considered down (when !ok). */
  reason?: string;
}

export class DatabaseHealth {
  private last: { at: number; state: HealthState } | undefined;
  private inFlight: Promise<HealthState> | undefined;

  private readonly pool: pg.Pool;
  private readonly timeoutMs: number;
  private readonly cacheMs: number;

  /**
   * @param pool the server's pg pool
   * @param timeoutMs a check slower than this counts as down (default 1000 ms)
   * @param cacheMs a result is reused for this long (default 1000 ms)
   */
  constructor(pool: pg.Pool, timeoutMs = 1000, cacheMs = 1000) {
    this.pool = pool;
    this.timeoutMs = timeoutMs;
    this.cacheMs = cacheMs;
  }

  /** The database's state, at most `cacheMs` old. Never throws. */
  check(): Promise<HealthState> {
    const now = Date.now();
    if (this.last && now - this.last.at < this.cacheMs) return Promise.resolve(this.last.state);
    return (this.inFlight ??= this.probe().then((state) => {
      this.last = { at: Date.now(), state };
      this.inFlight = undefined;
      return state;
    }));
  }

  private async probe(): Promise<HealthState> {
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<HealthState>((resolve) => {
      timer = setTimeout(() => resolve({ ok: false, reason: `no answer to SELECT 1 within ${this.timeoutMs} ms` }), this.timeoutMs);
    });
    const query = this.pool
      .query({ text: 'SELECT 1', query_timeout: this.timeoutMs } as pg.QueryConfig)
      .then((): HealthState => ({ ok: true }))
      .catch((e: Error): HealthState => ({ ok: false, reason: e.message || String(e) }));
    try {
      return await Promise.race([query, timeout]);
    } finally {
      clearTimeout(timer);
    }
  }
}
