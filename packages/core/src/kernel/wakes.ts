/**
 * Wake-ups sent after COMMIT. A transaction that sends NOTIFY holds PostgreSQL's notify-queue lock while its commit
 * record is flushed, so every notifying write in the cluster commits one after another (measured on the batched hot
 * write: 131–147 writes/s with the notifications inside it, 316–405/s without). A batched write therefore runs as
 * `kitty_apply_batch_quiet` (migration 20261126002000_notify_after_commit), which keeps its notifications out of the
 * write, and then sends the same ones here, as one statement of its own (no transaction id: nothing to flush).
 *
 * Channels (read by apps/server runtime/event-notify.ts and runtime/inbox-cache.ts on every instance):
 * - `kitty_events`: the event recipients' agent ids, comma-separated, or `*` past 150 (wake everyone).
 * - `kitty_inbox`: one notification per agent whose inbox counters may have changed (its cached summary is dropped).
 * A lost wake-up delays, never loses: event readers re-read the log periodically; inbox summaries are re-read when
 * their cache entry expires.
 */
import type { Pool, PoolClient } from 'pg';

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
 * Sends `wakes` in one statement on `client` (outside any transaction). Never throws: the write it follows is
 * committed, and a missing wake-up only delays readers.
 */
export async function sendWakes(client: Pool | PoolClient, wakes: Wakes): Promise<void> {
  if (!wakes.events.size && !wakes.inbox.size) return;
  await client
    .query({
      name: 'kitty_wakes',
      text: `SELECT (SELECT count(pg_notify('kitty_events', $1)) WHERE $1 <> '') AS events,
                    (SELECT count(pg_notify('kitty_inbox', a)) FROM unnest($2::text[]) a) AS inbox`,
      values: [eventsPayload(wakes.events), [...wakes.inbox]],
    })
    .catch(() => undefined);
}
