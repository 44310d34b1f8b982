/**
 * One dedicated PostgreSQL connection per server instance that LISTENs on every channel the
 * instance's caches need (`kitty_inbox`: inbox-cache.ts, `kitty_credentials`:
 * credential-notify.ts) and hands each notification to that channel's subscriber.
 *
 * A notification sent while the connection is down is lost for good, so subscribers are told
 * when it goes down (`down`: stop trusting what notifications would have dropped) and when it is
 * listening again (`listening`: anything cached before may have missed one). It reconnects by
 * itself with backoff (500 ms, doubling to 30 s); its timers never keep the process alive.
 *
 * Other instances see this connection in `pg_stat_activity` (its only statement starts `LISTEN kitty`), and an
 * instance that sees none delivers its batched writes' wake-ups to itself alone (local-wakes.ts). Such an instance
 * looks again at least every 1.5 s, so a connection that finds another listener when it starts is trusted only
 * `TRUST_DELAY_MS` later: until then its subscribers are not told `listening`, and caches are bypassed as while it is
 * down. A connection that finds none is trusted at once (an instance delivering to itself alone would have been
 * listening, and so been seen).
 */
import { performance } from 'node:perf_hooks';
import pg from 'pg';

/** What one channel's owner does with the connection's events. */
export interface ChannelSubscriber {
  /** A notification arrived on the channel; `payload` is '' when the sender gave none. */
  notify(payload: string): void;
  /** The connection dropped (or an attempt to open it failed): notifications may be missed until `listening`. */
  down?(): void;
  /** The connection is listening (the first time or again after `down`). */
  listening?(): void;
  /** What degrades for this channel while the connection is down, for the log (e.g. "inbox summaries are read from the database"). */
  whileDown: string;
}

type Log = { warn(obj: unknown, msg: string): void };

/**
 * Sessions that may be listening on Kitty's channels: every other session of this database whose statement starts
 * `LISTEN kitty` (an instance's listener, of any version), or whose statement this role may not see.
 */
const OTHER_LISTENERS = `SELECT count(*)::int FROM pg_stat_activity
  WHERE datname = current_database() AND pid <> pg_backend_pid()
    AND (query LIKE 'LISTEN kitty%' OR query = '<insufficient privilege>')`;
/** The same, also leaving out the session `$1` (an instance's own listener, counted from its pool: local-wakes.ts). */
export const OTHER_LISTENERS_SQL = `${OTHER_LISTENERS} AND pid <> $1`;
/** Longer than an instance delivering to itself alone may go without looking for listeners (local-wakes.ts: 1.5 s). */
export const TRUST_DELAY_MS = 2_000;
const FIRST_RETRY_MS = 500;
const MAX_RETRY_MS = 30_000;
// Channel names go into LISTEN unquoted: plain lower-case identifiers only.
const CHANNEL_NAME = /^[a-z_][a-z0-9_]*$/;

export class PgListener {
  private readonly channels = new Map<string, ChannelSubscriber>();
  private client: pg.Client | undefined;
  private isListening = false;
  private started = false;
  private stopped = false;
  private retryMs = FIRST_RETRY_MS;
  private retryTimer: NodeJS.Timeout | undefined;
  private trustTimer: NodeJS.Timeout | undefined;
  private pid = 0;
  private since = 0;
  private generation = 0;

  private readonly databaseUrl: string;
  private readonly log: Log;

  /** `databaseUrl`: a PostgreSQL connection string (the primary: NOTIFY is delivered there). */
  constructor(databaseUrl: string, log: Log = { warn: () => {} }) {
    this.databaseUrl = databaseUrl;
    this.log = log;
  }

  /** True while the connection is up, LISTENing on every subscribed channel, and trusted (see above). */
  get listening(): boolean {
    return this.isListening;
  }

  /**
   * Changes each time `listening` does: a value read while listening may be cached only if this is unchanged when the
   * read ends (a drop and a reconnect during the read would otherwise go unnoticed).
   */
  get epoch(): number {
    return this.generation;
  }

  /** The connection's backend pid and when its LISTEN returned (`performance.now()` ms), while it is up; else undefined. */
  get session(): { pid: number; since: number } | undefined {
    return this.client && this.pid ? { pid: this.pid, since: this.since } : undefined;
  }

  /**
   * Hands `payload` to the subscriber of `channel` as if it had arrived on the connection (local-wakes.ts). A
   * subscriber that throws is logged; the caller goes on.
   */
  deliver(channel: string, payload: string): void {
    try {
      this.channels.get(channel)?.notify(payload);
    } catch (err) {
      this.log.warn({ err, channel }, 'A notification subscriber failed');
    }
  }

