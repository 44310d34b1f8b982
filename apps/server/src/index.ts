/**
 * Composition root: configuration → database (embedded or DATABASE_URL) → migrations →
 * services → registry → HTTP server. `startKitty` is what `main.ts` and the e2e tests run.
 */
import { Redis } from 'ioredis';
import { createDb, applyMigrations } from '@kitty/db';
import { appRouter, buildRegistry, pruneEvents, runRecurrences, type Services, type Registry } from '@kitty/core';
import type { FastifyInstance } from 'fastify';
import { loadConfig, type ServerConfig } from './config.ts';
import { ApiKeyAuthenticator } from './auth.ts';
import { KittyRateLimiter } from './rate-limit.ts';
import { buildApp } from './http.ts';
import { InboxSummaryCache } from './inbox-cache.ts';
import { subscribeCredentialNotifications } from './credential-notify.ts';
import { PgListener } from './pg-listener.ts';
import { EventNotifier } from './event-notify.ts';
import { startWebhookWorker } from './webhook-worker.ts';
import { openDatabase } from './database.ts';
import { AbuseLimiter } from './abuse-limits.ts';
import { DatabaseHealth } from './health.ts';
import { superviseEmbedded, type SupervisorLog } from './embedded-supervisor.ts';
import { BearerAuthenticator } from './oauth/authenticator.ts';
import { loadAuthServerKeys } from './oauth/keys.ts';
import { createAuthServer, parseClientsConfig } from './oauth/provider.ts';
import { purgeExpiredOidcPayloads } from './oauth/adapter.ts';
import { OAuthTokenVerifier } from './oauth/verify.ts';
import type { OAuthRouteDeps } from './oauth/routes.ts';

export { loadConfig, type ServerConfig } from './config.ts';

export interface RunningKitty {
  /** The inbox summary cache (stats for tests and the benchmark). */
  inboxCache: InboxSummaryCache;
  /** Entry counts of the in-memory caches (soak script): each is bounded. */
  cacheSizes(): Record<string, number>;
  /** Base URL the server listens on, e.g. http://127.0.0.1:3000 */
  url: string;
  /** The database in use, for people (address without password; data folder when embedded). */
  database: string;
  app: FastifyInstance;
  registry: Registry;
  services: Services;
  /** OAuth access-token verification (absent with KITTY_OAUTH=off). */
  oauthVerifier: OAuthTokenVerifier | undefined;
  /** Shuts down in order: stop accepting and drain in-flight requests (at most `DRAIN_TIMEOUT_MS`,
   *  then open connections are cut), stop the scheduler (waits for a running pass), close the
   *  LISTEN connection, Redis and the pool, then stop the embedded database if this process
   *  started it. Idempotent. */
  close(): Promise<void>;
}

/** How long `close()` waits for in-flight requests before cutting their connections. */
export const DRAIN_TIMEOUT_MS = 10_000;

