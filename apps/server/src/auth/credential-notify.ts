/**
 * Authentication caches kept true across instances: API keys are cached 30 s (api-keys.ts) and OAuth
 * connections re-read every 5 s (oauth/verify.ts) on each instance. Revoking a key or disconnecting
 * an app on one instance must not leave it usable on the others for that long, so triggers
 * (migration 20261123044000_credentials_notify) NOTIFY channel `kitty_credentials` on commit:
 * `agent:<id>` (a key of the agent revoked, rotated, re-scoped or given an expiry; the agent's
 * handle or name changed) or `grant:<id>` (an OAuth connection revoked or deleted). Each instance
 * LISTENs on its one dedicated connection (pg-listener.ts, shared with inbox-cache.ts) and drops
 * the entries at once (milliseconds).
 *
 * While the LISTEN connection is down a notification can be missed: the caches are emptied when it
 * drops and again when it is back (reconnect with backoff), and meanwhile the caches' own bounds
 * hold (30 s for a key, 5 s for a connection), as on a single instance.
 */
import type { PgListener } from '../runtime/pg-listener.ts';

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

/**
 * Subscribes `caches` to `kitty_credentials` on `listener`, which must not be started yet
 * (PgListener.subscribe throws otherwise). Payloads other than `agent:<id>` / `grant:<id>` are ignored.
 */
export function subscribeCredentialNotifications(listener: PgListener, caches: CredentialCaches): void {
  listener.subscribe(CHANNEL, {
    notify: (payload) => {
      const i = payload.indexOf(':');
      const kind = payload.slice(0, i);
      const id = payload.slice(i + 1);
      if (kind === 'agent') caches.invalidateAgent(id);
      else if (kind === 'grant') caches.invalidateGrant(id);
    },
    // Anything cached may have missed a notification: emptied when the connection drops, and again
    // once listening (entries cached while it was down were never covered).
    down: () => caches.clear(),
    listening: () => caches.clear(),
    whileDown: 'revoked credentials reach this instance within the cache lifetime (30 s for a key, 5 s for a connection)',
  });
}
