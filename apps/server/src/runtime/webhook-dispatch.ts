/**
 * The webhook dispatcher's two transactions (webhook-worker.ts runs them; docs/events.md "Webhooks"), each on a pooled
 * pg connection rather than a Prisma interactive transaction: under a stream of writes a pass runs up to 50 times a
 * second, and through Prisma its 8 statements took 12 ms at the median (now 5 statements, the deliveries and the
 * cursor in one). The jobs are inserted on the same transaction (pg-boss `insert` with a `db` over the connection),
 * so cursor, deliveries and jobs commit together.
 */
import type { Pool, PoolClient } from 'pg';
import type { PgBoss } from 'pg-boss';
import { decodeEventId, encodeEventId, readEvents } from '@kitty/core';
import { inPgTransaction } from './pg-transaction.ts';

type JobInserter = Pick<PgBoss, 'insert'>;

/** pg-boss statements run on the caller's transaction (its pg connection). */
const onClient = (client: PoolClient) => ({
  executeSql: async (text: string, values: unknown[] = []) => ({ rows: (await client.query(text, values)).rows as unknown[] }),
});

/** Queues up to `page` of test_webhook's pings (rows with queued = false) on `queue`; answers how many. */
export const queueWebhookPings = (pool: Pool, boss: JobInserter, queue: string, page: number) =>
  inPgTransaction(pool, async ({ client }) => {
    const { rows } = await client.query<{ id: string; webhook_id: string }>({
      name: 'kitty_webhook_pings',
      text: 'SELECT id::text, webhook_id::text FROM webhook_deliveries WHERE NOT queued ORDER BY id LIMIT $1 FOR UPDATE SKIP LOCKED',
      values: [page],
    });
    if (!rows.length) return 0;
    await boss.insert(
      queue,
      rows.map((r) => ({ data: { delivery_id: r.id }, group: { id: r.webhook_id } })),
      { db: onClient(client) },
    );
    await client.query({
      name: 'kitty_webhook_pings_queued',
      text: 'UPDATE webhook_deliveries SET queued = true WHERE id = ANY($1::bigint[])',
      values: [rows.map((r) => r.id)],
    });
    return rows.length;
  });

/**
 * Moves endpoint `webhookId`'s cursor over up to `page` events of its agent, inserting a delivery and a job on `queue`
 * for each of the types it wants; answers how many events it read and how many jobs it queued. Nothing when the
 * endpoint is paused, disabled, gone or locked by another instance's pass.
 */
export const advanceWebhook = (pool: Pool, boss: JobInserter, queue: string, webhookId: string, page: number) =>
  inPgTransaction(pool, async (tx) => {
    const [w] = (
      await tx.client.query<{ agent_id: string; event_types: string[] | null; cursor_txid: string; cursor_event_id: string }>({
        name: 'kitty_webhook_lock',
        text: `SELECT agent_id::text, event_types, cursor_txid, cursor_event_id FROM webhooks
                 WHERE id = $1::uuid AND NOT paused AND disabled_at IS NULL FOR UPDATE SKIP LOCKED`,
        values: [webhookId],
      })
    ).rows;
    if (!w) return { read: 0, queued: 0 };
    const after = encodeEventId({ txid: BigInt(w.cursor_txid), id: BigInt(w.cursor_event_id) });
    const events = await readEvents(tx, w.agent_id, { after, limit: page });
    if (!events.length) return { read: 0, queued: 0 };
    const wanted = events.filter((e) => !w.event_types || w.event_types.includes(e.type));
    const last = decodeEventId(events.at(-1)!.event_id, 'cursor');
    // The deliveries and the cursor in one statement (the deliveries' ids answered for their jobs).
    const { rows } = await tx.client.query<{ id: string }>({
      name: 'kitty_webhook_advance',
      text: `WITH cursor AS (UPDATE webhooks SET cursor_txid = $5, cursor_event_id = $6 WHERE id = $1::uuid)
               INSERT INTO webhook_deliveries (webhook_id, event_id, event_type, payload, queued)
               SELECT $1::uuid, e.id, e.type, e.payload, true
               FROM unnest($2::text[], $3::text[], $4::text[]) AS e(id, type, payload)
               ON CONFLICT (webhook_id, event_id) DO NOTHING RETURNING id::text`,
      values: [
        webhookId,
        wanted.map((e) => e.event_id),
        wanted.map((e) => e.type),
        wanted.map((e) => JSON.stringify(e)),
        String(last.txid),
        String(last.id),
      ],
    });
    if (rows.length)
      await boss.insert(
        queue,
        rows.map((r) => ({ data: { delivery_id: r.id }, group: { id: webhookId } })),
        { db: onClient(tx.client) },
      );
    return { read: events.length, queued: rows.length };
  });