  /**
   * Registers the subscriber of `channel` (one per channel). Must be called before `start()`.
   * Throws on a second subscriber for the same channel, a name that is not a plain lower-case
   * identifier, or after `start()`.
   */
  subscribe(channel: string, subscriber: ChannelSubscriber): void {
    if (!CHANNEL_NAME.test(channel)) throw new Error(`PgListener: channel name ${JSON.stringify(channel)} is not a plain identifier`);
    if (this.started) throw new Error(`PgListener: subscribe to ${channel} before start()`);
    if (this.channels.has(channel)) throw new Error(`PgListener: channel ${channel} already has a subscriber`);
    this.channels.set(channel, subscriber);
  }

  /** Opens the connection (once; later calls do nothing). Resolves once listening (or after the first failure, then retries in the background). */
  async start(): Promise<void> {
    if (this.started) return;
    this.started = true;
    await this.connect();
  }

  /** Closes the connection and stops reconnecting; waits for the connection to end. Idempotent. */
  async stop(): Promise<void> {
    this.stopped = true;
    clearTimeout(this.retryTimer);
    clearTimeout(this.trustTimer);
    const c = this.client;
    this.client = undefined;
    this.isListening = false;
    if (c) await release(c);
  }

  private async connect(): Promise<void> {
    if (this.stopped) return;
    const client = new pg.Client({ connectionString: this.databaseUrl });
    client.on('notification', (msg) => this.deliver(msg.channel, msg.payload ?? ''));
    client.on('error', (err) => this.down(client, err));
    client.on('end', () => this.down(client));
    this.client = client;
    let others: number;
    try {
      await client.connect();
      // One simple-protocol query: LISTEN on every channel at once, then who else may listen (the session shows this
      // text in pg_stat_activity from the moment it starts; a separate statement would replace it).
      const listen = [...this.channels.keys()].map((c) => `LISTEN ${c}; `).join('');
      const results = (await client.query(`${listen}SELECT pg_backend_pid() AS pid, (${OTHER_LISTENERS}) AS others`)) as unknown as
        pg.QueryResult<{ pid: number; others: number }> | Array<pg.QueryResult<{ pid: number; others: number }>>;
      const row = (Array.isArray(results) ? results.at(-1)! : results).rows[0]!;
      [this.pid, others] = [row.pid, row.others];
    } catch (err) {
      if (!this.stopped) this.log.warn({ err, channels: [...this.channels.keys()] }, `LISTEN failed; retrying. ${this.degraded()}`);
      this.down(client);
      return;
    }
    if (this.client !== client) return; // dropped or stopped meanwhile
    this.since = performance.now();
    this.retryMs = FIRST_RETRY_MS;
    if (others === 0) this.trust(client);
    else {
      this.trustTimer = setTimeout(() => this.trust(client), TRUST_DELAY_MS);
      this.trustTimer.unref();
    }
  }

  /** `client` has listened long enough to be seen by every other instance: its subscribers may trust it. */
  private trust(client: pg.Client): void {
    if (this.client !== client) return;
    this.isListening = true;
    this.generation++;
    for (const s of this.channels.values()) s.listening?.();
  }

  /** `client` is gone (error, end, failed attempt): tell the subscribers and reconnect later. Runs once per client. */
  private down(client: pg.Client, err?: Error): void {
    if (this.client !== client) return;
    this.client = undefined;
    this.isListening = false;
    this.generation++;
    this.pid = 0;
    clearTimeout(this.trustTimer);
    void release(client);
    for (const s of this.channels.values()) s.down?.();
    if (this.stopped) return;
    if (err) this.log.warn({ err, channels: [...this.channels.keys()] }, `LISTEN connection lost. ${this.degraded()}`);
    this.retryTimer = setTimeout(() => void this.connect(), this.retryMs);
    this.retryTimer.unref();
    this.retryMs = Math.min(this.retryMs * 2, MAX_RETRY_MS);
  }

  /** E.g. "Until it is back: kitty_inbox: inbox summaries are read from the database; kitty_credentials: …" */
  private degraded(): string {
    return `Until it is back: ${[...this.channels].map(([c, s]) => `${c}: ${s.whileDown}`).join('; ')}`;
  }
}

/** Ends a client we no longer use; a late error (e.g. 57P01 at server shutdown) must not crash the process. */
async function release(client: pg.Client): Promise<void> {
  client.removeAllListeners();
  client.on('error', () => {}); // an 'error' event without a listener would crash the process
  await client.end().catch(() => {});
}
