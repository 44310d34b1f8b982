/**
 * Reading an agent's event feed (list_events, the SSE stream): its own event_recipients rows in
 * (txid, event id) order, only those of transactions older than every transaction of this
 * database still running (kitty_event_horizon, read in a statement before the read itself), so an
 * event can never commit behind a cursor already handed out.
 * `event_id` = "evt_" + 16 hex digits of the txid + 16 of the event id: opaque, sortable as text.
 */
import type { Db, EventWaiter, SqlReader } from '../../kernel/context.ts';
import { ToolError, validationError } from '../../kernel/errors.ts';

/** An event as every delivery shows it. */
export interface FeedEvent {
  event_id: string;
  type: string;
  created_at: string;
  group_id: string | null;
  actor: { agent_id: string; handle: string; display_name: string } | null;
  data: Record<string, unknown>;
  inbox_item_id: string | null;
}

interface Position {
  txid: bigint;
  id: bigint;
}

const hex = (n: bigint) => n.toString(16).padStart(16, '0');
const ID_FORMAT = /^evt_([0-9a-f]{16})([0-9a-f]{16})$/;

/** The event_id of feed position `p` (what decodeEventId reads back). */
export function encodeEventId(p: Position): string {
  return `evt_${hex(p.txid)}${hex(p.id)}`;
}

/** The position of an event_id; VALIDATION_ERROR naming `field` when it is not one. */
export function decodeEventId(s: string, field: string): Position {
  const m = ID_FORMAT.exec(s);
  if (!m) throw validationError(field, 'is not an event_id (as returned in events and next_cursor)', 'bad_cursor');
  return { txid: BigInt(`0x${m[1]}`), id: BigInt(`0x${m[2]}`) };
}

type Row = {
  txid: bigint;
  id: bigint;
  type: string;
  created_at: Date;
  group_id: string | null;
  data: Record<string, unknown>;
  inbox_item_id: string | null;
  actor_id: string | null;
  handle: string | null;
  display_name: string | null;
};

/** Its own statement (and so an older snapshot than the read that uses it): see the migration. */
async function eventHorizon(db: SqlReader): Promise<bigint> {
  const rows = await db.$queryRaw<Array<{ h: bigint }>>`SELECT kitty_event_horizon() AS h`;
  return rows[0]!.h;
}

/** Up to `limit` events of `agentId` after `after` (from the oldest kept when null), optionally of `types` only. */
export async function readEvents(
  db: SqlReader,
  agentId: string,
  opts: { after: string | null; types?: readonly string[] | undefined; limit: number; field?: string },
): Promise<FeedEvent[]> {
  const from = opts.after ? decodeEventId(opts.after, opts.field ?? 'after') : { txid: -1n, id: -1n };
  const types = opts.types?.length ? [...opts.types] : null;
  const horizon = await eventHorizon(db);
  const rows = await db.$queryRaw<Row[]>`
    SELECT r.txid, r.event_id AS id, e.type, e.created_at, e.group_id::text, e.data, r.inbox_item_id::text,
           e.actor_id::text, a.handle, a.display_name
    FROM event_recipients r
    JOIN events e ON e.id = r.event_id
    LEFT JOIN agents a ON a.id = e.actor_id
    WHERE r.agent_id = ${agentId}::uuid AND (r.txid, r.event_id) > (${from.txid}, ${from.id})
      AND r.txid < ${horizon}
      AND (${types}::text[] IS NULL OR e.type = ANY(${types}::text[]))
    ORDER BY r.txid, r.event_id
    LIMIT ${opts.limit}`;
  return rows.map((r) => ({
    event_id: encodeEventId(r),
    type: r.type,
    created_at: r.created_at.toISOString(),
    group_id: r.group_id,
    actor: r.actor_id ? { agent_id: r.actor_id, handle: r.handle ?? '', display_name: r.display_name ?? '' } : null,
    data: r.data,
    inbox_item_id: r.inbox_item_id,
  }));
}

