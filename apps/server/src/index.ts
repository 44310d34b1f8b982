/**
 * Composition root: configuration → database (embedded or DATABASE_URL) → migrations →
 * services → registry → HTTP server. `startKitty` is what `main.ts` and the e2e tests run.
 */
import { Redis } from 'ioredis';
import { createDb, applyMigrations, startEmbeddedPostgres } from '@kitty/db';
import { appRouter, buildRegistry, runRecurrences, type Services, type Registry } from '@kitty/core';
import type { FastifyInstance } from 'fastify';
import { loadConfig, type ServerConfig } from './config.ts';
import { ApiKeyAuthenticator } from './auth.ts';
import { KittyRateLimiter } from './rate-limit.ts';
import { buildApp } from './http.ts';
import { InboxSummaryCache } from './inbox-cache.ts';

export { loadConfig, type ServerConfig } from './config.ts';

export interface RunningKitty {
  /** The inbox summary cache (stats for tests and the benchmark). */
  inboxCache: InboxSummaryCache;
  /** Base URL the server listens on, e.g. http://127.0.0.1:3000 */
  url: string;
  app: FastifyInstance;
  registry: Registry;
  services: Services;
  close(): Promise<void>;
}

/** Starts Kitty. With no `databaseUrl` an embedded PostgreSQL runs in `dataDir`. */
export async function startKitty(overrides: Partial<ServerConfig> = {}): Promise<RunningKitty> {
  const config = { ...loadConfig(), ...overrides };
  const cleanups: Array<() => Promise<void>> = [];
  const close = async () => {
    for (const fn of cleanups.reverse()) await fn().catch(() => {});
  };
  try {
    let databaseUrl = config.databaseUrl;
    if (!databaseUrl) {
      const embedded = await startEmbeddedPostgres({ dataDir: config.dataDir });
      cleanups.push(() => embedded.stop());
      databaseUrl = embedded.databaseUrl;
    }
    await applyMigrations(databaseUrl);
    const db = createDb(databaseUrl);
    cleanups.push(() => db.close());

    const redis = config.redisUrl ? new Redis(config.redisUrl, { enableOfflineQueue: false, maxRetriesPerRequest: 1, lazyConnect: true }) : undefined;
    if (redis) {
      await redis.connect();
      cleanups.push(async () => void (await redis.quit()));
    }
    // Base URL is known only after listen when PORT=0; services read it through config.
    const kittyConfig = { baseUrl: config.baseUrl ?? '', inviteOnly: config.inviteOnly, platformInviteCodes: config.platformInviteCodes };
    const registry = buildRegistry(appRouter);
    const authenticator = new ApiKeyAuthenticator(db.prisma);
    const inboxCache = new InboxSummaryCache(databaseUrl, db.prisma);
    await inboxCache.start();
    cleanups.push(() => inboxCache.stop());
    const services: Services = {
      prisma: db.prisma,
      pool: db.pool,
      config: kittyConfig,
      now: () => new Date(),
      onCredentialsChanged: (agentId) => authenticator.invalidate(agentId),
      inboxSummaries: inboxCache,
    };
    const rateLimiter = new KittyRateLimiter({
      points: config.rateLimitPoints,
      anonPoints: config.rateLimitAnonPoints,
      windowSeconds: config.rateLimitWindowSeconds,
      redis,
    });
    let baseUrl = config.baseUrl ?? `http://${config.host.includes(':') ? `[${config.host}]` : config.host}:${config.port}`;
    if (!config.baseUrl && config.port === 0) {
      // Reserve a port first so every URL we hand out is right.
      const net = await import('node:net');
      const port = await new Promise<number>((resolve, reject) => {
        const srv = net.createServer();
        srv.once('error', reject);
        srv.listen(0, config.host, () => {
          const p = (srv.address() as { port: number }).port;
          srv.close(() => resolve(p));
        });
      });
      config.port = port;
      baseUrl = `http://${config.host}:${port}`;
    }
    kittyConfig.baseUrl = baseUrl;
    const app = await buildApp({
      registry,
      services,
      authenticator,
      rateLimiter,
      baseUrl,
      bodyLimit: config.bodyLimit,
      allowedHosts: config.allowedHosts,
      logLevel: config.logLevel,
    });
    cleanups.push(() => app.close());
    await app.listen({ port: config.port, host: config.host });
    if (config.scheduler) startScheduler(services, app.log, cleanups);
    return { url: baseUrl, app, registry, services, inboxCache, close };
  } catch (e) {
    await close();
    throw e;
  }
}

/** Interval of the recurring-expense scheduler: each run creates every due occurrence exactly once (safe with several instances). */
export const SCHEDULER_INTERVAL_MS = 60_000;

/** Runs the recurrence scheduler now (catching up after downtime) and then every minute. */
function startScheduler(services: Services, log: { error(obj: unknown, msg: string): void }, cleanups: Array<() => Promise<void>>): void {
  let running: Promise<unknown> | undefined;
  const tick = () => {
    if (running) return;
    running = runRecurrences(services)
      .then((r) => {
        for (const e of r.errors) log.error(e, 'recurring expense failed; retried next run');
      })
      .catch((e) => log.error({ err: e }, 'recurrence scheduler run failed'))
      .finally(() => {
        running = undefined;
      });
  };
  tick();
  const timer = setInterval(tick, SCHEDULER_INTERVAL_MS);
  timer.unref();
  cleanups.push(async () => {
    clearInterval(timer);
    await running;
  });
}
