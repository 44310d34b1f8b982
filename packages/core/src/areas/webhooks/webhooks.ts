/**
 * Webhook endpoints of an agent (docs/events.md "Webhooks"): each receives the agent's own events
 * (its event_recipients rows) of the chosen types, signed per Standard Webhooks with a
 * `whsec_<base64>` secret. The server's dispatcher turns new events into deliveries from each
 * endpoint's cursor; this module holds what the tools and the dispatcher share.
 */
import { randomBytes, randomUUID } from 'node:crypto';
import type { Db } from '../../kernel/context.ts';
import { ToolError, validationError } from '../../kernel/errors.ts';
import { appendEvent } from '../../kernel/events.ts';
import { notify } from '../../kernel/notify.ts';
import { refusedUrl, resolvePublic, type Resolver } from './address.ts';

/** Endpoints per agent. */
export const MAX_WEBHOOKS_PER_AGENT = 10;
/** How long the secret before a rotation keeps signing deliveries. */
const PREVIOUS_SECRET_MS = 24 * 3600_000;
/** Deliveries shown per endpoint by list_webhooks. */
const RECENT_DELIVERIES = 5;

function newWebhookSecret(): string {
  return `whsec_${randomBytes(24).toString('base64')}`;
}

/** VALIDATION_ERROR on `url` unless it is https (or loopback http when allowed) and resolves only to public addresses. */
export async function checkWebhookUrl(raw: string, allowLoopback: boolean, resolve?: Resolver): Promise<string> {
  const { reason, url } = refusedUrl(raw, allowLoopback);
  if (!url) throw validationError('url', reason, 'webhook_url');
  try {
    await resolvePublic(url.hostname, allowLoopback, resolve);
  } catch (e) {
    throw validationError('url', `${(e as Error).message}: webhooks go only to public addresses`, 'webhook_url');
  }
  return url.href;
}

type Row = {
  id: string;
  url: string;
  description: string | null;
  event_types: string[] | null;
  paused: boolean;
  disabled_at: Date | null;
  previous_secret_expires_at: Date | null;
  created_at: Date;
};

export function webhookView(r: Row, now: Date) {
  return {
    webhook_id: r.id,
    url: r.url,
    description: r.description,
    event_types: r.event_types,
    paused: r.paused,
    disabled_at: r.disabled_at?.toISOString() ?? null,
    previous_secret_expires_at:
      r.previous_secret_expires_at && r.previous_secret_expires_at > now ? r.previous_secret_expires_at.toISOString() : null,
    created_at: r.created_at.toISOString(),
  };
}

const COLUMNS = 'id::text, url, description, event_types, paused, disabled_at, previous_secret_expires_at, created_at';

/** The agent's endpoint `id` (locked when `lock`); NOT_FOUND for another agent's or a missing one. */
export async function ownWebhook(db: Db, agentId: string, id: string, lock = false): Promise<Row> {
  const rows = await db.$queryRawUnsafe<Row[]>(
    `SELECT ${COLUMNS} FROM webhooks WHERE id = $1::uuid AND agent_id = $2::uuid${lock ? ' FOR UPDATE' : ''}`,
    id,
    agentId,
  );
  if (!rows[0]) throw new ToolError('NOT_FOUND', 'No webhook endpoint of yours has this webhook_id.', { details: { webhook_id: id } });
  return rows[0];
}

