/**
 * The webhook deliveries' pg-boss queue (webhook-worker.ts), in its own module so that pg-boss is loaded only when an
 * instance first has an endpoint to serve: the worker imports this on demand.
 */
import { PgBoss } from 'pg-boss';

/** The queue's settings (KITTY_WEBHOOK_* in the server's configuration). */
export interface WebhookQueueOptions {
  databaseUrl: string;
  /** First retry delay and the largest, seconds (exponential backoff with jitter in between). */
  retryDelaySeconds: number;
  retryDelayMaxSeconds: number;
  /** How long a delivery is retried before it fails and its endpoint is disabled, seconds. */
  retryWindowSeconds: number;
  /** One attempt's time limit, ms. */
  timeoutMs: number;
}

/**
 * Starts pg-boss on `opts.databaseUrl` (schema `pgboss`, 4 connections) and creates `queue` if missing: a failed job is
 * retried with exponential backoff from `retryDelaySeconds` up to `retryDelayMaxSeconds`, an attempt expires
 * `timeoutMs` + 5 s after it started (pg-boss supervises every 10 s, so a job whose instance died is retried), finished
 * jobs are deleted after an hour. Errors pg-boss reports later go to `log`.
 * @throws when PostgreSQL refuses the connection or pg-boss cannot create its schema
 */
export async function openWebhookQueue(
  queue: string,
  opts: WebhookQueueOptions,
  log: { error(obj: unknown, msg: string): void },
): Promise<PgBoss> {
  const boss = new PgBoss({
    connectionString: opts.databaseUrl,
    schema: 'pgboss',
    max: 4,
    application_name: 'kitty-webhooks',
    superviseIntervalSeconds: 10,
  });
  boss.on('error', (e) => log.error({ err: e }, 'webhook queue error'));
  await boss.start();
  await boss.createQueue(queue, {
    retryLimit: 10_000,
    retryDelay: opts.retryDelaySeconds,
    retryBackoff: true,
    retryDelayMax: opts.retryDelayMaxSeconds,
    expireInSeconds: Math.ceil(opts.timeoutMs / 1000) + 5,
    retentionSeconds: opts.retryWindowSeconds + 7 * 86_400,
    deleteAfterSeconds: 3600,
  });
  return boss;
}