/**
 * The event_id of the agent's newest readable event (a stream that starts "now" resumes after it),
 * or of the one `skip` places older; null when there is none.
 */
export async function latestEventId(db: Db, agentId: string, skip = 0): Promise<string | null> {
  const horizon = await eventHorizon(db);
  const rows = await db.$queryRaw<Array<{ txid: bigint; id: bigint }>>`
    SELECT txid, event_id AS id FROM event_recipients
    WHERE agent_id = ${agentId}::uuid AND txid < ${horizon}
    ORDER BY txid DESC, event_id DESC LIMIT 1 OFFSET ${skip}`;
  return rows[0] ? encodeEventId(rows[0]) : null;
}

/** Whose feed `auth` reads (its own agent's): UNAUTHENTICATED without a credential, FORBIDDEN without the read scope. */
export function feedOwner(auth: { agentId: string; scopes: readonly string[] } | null): string {
  if (!auth) throw new ToolError('UNAUTHENTICATED', 'Events need a credential: send "Authorization: Bearer <api key>".');
  if (!auth.scopes.includes('svc:read'))
    throw new ToolError('FORBIDDEN', 'This credential lacks the scope svc:read.', { details: { required_scope: 'svc:read' } });
  return auth.agentId;
}

/** The agent's newest `limit` events, oldest first, and the cursor to go on from (as list_events' next_cursor). */
export async function latestEvents(db: Db, agentId: string, limit: number): Promise<{ events: FeedEvent[]; next_cursor: string | null }> {
  const before = await latestEventId(db, agentId, limit);
  const events = await readEvents(db, agentId, { after: before, limit });
  return { events, next_cursor: events.at(-1)?.event_id ?? before };
}

const SAFETY_POLL_MS = 5000;
const FIRST_RECHECK_MS = 50;

/**
 * readEvents, waiting up to `waitMs` for at least one event: woken by `waiter` (NOTIFY) when the
 * agent may have new events, and re-reading soon after a wake that found nothing (an older
 * transaction was still running) and at least every 5 s (a notification lost while the listener
 * reconnected). Without a waiter it polls every 250 ms. `signal` ends the wait early.
 */
export async function waitForEvents(
  db: Db,
  waiter: EventWaiter | undefined,
  agentId: string,
  opts: { after: string | null; types?: readonly string[] | undefined; limit: number; waitMs: number; signal?: AbortSignal },
): Promise<FeedEvent[]> {
  const deadline = Date.now() + opts.waitMs;
  let pause = SAFETY_POLL_MS;
  for (;;) {
    const events = await readEvents(db, agentId, opts);
    const left = deadline - Date.now();
    if (events.length || left <= 0 || opts.signal?.aborted) return events;
    if (!waiter) {
      await new Promise((r) => setTimeout(r, Math.min(250, left)));
      continue;
    }
    const woke = await waiter.wait(agentId, Math.min(pause, left), opts.signal);
    pause = woke ? FIRST_RECHECK_MS : Math.min(pause * 2, SAFETY_POLL_MS);
  }
}

/**
 * Calls `onEvents` with each batch of events the agent's feed gains after this call, until
 * `signal` aborts (the wake-ups of waitForEvents: NOTIFY from any instance, re-reads every 5 s).
 */
export async function watchEvents(
  db: Db,
  waiter: EventWaiter | undefined,
  agentId: string,
  signal: AbortSignal,
  onEvents: (events: FeedEvent[]) => void,
): Promise<void> {
  let cursor = await latestEventId(db, agentId);
  while (!signal.aborted) {
    const events = await waitForEvents(db, waiter, agentId, { after: cursor, limit: 100, waitMs: 60_000, signal });
    if (!events.length || signal.aborted) continue;
    cursor = events.at(-1)!.event_id;
    onEvents(events);
  }
}
