/**
 * Authentication caches kept true across instances: API keys are cached 30 s (auth.ts) and OAuth
 * connections re-read every 5 s (oauth/verify.ts) on each instance. Revoking a key or disconnecting
 * an app on one instance must not leave it usable on the others for that long, so triggers
 * (migration 20261123044000_credentials_notify) NOTIFY channel `kitty_credentials` on commit:
 * `agent:<id>` (a key of the agent revoked, rotated, re-scoped or given an expiry; the agent's
 * handle or name changed) or `grant:<id>` (an OAuth connection revoked or deleted). Each instance
 * LISTENs on a dedicated connection and drops the entries at once (milliseconds).
 *
 * While the LISTEN connection is down a notification can be missed: the caches are emptied when it
 * drops and again when it is back (reconnect with backoff), and meanwhile the caches' own bounds
 * hold (30 s for a key, 5 s for a connection), as on a single instance.
 */
import pg from 'pg';

const CHANNEL = 'kitty_credentials';

/** What the listener drops entries from. */
export interface CredentialCaches {
  /** Drops every cached key of an agent. */
  invalidateAgent(agentId: string): void;
  /** Drops a cached OAuth connection (grant). */
  invalidateGrant(grantId: string): void;
  /** Drops everything (notifications may have been missed). */
  clear(): void;
}

export class CredentialNotifications {
  private client: pg.Client | undefined;
  private stopped = false;
  private retryMs = 500;
  private retryTimer: NodeJS.Timeout | undefined;

  private readonly databaseUrl: string;
  private readonly caches: CredentialCaches;
  private readonly log: { warn(obj: unknown, msg: string): void };

  constructor(databaseUrl: string, caches: CredentialCaches, log: { warn(obj: unknown, msg: string): void } = { warn: () => {} }) {
    this.databaseUrl = databaseUrl;
    this.caches = caches;
    this.log = log;
  }

  /** Opens the LISTEN connection. Resolves once listening (or after the first failure, then retries in the background). */
  async start(): Promise<void> {
    const client = new pg.Client({ connectionString: this.databaseUrl });
    client.on('notification', (msg) => {
      if (msg.channel !== CHANNEL || !msg.payload) return;
      const i = msg.payload.indexOf(':');
      const kind = msg.payload.slice(0, i);
      const id = msg.payload.slice(i + 1);
      if (kind === 'agent') this.caches.invalidateAgent(id);
      else if (kind === 'grant') this.caches.invalidateGrant(id);
    });
    const down = (err?: Error) => {
      if (this.client !== client) return;
      this.client = undefined;
      client.removeAllListeners();
      client.on('error', () => {}); // a late error (e.g. 57P01 at server shutdown) must not crash the process
      client.end().catch(() => {});
      this.caches.clear();
      if (!this.stopped) {
        if (err)
          this.log.warn(
            { err },
            'credentials LISTEN connection lost; revocations reach this instance within the cache lifetime until it is back',
          );
        this.retry();
      }
    };
    client.on('error', down);
    client.on('end', () => down());
    this.client = client;
    try {
      await client.connect();
      await client.query(`LISTEN ${CHANNEL}`);
      // Anything cached before (or while reconnecting) may have missed a notification.
      this.caches.clear();
      this.retryMs = 500;
    } catch (err) {
      this.log.warn({ err }, 'credentials LISTEN failed; retrying');
      down();
    }
  }

  private retry(): void {
    this.retryTimer = setTimeout(() => void this.start(), this.retryMs);
    this.retryTimer.unref();
    this.retryMs = Math.min(this.retryMs * 2, 30_000);
  }

  async stop(): Promise<void> {
    this.stopped = true;
    clearTimeout(this.retryTimer);
    const c = this.client;
    this.client = undefined;
    if (c) {
      c.removeAllListeners();
      c.on('error', () => {}); // an 'error' event without a listener would crash the process
      await c.end().catch(() => {});
    }
  }
}