/** Starts Kitty. With no `databaseUrl` an embedded PostgreSQL runs in `dataDir`. */
export async function startKitty(overrides: Partial<ServerConfig> = {}): Promise<RunningKitty> {
  const config = { ...loadConfig(), ...overrides };
  const cleanups: Array<() => Promise<void>> = [];
  let closing: Promise<void> | undefined;
  const close = () =>
    (closing ??= (async () => {
      for (const fn of cleanups.reverse()) await fn().catch(() => {});
    })());
  try {
    const database = await openDatabase(config);
    // An embedded server this process started is started again if it dies (embedded-supervisor.ts).
    let log: SupervisorLog = { error: (o, m) => console.error(m, o), warn: (o, m) => console.warn(m, o) };
    const supervisor = database.embedded?.started ? superviseEmbedded(database.embedded, { log: () => log }) : undefined;
    cleanups.push(() => (supervisor ? supervisor.stop() : database.stop()));
    const databaseUrl = database.url;
    await applyMigrations(databaseUrl);
    const db = createDb(databaseUrl);
    cleanups.push(() => db.close());

    const redis = config.redisUrl
      ? new Redis(config.redisUrl, { enableOfflineQueue: false, maxRetriesPerRequest: 1, lazyConnect: true })
      : undefined;
    if (redis) {
      await redis.connect();
      cleanups.push(async () => void (await redis.quit()));
    }
    const redisStore = redis ? { client: redis, prefix: config.redisPrefix } : undefined;
    // Base URL is known only after listen when PORT=0; services read it through config.
    const kittyConfig = {
      baseUrl: config.baseUrl ?? '',
      inviteOnly: config.inviteOnly,
      platformInviteCodes: config.platformInviteCodes,
      webhookAllowLoopback: config.webhooks.allowLoopback,
    };
    const registry = buildRegistry(appRouter);
    const authenticator = new ApiKeyAuthenticator(db.prisma);
    // One LISTEN connection for the instance (pg-listener.ts): the inbox cache and the authentication
    // caches subscribe below; it starts once both have.
    const listener = new PgListener(databaseUrl, { warn: (o, m) => log.warn(o, m) });
    const inboxCache = new InboxSummaryCache(listener, db.prisma);
    const eventNotifier = new EventNotifier(listener);
    const services: Services = {
      prisma: db.prisma,
      pool: db.pool,
      config: kittyConfig,
      now: () => new Date(),
      onCredentialsChanged: (agentId) => authenticator.invalidate(agentId),
      inboxSummaries: inboxCache,
      eventWaiter: eventNotifier,
    };
    const rateLimiter = new KittyRateLimiter({
      points: config.rateLimitPoints,
      anonPoints: config.rateLimitAnonPoints,
      windowSeconds: config.rateLimitWindowSeconds,
      redis: redisStore,
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
    let oauth: OAuthRouteDeps | undefined;
    let verifier: OAuthTokenVerifier | undefined;
    if (config.oauthEnabled) {
      const keys = await loadAuthServerKeys(db.prisma, { jwks: config.oauthJwks, cookieKeys: config.oauthCookieKeys });
      const v = new OAuthTokenVerifier(db.prisma, baseUrl, keys.jwks);
      verifier = v;
      // The account page's disconnect (and anything else that revokes a grant here) drops it from this instance's cache at once.
      services.onGrantRevoked = (grantId) => v.invalidateGrant(grantId);
      // Expired codes, sessions, tokens and sign-in state are deleted hourly (any instance may do it; deletes are idempotent).
      const purge = setInterval(() => void purgeExpiredOidcPayloads(db.prisma).catch(() => {}), 3600_000);
      purge.unref();
      cleanups.push(async () => clearInterval(purge));
      const provider = createAuthServer({
        baseUrl,
        prisma: db.prisma,
        keys,
        clients: parseClientsConfig(config.oauthClients),
        allowLoopbackCimd: config.oauthAllowLoopbackCimd,
        onGrantRevoked: (grantId) => v.invalidateGrant(grantId),
      });
      if (baseUrl.startsWith('https:')) provider.proxy = true;
      oauth = {
        provider,
        prisma: db.prisma,
        baseUrl,
        csrfSecret: keys.cookieKeys[0]!,
        oidc: config.oidc,
        authRateLimiter: new KittyRateLimiter({
          points: config.authRateLimitPoints,
          anonPoints: config.authRateLimitPoints,
          windowSeconds: config.rateLimitWindowSeconds,
          redis: redisStore,
        }),
      };
    }
    // Revocations and rotations made on other instances reach this one's authentication caches at once.
    subscribeCredentialNotifications(listener, {
      invalidateAgent: (agentId) => authenticator.invalidate(agentId),
      invalidateGrant: (grantId) => verifier?.invalidateGrant(grantId),
      clear: () => {
        authenticator.clear();
        verifier?.clearConnections();
      },
    });
    await listener.start();
    cleanups.push(() => listener.stop());
    const app = await buildApp({
      registry,
      services,
      authenticator: new BearerAuthenticator(authenticator, verifier),
      oauth,
      eventStreamsPerCredential: config.eventStreamsPerCredential,
      rateLimiter,
      baseUrl,
      bodyLimit: config.bodyLimit,
      allowedHosts: config.allowedHosts,
      trustProxy: config.trustProxy,
      logLevel: config.logLevel,
      logFile: config.logFile,
      abuseLimiter: new AbuseLimiter({
        authFailPoints: config.authFailLimit,
        authFailWindowSeconds: config.authFailWindowSeconds,
        registerPerHour: config.registerPerHour,
        registerPerDay: config.registerPerDay,
        redis: redisStore,
      }),
      databaseHealth: new DatabaseHealth(db.pool),
      timeouts: {
        requestMs: config.requestTimeoutMs,
        headersMs: config.headersTimeoutMs,
        connectionMs: config.connectionTimeoutMs,
        keepAliveMs: config.keepAliveTimeoutMs,
      },
    });
    // While closing, every response ends its connection: a keep-alive connection whose request was
    // in flight would otherwise stay open after the answer and hold the close up.
    log = app.log;
    let draining = false;
    app.addHook('onSend', async (_req, reply) => {
      if (draining) reply.header('connection', 'close');
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
    await app.listen({ port: config.port, host: config.host });
    // Its cleanup goes before the app's (cleanups run in reverse): drain requests first, then the scheduler.
    if (config.scheduler)
      cleanups.splice(
        cleanups.length - 1,
        0,
        startScheduler(services, app.log, config.schedulerIntervalSeconds * 1000, config.eventRetentionDays),
      );
    // The webhook worker stops before the app drains (cleanups run in reverse): no new attempts start,
    // running ones finish (or are retried by any instance after their job expires).
    if (config.webhooks.enabled)
      cleanups.splice(
        cleanups.length - 1,
        0,
        await startWebhookWorker(services, eventNotifier, { databaseUrl, ...config.webhooks }, app.log),
      );
    const cacheSizes = () => ({ ...authenticator.sizes(), ...inboxCache.sizes() });
    return {
      url: baseUrl,
      database: database.description,
      app,
      registry,
      services,
      inboxCache,
      oauthVerifier: verifier,
      cacheSizes,
      close,
    };
  } catch (e) {
    await close();
    throw e;
  }
}

/**
 * Runs the recurrence scheduler now (catching up after downtime) and then every `intervalMs`
 * (KITTY_SCHEDULER_INTERVAL, default a minute); returns its stop function (waits for a running pass).
 * Each run creates every due occurrence exactly once, also with several instances running it at the
 * same time (runRecurrences: row locks and a unique occurrence index; test/two-instances.test.ts).
 */
function startScheduler(
  services: Services,
  log: { error(obj: unknown, msg: string): void },
  intervalMs: number,
  eventRetentionDays: number,
): () => Promise<void> {
  let running: Promise<unknown> | undefined;
  const tick = () => {
    if (running) return;
    running = runRecurrences(services)
      .then((r) => {
        for (const e of r.errors) log.error(e, 'recurring expense failed; retried next run');
      })
      .catch((e) => log.error({ err: e }, 'recurrence scheduler run failed'))
      // Events past their retention, in bounded batches (at most 100,000 a run; the rest next run).
      .then(() => pruneEvents(services.prisma, new Date(services.now().getTime() - eventRetentionDays * 86_400_000)))
      .catch((e) => log.error({ err: e }, 'event pruning failed'))
      .finally(() => {
        running = undefined;
      });
  };
  tick();
  const timer = setInterval(tick, intervalMs);
  timer.unref();
  return async () => {
    clearInterval(timer);
    await running;
  };
}