export async function createWebhook(
  db: Db,
  o: { agentId: string; url: string; description: string | null; eventTypes: string[] | null; now: Date },
): Promise<{ row: Row; secret: string }> {
  // Serialises creations of one agent so the limit holds.
  await db.$queryRaw`SELECT id FROM agents WHERE id = ${o.agentId}::uuid FOR UPDATE`;
  const count = await db.$queryRaw<Array<{ n: number }>>`SELECT count(*)::int AS n FROM webhooks WHERE agent_id = ${o.agentId}::uuid`;
  if ((count[0]?.n ?? 0) >= MAX_WEBHOOKS_PER_AGENT) {
    throw new ToolError('INVALID_STATE', `At most ${MAX_WEBHOOKS_PER_AGENT} webhook endpoints per agent.`, {
      details: { limit: MAX_WEBHOOKS_PER_AGENT },
      suggestedAction: 'delete_webhook one you no longer use, or widen the event_types of an existing one (update_webhook).',
    });
  }
  const secret = newWebhookSecret();
  // Events from now on: every transaction at or above the horizon may still bring events, so the
  // cursor sits just below it (an event committed a moment before creation may also be delivered).
  const rows = await db.$queryRawUnsafe<Row[]>(
    `INSERT INTO webhooks (id, agent_id, url, description, event_types, secret, cursor_txid, cursor_event_id, created_at, updated_at)
     VALUES ($1::uuid, $2::uuid, $3, $4, $5::text[], $6, kitty_event_horizon() - 1, 9223372036854775807, $7, $7)
     RETURNING ${COLUMNS}`,
    randomUUID(),
    o.agentId,
    o.url,
    o.description,
    o.eventTypes,
    secret,
    o.now,
  );
  return { row: rows[0]!, secret };
}

export type DeliveryView = {
  event_id: string;
  event_type: string;
  status: string;
  status_code: number | null;
  error: string | null;
  attempts: number;
  created_at: string;
  last_attempt_at: string | null;
};

export async function listWebhooks(db: Db, agentId: string, now: Date) {
  const hooks = await db.$queryRawUnsafe<Row[]>(
    `SELECT ${COLUMNS} FROM webhooks WHERE agent_id = $1::uuid ORDER BY created_at, id`,
    agentId,
  );
  const ids = hooks.map((h) => h.id);
  const deliveries = ids.length
    ? await db.$queryRaw<
        Array<Omit<DeliveryView, 'created_at' | 'last_attempt_at'> & { webhook_id: string; created_at: Date; last_attempt_at: Date | null }>
      >`
        SELECT w.id::text AS webhook_id, d.event_id, d.event_type, d.status, d.status_code, d.error, d.attempts, d.created_at, d.last_attempt_at
        FROM unnest(${ids}::uuid[]) AS w(id)
        CROSS JOIN LATERAL (SELECT * FROM webhook_deliveries WHERE webhook_id = w.id ORDER BY id DESC LIMIT ${RECENT_DELIVERIES}) d`
    : [];
  return hooks.map((h) => ({
    ...webhookView(h, now),
    recent_deliveries: deliveries
      .filter((d) => d.webhook_id === h.id)
      .map(({ webhook_id: _w, created_at, last_attempt_at, ...d }) => ({
        ...d,
        created_at: created_at.toISOString(),
        last_attempt_at: last_attempt_at?.toISOString() ?? null,
      })),
  }));
}

/** What update_webhook (and the account page's pause/resume) may change; undefined leaves a field as it is. */
export interface WebhookChange {
  eventTypes?: string[] | null | undefined;
  description?: string | null | undefined;
  /** true: stop sending; false: resume (also an endpoint disabled after failing deliveries). */
  paused?: boolean | undefined;
}

/**
 * Changes the agent's endpoint `id` (locked for the change) and returns it as it now is; a resume wakes
 * the dispatcher. @throws NOT_FOUND for another agent's or a missing endpoint
 */
export async function updateWebhook(db: Db, agentId: string, id: string, change: WebhookChange, now: Date): Promise<Row> {
  await ownWebhook(db, agentId, id, true);
  const resume = change.paused === false;
  await db.$executeRaw`
    UPDATE webhooks SET
      event_types = CASE WHEN ${change.eventTypes !== undefined} THEN ${change.eventTypes ?? null}::text[] ELSE event_types END,
      description = CASE WHEN ${change.description !== undefined} THEN ${change.description ?? null} ELSE description END,
      paused = COALESCE(${change.paused ?? null}::boolean, paused),
      disabled_at = CASE WHEN ${resume} THEN NULL ELSE disabled_at END,
      updated_at = ${now}
    WHERE id = ${id}::uuid`;
  if (resume) await db.$executeRaw`SELECT pg_notify('kitty_events', ${agentId})`;
  return ownWebhook(db, agentId, id);
}

