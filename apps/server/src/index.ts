/**
 * Composition root: configuration → database (embedded or DATABASE_URL) → migrations →
 * services → registry → HTTP server. `startKitty` is what `main.ts` and the e2e tests run.
 */
import { Redis } from 'ioredis';
import { createDb, applyMigrations } from '@kitty/db';
import { appRouter, buildRegistry, type Services, type Registry } from '@kitty/core';
import type { FastifyInstance } from 'fastify';
import { defaultBaseUrl, loadConfig, type ServerConfig } from './config.ts';
import { ApiKeyAuthenticator } from './auth.ts';
import { KittyRateLimiter } from './rate-limit.ts';
import { buildApp } from './http.ts';
import { startScheduler } from './scheduler.ts';
import { InboxSummaryCache } from './inbox-cache.ts';
import { subscribeCredentialNotifications } from './credential-notify.ts';
import { PgListener } from './pg-listener.ts';
import { EventNotifier } from './event-notify.ts';
import { openDatabase } from './database.ts';
import { checkPortFree, portProblem } from './port-check.ts';
import { AbuseLimiter } from './abuse-limits.ts';
import { DatabaseHealth } from './health.ts';
import { superviseEmbedded, type SupervisorLog } from './embedded-supervisor.ts';
import { BearerAuthenticator } from './oauth/authenticator.ts';
import { loadAuthServerKeys } from './oauth/keys.ts';
import { createAuthServer, parseClientsConfig } from './oauth/provider.ts';
import { purgeExpiredOidcPayloads } from './oauth/adapter.ts';
import { OAuthTokenVerifier } from './oauth/verify.ts';
import type { OAuthRouteDeps } from './oauth/routes.ts';
import { receiptSettings } from './receipts.ts';

export { loadConfig, type ServerConfig } from './config.ts';

export interface RunningKitty {
  /** The inbox summary cache (stats for tests and the benchmark). */
  inboxCache: InboxSummaryCache;
  /** Entry counts of the in-memory caches (soak script): each is bounded. */
  cacheSizes(): Record<string, number>;
  /** Base URL of the server, e.g. http://localhost:3000 (KITTY_BASE_URL, or derived from HOST and PORT: config.ts defaultBaseUrl) */
  url: string;
  /** The database in use, for people (address without password; data folder when embedded). */
  database: string;
  app: FastifyInstance;
  registry: Registry;
  services: Services;
  /** OAuth access-token verification (absent with KITTY_OAUTH=off). */
  oauthVerifier: OAuthTokenVerifier | undefined;
  /**
   * Where start-up went, in ms, in order: `modules` (process start to `startKitty`, Node and the module graph), then each
   * step up to `listen` (the first `/health` can be answered from then on), then what starts after it (`webhook worker`).
   */
  startup: Array<[phase: string, ms: number]>;
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
  const startup: Array<[string, number]> = [['modules', performance.now()]];
  let lastMark = performance.now();
  const mark = (phase: string) => {
    const now = performance.now();
    startup.push([phase, now - lastMark]);
    lastMark = now;
  };
  const config = { ...loadConfig(), ...overrides };
  const cleanups: Array<() => Promise<void>> = [];
  let closing: Promise<void> | undefined;
  const close = () =>
    (closing ??= (async () => {
      for (const fn of cleanups.reverse()) await fn().catch(() => {});
    })());
  // Before the database: a taken port should not cost an initdb and end in a stack trace.
  await checkPortFree(config.host, config.port);
  try {
    const database = await openDatabase(config);
    mark('database');
    // An embedded server this process started is started again if it dies (embedded-supervisor.ts).
    // Until the HTTP server's logger exists (below), the supervisor's messages go to stderr.
    // eslint-disable-next-line no-console -- no logger exists yet
    let log: SupervisorLog = { error: (o, m) => console.error(m, o), warn: (o, m) => console.warn(m, o) };
    const supervisor = database.embedded?.started ? superviseEmbedded(database.embedded, { log: () => log }) : undefined;
    cleanups.push(() => (supervisor ? supervisor.stop() : database.stop()));
    const databaseUrl = database.url;
    await applyMigrations(databaseUrl);
    mark('migrations');
    // An idle pooled connection that fails (database restarted or gone) is dropped by the pool and logged; checked-out ones: @kitty/db createDb.
    const db = createDb(databaseUrl, { onPoolError: (err) => log.warn({ err }, 'a pooled database connection was lost') });
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
    const receipts = await receiptSettings(db.prisma, config);
    const kittyConfig = {
      baseUrl: config.baseUrl ?? '',
      inviteOnly: config.inviteOnly,
      platformInviteCodes: config.platformInviteCodes,
      receipts: receipts.receipts,
      webhookAllowLoopback: config.webhooks.allowLoopback,
    };
    mark('settings');
    const registry = buildRegistry(appRouter);
    mark('registry');
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
      receiptStore: receipts.store,
    };
    const rateLimiter = new KittyRateLimiter({
      points: config.rateLimitPoints,
      anonPoints: config.rateLimitAnonPoints,
      windowSeconds: config.rateLimitWindowSeconds,
      redis: redisStore,
    });
    let baseUrl = config.baseUrl ?? defaultBaseUrl(config.host, config.port);
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
      baseUrl = defaultBaseUrl(config.host, port);
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
    mark('oauth');
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
    mark('listen connection');
    const app = await buildApp({
      registry,
      services,
      authenticator: new BearerAuthenticator(authenticator, verifier),
      oauth,
      eventStreamsPerCredential: config.eventStreamsPerCredential,
      rateLimiter,
      baseUrl,
      baseUrlDerived: !config.baseUrl,
      bodyLimit: config.bodyLimit,
      allowedHosts: config.allowedHosts,
      allowedOrigins: config.allowedOrigins,
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
    mark('routes');
    // While closing, every response ends its connection: a keep-alive connection whose request was
    // in flight would otherwise stay open after the answer and hold the close up.
    log = app.log;
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
    await app.listen({ port: config.port, host: config.host }).catch((e: unknown) => {
      throw portProblem(e, config.host, config.port) ?? e; // taken since the check
    });
    mark('listen');
    // Its cleanup goes before the app's (cleanups run in reverse): drain requests first, then the scheduler.
    if (config.scheduler)
      cleanups.splice(
        cleanups.length - 1,
        0,
        startScheduler(services, app.log, config.schedulerIntervalSeconds * 1000, config.eventRetentionDays),
      );
    // The webhook worker stops before the app drains (cleanups run in reverse): no new attempts start,
    // running ones finish (or are retried by any instance after their job expires).
    // Loaded after listen: pg-boss is not needed to answer the first request.
    if (config.webhooks.enabled) {
      const { startWebhookWorker } = await import('./webhook-worker.ts');
      cleanups.splice(
        cleanups.length - 1,
        0,
        await startWebhookWorker(services, eventNotifier, { databaseUrl, ...config.webhooks }, app.log),
      );
      mark('webhook worker');
    }
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
      startup,
      close,
    };
  } catch (e) {
    await close();
    throw e;
  }
}
