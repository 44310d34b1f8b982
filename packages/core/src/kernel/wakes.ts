/**
 * Wake-ups sent after COMMIT. A transaction that sends NOTIFY holds PostgreSQL's notify-queue lock while its commit
 * record is flushed, so every notifying write in the cluster commits one after another (measured on the batched hot
 * write: 131–147 writes/s with the notifications inside it, 316–405/s without). A batched write therefore runs as
 * `kitty_apply_batch_quiet` (migration 20261126002000_notify_after_commit), which keeps its notifications out of the
 * write, and then sends the same ones here, in a statement of their own (no transaction id: nothing to flush) shared
 * with the writes that committed at the same time (WakeSender).
 *
 * Channels (read by apps/server runtime/event-notify.ts and runtime/inbox-cache.ts on every instance):
 * - `kitty_events`: the event recipients' agent ids, comma-separated, or `*` past 150 (wake everyone).
 * - `kitty_inbox`: one notification per agent whose inbox counters may have changed (its cached summary is dropped).
 * A lost wake-up delays, never loses: event readers re-read the log periodically; inbox summaries are re-read when
 * their cache entry expires.
 *
 * When no other session listens on these channels (one instance: the server's runtime/local-wakes.ts decides), the
 * wake-ups are handed to this process's own subscribers instead (`LocalWakeRoute`): no statement, no delivery
 * through PostgreSQL, the same notifications.
 */
import type { Pool } from 'pg';

/** Agent ids to wake: whose event feed changed, and whose inbox counters may have changed. */
export interface Wakes {
  events: ReadonlySet<string>;
  inbox: ReadonlySet<string>;
}

/** More recipients than this wake every reader ('*'): the payload stays far below NOTIFY's 8,000-byte limit. */
const MAX_LISTED = 150;

/** The `kitty_events` payload for `recipients` (empty string: nothing to send). */
function eventsPayload(recipients: ReadonlySet<string>): string {
  return recipients.size > MAX_LISTED ? '*' : [...recipients].join(',');
}

/**
 * Delivery of wake-ups inside this process, for when nothing else would hear them (set by the server with
 * `setLocalWakeRoute`). Without one, every wake-up goes through PostgreSQL.
 */
export interface LocalWakeRoute {
  /** True when no other session listens on the wake-up channels, so this process's own subscribers are the only ones. */
  local(): boolean;
  /** Hands one notification (`channel`, `payload` as NOTIFY would carry them) to this process's subscriber of `channel`. */
  deliver(channel: 'kitty_events' | 'kitty_inbox', payload: string): void;
}

/** Wake-ups waiting for the next statement, and the writes waiting for it to be sent. */
interface Pending {
  events: Set<string>;
  inbox: Set<string>;
  sent: Promise<void>;
  resolve: () => void;
}

/**
 * Sends the wake-ups of concurrent writes together: one statement carries every write's wake-ups that arrived while
 * the previous statement was on its way (the event recipients joined into one `kitty_events` payload, `*` past 150;
 * each agent's `kitty_inbox` notification once). With nothing in flight a write's wake-ups leave at once; under load
 * writes share statements instead of each paying a round trip of its own (PostgreSQL and Node CPU per write).
 */
export class WakeSender {
  private readonly pool: Pool;
  private pending: Pending | undefined;
  private flushing = false;
  /** Where wake-ups go instead of a statement while it says `local()` (setLocalWakeRoute). */
  route: LocalWakeRoute | undefined;

  constructor(pool: Pool) {
    this.pool = pool;
  }

  /**
   * Queues `wakes`; resolves when the statement carrying them has been answered (or failed: never rejects, the write
   * it follows is committed, and a missing wake-up only delays readers). Resolves true when they were instead handed
   * to this process's own subscribers, before it returned (`route`): a cache of this process has seen them already.
   */
  send(wakes: Wakes): Promise<boolean> {
    if (!wakes.events.size && !wakes.inbox.size) return Promise.resolve(false);
    if (this.route?.local()) {
      deliverHere(this.route, wakes);
      return Promise.resolve(true);
    }
    const p = (this.pending ??= WakeSender.open());
    for (const a of wakes.events) p.events.add(a);
    for (const a of wakes.inbox) p.inbox.add(a);
    if (!this.flushing) void this.flush();
    return p.sent.then(() => false);
  }

  private static open(): Pending {
    let resolve!: () => void;
    const sent = new Promise<void>((r) => (resolve = r));
    return { events: new Set(), inbox: new Set(), sent, resolve };
  }

  private async flush(): Promise<void> {
    this.flushing = true;
    try {
      for (let p = this.pending; p; p = this.pending) {
        this.pending = undefined;
        await sendWakes(this.pool, p);
        p.resolve();
      }
    } finally {
      this.flushing = false;
    }
  }
}

const senders = new WeakMap<Pool, WakeSender>();

/** The pool's WakeSender (one per pool, so every write through it shares statements). */
export function wakeSenderFor(pool: Pool): WakeSender {
  let s = senders.get(pool);
  if (!s) senders.set(pool, (s = new WakeSender(pool)));
  return s;
}

/**
 * Routes the wake-ups of writes through `pool` to `route` while it says `local()` (undefined: always through
 * PostgreSQL again). The server sets it once its LISTEN connection is up (runtime/local-wakes.ts).
 */
export function setLocalWakeRoute(pool: Pool, route: LocalWakeRoute | undefined): void {
  wakeSenderFor(pool).route = route;
}

/** The notifications `sendWakes` would send, handed to this process's subscribers (a subscriber's throw stays in it). */
function deliverHere(route: LocalWakeRoute, wakes: Wakes): void {
  const events = eventsPayload(wakes.events);
  if (events) route.deliver('kitty_events', events);
  for (const agentId of wakes.inbox) route.deliver('kitty_inbox', agentId);
}

/**
 * Sends `wakes` in one statement on a connection of `pool` (outside any transaction). Never throws: the write it follows is
 * committed, and a missing wake-up only delays readers.
 */
async function sendWakes(pool: Pool, wakes: Wakes): Promise<void> {
  if (!wakes.events.size && !wakes.inbox.size) return;
  await pool
    .query({
      name: 'kitty_wakes',
      text: `SELECT (SELECT count(pg_notify('kitty_events', $1)) WHERE $1 <> '') AS events,
                    (SELECT count(pg_notify('kitty_inbox', a)) FROM unnest($2::text[]) a) AS inbox`,
      values: [eventsPayload(wakes.events), [...wakes.inbox]],
    })
    .catch(() => undefined);
}
