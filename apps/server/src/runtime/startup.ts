/**
 * Start-up steps of `startKitty` (index.ts), in the order it runs them, and the order of shutdown: each step
 * that holds a resource pushes its cleanup, and `close()` runs the cleanups in reverse.
 */
import { createDb, applyMigrations } from '@kitty/db';
import type { Services } from '@kitty/core';
import type { FastifyInstance } from 'fastify';
import { defaultBaseUrl, type ServerConfig } from './config.ts';
import type { RedisStore } from '../http/rate-limit.ts';
import { startScheduler } from './scheduler.ts';
import type { EventNotifier } from './event-notify.ts';
import { openDatabase, type OpenedDatabase } from './database.ts';
import { superviseEmbedded, type SupervisorLog } from './embedded-supervisor.ts';
import { purgeExpiredOidcPayloads } from '../oauth/adapter.ts';

/** How long `close()` waits for in-flight requests before cutting their connections. */
export const DRAIN_TIMEOUT_MS = 10_000;

export type Cleanups = Array<() => Promise<void>>;
export type Db = ReturnType<typeof createDb>;

/** Where the start-up's messages go: stderr until the HTTP server's logger exists, then that logger. */
export interface LogHolder {
  current: SupervisorLog;
}

/**
 * The database (embedded or DATABASE_URL) with migrations applied, and the pool. An embedded server this
 * process started is started again if it dies (embedded-supervisor.ts). `opening`: the database already being
 * opened (main.ts starts the embedded server before it loads the rest of Kitty); its stop is then this start's to do.
 */
export async function openStorage(
  config: ServerConfig,
  cleanups: Cleanups,
  log: LogHolder,
  mark: (phase: string) => void,
  opening: Promise<OpenedDatabase> = openDatabase(config),
) {
  const database = await opening;
  mark('database');
  const supervisor = database.embedded?.started ? superviseEmbedded(database.embedded, { log: () => log.current }) : undefined;
  cleanups.push(() => (supervisor ? supervisor.stop() : database.stop()));
  await applyMigrations(database.url);
  mark('migrations');
  // An idle pooled connection that fails (database restarted or gone) is dropped by the pool and logged; checked-out ones: @kitty/db createDb.
  const db = createDb(database.url, { onPoolError: (err) => log.current.warn({ err }, 'a pooled database connection was lost') });
  cleanups.push(() => db.close());
  return { database, databaseUrl: database.url, db };
}

/** Redis (REDIS_URL), shared by every instance's rate limits; none when unset. */
export async function connectRedis(config: ServerConfig, cleanups: Cleanups): Promise<RedisStore | undefined> {
  if (!config.redisUrl) return undefined;
  // Imported only when configured: ioredis is ~0.5 MB of JavaScript most servers never run.
  const { Redis } = await import('ioredis');
  const redis = new Redis(config.redisUrl, { enableOfflineQueue: false, maxRetriesPerRequest: 1, lazyConnect: true });
  await redis.connect();
  cleanups.push(async () => void (await redis.quit()));
  return { client: redis, prefix: config.redisPrefix };
}

/** The base URL; with PORT=0 and no KITTY_BASE_URL a free port is reserved first so every URL handed out is right. */
export async function resolveBaseUrl(config: ServerConfig): Promise<string> {
  if (config.baseUrl) return config.baseUrl;
  if (config.port === 0) {
    const net = await import('node:net');
    config.port = await new Promise<number>((resolve, reject) => {
      const srv = net.createServer();
      srv.once('error', reject);
      srv.listen(0, config.host, () => {
        const p = (srv.address() as { port: number }).port;
        srv.close(() => resolve(p));
      });
    });
  }
  return defaultBaseUrl(config.host, config.port);
}

/** Expired authorization codes, tokens, sessions and sign-in state (all in oauth_payloads) are deleted hourly. */
export function purgeExpiredPayloadsHourly(prisma: Db['prisma'], cleanups: Cleanups): void {
  const purge = setInterval(() => void purgeExpiredOidcPayloads(prisma).catch(() => {}), 3600_000);
  purge.unref();
  cleanups.push(async () => clearInterval(purge));
}

/**
 * Closing drains the app: while closing, every response ends its connection (a keep-alive connection whose
 * request was in flight would otherwise stay open after the answer and hold the close up).
 */
export function drainOnClose(app: FastifyInstance, cleanups: Cleanups): void {
  let draining = false;
  app.addHook('onSend', (_req, reply, payload, done) => {
    if (draining) reply.header('connection', 'close');
    done(null, payload);
  });
  cleanups.push(async () => {
    draining = true;
    // Fastify's close stops accepting, answers requests that arrive meanwhile on open
    // connections with 503 and waits for the in-flight ones; a stuck one is cut after the timeout.
    const cut = setTimeout(() => app.server.closeAllConnections(), DRAIN_TIMEOUT_MS);
    try {
      await app.close();
    } finally {
      clearTimeout(cut);
    }
  });
}

/**
 * The scheduler and the webhook worker, once the app listens. Their cleanups go before the app's (cleanups run
 * in reverse): they stop before requests drain; running webhook attempts finish (or are retried by any
 * instance after their job expires).
 */
export async function startBackground(
  config: ServerConfig,
  services: Services,
  eventNotifier: EventNotifier,
  databaseUrl: string,
  app: FastifyInstance,
  cleanups: Cleanups,
  mark: (phase: string) => void,
): Promise<void> {
  const beforeApp = (fn: () => Promise<void>) => cleanups.splice(cleanups.length - 1, 0, fn);
  if (config.scheduler) beforeApp(startScheduler(services, app.log, config.schedulerIntervalSeconds * 1000, config.eventRetentionDays));
  if (config.webhooks.enabled) {
    // Loaded after listen; pg-boss itself only once any webhook endpoint exists (webhook-worker.ts).
    const { startWebhookWorker } = await import('./webhook-worker.ts');
    beforeApp(await startWebhookWorker(services, eventNotifier, { databaseUrl, ...config.webhooks }, app.log));
    mark('webhook worker');
  }
}