/** Deletes the agent's endpoint `id` with its delivery history; returns it as it was. @throws NOT_FOUND as ownWebhook */
export async function deleteWebhook(db: Db, agentId: string, id: string): Promise<Row> {
  const row = await ownWebhook(db, agentId, id, true);
  await db.$executeRaw`DELETE FROM webhooks WHERE id = ${id}::uuid`;
  return row;
}

/** A new signing secret for the agent's endpoint `id`; the one before keeps signing for PREVIOUS_SECRET_MS. */
export async function rotateWebhookSecret(db: Db, agentId: string, id: string, now: Date): Promise<{ row: Row; secret: string }> {
  await ownWebhook(db, agentId, id, true);
  const secret = newWebhookSecret();
  await db.$executeRaw`
    UPDATE webhooks SET previous_secret = secret, secret = ${secret},
      previous_secret_expires_at = ${new Date(now.getTime() + PREVIOUS_SECRET_MS)}, updated_at = ${now}
    WHERE id = ${id}::uuid`;
  return { row: await ownWebhook(db, agentId, id), secret };
}

/**
 * The agent behind endpoint `id` when that agent belongs to the person `humanId` (the account page).
 * @throws NOT_FOUND for a missing endpoint and for one of another person's agents alike (no probing)
 */
export async function webhookAgentOfPerson(db: Db, humanId: string, id: string): Promise<{ agentId: string; handle: string }> {
  const rows = await db.$queryRaw<Array<{ agent_id: string; handle: string }>>`
    SELECT w.agent_id::text, a.handle FROM webhooks w JOIN agents a ON a.id = w.agent_id
    WHERE w.id = ${id}::uuid AND a.human_id = ${humanId}::uuid`;
  if (!rows[0])
    throw new ToolError('NOT_FOUND', 'No webhook endpoint of your agents has this id.', {
      details: { webhook_id: id },
      suggestedAction: 'Reload the account page to see what exists now.',
    });
  return { agentId: rows[0].agent_id, handle: rows[0].handle };
}

/** Queues a `ping` delivery (the dispatcher sends it) and wakes the dispatcher; returns its id. */
export async function queuePing(db: Db, agentId: string, webhookId: string, now: Date): Promise<string> {
  const eventId = `evt_ping_${randomBytes(12).toString('hex')}`;
  const payload = {
    event_id: eventId,
    type: 'ping',
    created_at: now.toISOString(),
    group_id: null,
    actor: null,
    data: { webhook_id: webhookId },
    inbox_item_id: null,
  };
  await db.$executeRaw`
    INSERT INTO webhook_deliveries (webhook_id, event_id, event_type, payload, created_at)
    VALUES (${webhookId}::uuid, ${eventId}, 'ping', ${JSON.stringify(payload)}, ${now})`;
  await db.$executeRaw`SELECT pg_notify('kitty_events', ${agentId})`;
  return eventId;
}

/**
 * Disables an endpoint whose deliveries kept failing for the whole retry window (once): the
 * owning agent gets a `webhook.disabled` event and an inbox item. Returns false if it already was.
 */
export async function disableWebhook(db: Db, webhookId: string, reason: string, now: Date): Promise<boolean> {
  const rows = await db.$queryRaw<Array<{ agent_id: string; url: string }>>`
    UPDATE webhooks SET disabled_at = ${now}, updated_at = ${now}
    WHERE id = ${webhookId}::uuid AND disabled_at IS NULL RETURNING agent_id::text, url`;
  const hook = rows[0];
  if (!hook) return false;
  await notify(db, {
    agentId: hook.agent_id,
    kind: 'webhook_disabled',
    text: `Webhook ${hook.url} disabled: deliveries failed for the whole retry window (${reason}). Resume it with update_webhook paused=false.`,
    priority: 2,
    entityType: 'webhook',
    entityId: webhookId,
  });
  await appendEvent(db, {
    type: 'webhook.disabled',
    actorId: null,
    data: { webhook_id: webhookId, url: hook.url, reason },
    recipients: [hook.agent_id],
    link: { entityType: 'webhook', entityId: webhookId },
  });
  return true;
}
