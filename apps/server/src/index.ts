/**
 * Composition root: configuration → database (embedded or DATABASE_URL) → migrations →
 * services → registry → HTTP server. `startKitty` is what `main.ts` and the e2e tests run.
 */
import { LRUCache } from 'lru-cache';
import { appRouter, buildRegistry, groupReadWeight, setLocalWakeRoute, type Services, type Registry } from '@kitty/core';
import type { FastifyInstance } from 'fastify';
import { loadConfig, type ServerConfig } from './runtime/config.ts';
import { ApiKeyAuthenticator } from './auth/api-keys.ts';
import { KittyRateLimiter, type RedisStore } from './http/rate-limit.ts';
import { buildApp } from './http/app.ts';
import { InboxSummaryCache } from './runtime/inbox-cache.ts';
import { subscribeCredentialNotifications } from './auth/credential-notify.ts';
import { PgListener } from './runtime/pg-listener.ts';
import { LocalWakes } from './runtime/local-wakes.ts';
import { EventNotifier } from './runtime/event-notify.ts';
import { checkPortFree, portProblem } from './runtime/port-check.ts';
import type { OpenedDatabase } from './runtime/database.ts';
import { AbuseLimiter } from './http/abuse-limits.ts';
import { DatabaseHealth } from './runtime/health.ts';
import { BearerAuthenticator } from './auth/bearer.ts';
import { loadAuthServerKeys } from './oauth/keys.ts';
import { parseClientsConfig } from './oauth/scopes.ts';
import { OAuthTokenVerifier } from './oauth/verify.ts';
import type { OAuthRouteDeps } from './oauth/routes.ts';
import { receiptSettings } from './runtime/receipts.ts';
import {
  connectRedis,
  drainOnClose,
  openStorage,
  purgeExpiredPayloadsHourly,
  resolveBaseUrl,
  startBackground,
  type Cleanups,
  type Db,
  type LogHolder,
} from './runtime/startup.ts';

export { loadConfig, type ServerConfig } from './runtime/config.ts';

export interface RunningKitty {
  /** The inbox summary cache (stats for tests and the benchmark). */
  inboxCache: InboxSummaryCache;
  /** The instance's LISTEN connection (tests: whether it is trusted yet). */
  listener: PgListener;
  /** Wake-ups delivered to this instance alone while no other listens (stats for tests and the benchmark). */
  localWakes: LocalWakes;
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

export { DRAIN_TIMEOUT_MS } from './runtime/startup.ts';

/**
 * The OAuth authorization server (KITTY_OAUTH, on by default): its keys, the access-token verifier, and what its routes need.
 * The keys and the verifier (every request with a token uses it) are made now; `oidc-provider` (provider.ts) is imported and
 * created on the first request to an OAuth route (routes.ts), which keeps it out of start-up and idle memory.
 */
async function startOAuth(
  config: ServerConfig,
  { prisma, pool }: Pick<Db, 'prisma' | 'pool'>,
  baseUrl: string,
  authRateLimiter: KittyRateLimiter,
): Promise<{ routes: OAuthRouteDeps; verifier: OAuthTokenVerifier }> {
  const keys = await loadAuthServerKeys(pool, { jwks: config.oauthJwks, cookieKeys: config.oauthCookieKeys });
  const verifier = new OAuthTokenVerifier(prisma, baseUrl, keys.jwks);
  // Checked now: a bad KITTY_OAUTH_CLIENTS stops start-up, as it did when the provider was created here.
  const clients = parseClientsConfig(config.oauthClients);
  const provider = async () => {
    const { createAuthServer } = await import('./oauth/provider.ts');
    const created = createAuthServer({
      baseUrl,
      prisma,
      keys,
      clients,
      allowLoopbackCimd: config.oauthAllowLoopbackCimd,
      onGrantRevoked: (grantId) => verifier.invalidateGrant(grantId),
    });
    if (baseUrl.startsWith('https:')) created.proxy = true;
    return created;
  };
  return { routes: { provider, prisma, baseUrl, csrfSecret: keys.cookieKeys[0]!, authRateLimiter }, verifier };
}

/** The HTTP server's dependencies that come straight from the configuration. */
function httpSettings(config: ServerConfig, redisStore: RedisStore | undefined, db: Db) {
  return {
    eventStreamsPerCredential: config.eventStreamsPerCredential,
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
  };
}

/**
 * Starts Kitty. With no `databaseUrl` an embedded PostgreSQL runs in `dataDir`.
 * @param opts.database the database already being opened for this configuration (`openDatabase`, runtime/database.ts),
 *        started before this module was loaded (main.ts), so that the embedded server starts while Node loads Kitty's
 *        modules; from this call on, stopping it (when this process started it) is this start's to do, also when it fails.
 *        The port was checked before it was opened, so it is not checked again here.
 */
export async function startKitty(
  overrides: Partial<ServerConfig> = {},
  opts: { database?: Promise<OpenedDatabase> } = {},
): Promise<RunningKitty> {
  const startup: Array<[string, number]> = [['modules', performance.now()]];
  let lastMark = performance.now();
  const mark = (phase: string) => {
    const now = performance.now();
    startup.push([phase, now - lastMark]);
    lastMark = now;
  };
  const config = { ...loadConfig(), ...overrides };
  const cleanups: Cleanups = [];
  let closing: Promise<void> | undefined;
  const close = () =>
    (closing ??= (async () => {
      for (const fn of cleanups.reverse()) await fn().catch(() => {});
    })());
  try {
    // Before the database: a taken port should not cost an initdb and end in a stack trace.
    if (!opts.database) await checkPortFree(config.host, config.port);
    // eslint-disable-next-line no-console -- no logger exists yet
    const log: LogHolder = { current: { error: (o, m) => console.error(m, o), warn: (o, m) => console.warn(m, o) } };
    const { database, databaseUrl, db } = await openStorage(config, cleanups, log, mark, opts.database);
    const redisStore = await connectRedis(config, cleanups);
    // Base URL is known only after listen when PORT=0; services read it through config.
    const receipts = await receiptSettings(db.pool, config);
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
    const listener = new PgListener(databaseUrl, { warn: (o, m) => log.current.warn(o, m) });
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
      // The reads batched writes decided on, per group (access/group-reads.ts): at most 50,000 members' worth, ~12 MB.
      groupReads: new LRUCache<string, object>({ maxSize: 50_000, sizeCalculation: groupReadWeight }),
      // Pending payments this process recorded, for their transitions (areas/payments/payment-reads.ts): 550-700 bytes
      // each (measured), ~17 MB when full. The least recently recorded go first, so it must hold the backlog agents
      // work through: with 10,000, a backlog of 20,000 pending payments confirmed oldest first read every one again.
      paymentReads: new LRUCache<string, object>({ max: 25_000 }),
    };
    const rateLimiter = new KittyRateLimiter({
      points: config.rateLimitPoints,
      anonPoints: config.rateLimitAnonPoints,
      windowSeconds: config.rateLimitWindowSeconds,
      redis: redisStore,
    });
    const baseUrl = await resolveBaseUrl(config);
    kittyConfig.baseUrl = baseUrl;
    // Sign-in, registration, consent and token endpoints: one stricter per-IP budget.
    const authRateLimiter = new KittyRateLimiter({
      points: config.authRateLimitPoints,
      anonPoints: config.authRateLimitPoints,
      windowSeconds: config.rateLimitWindowSeconds,
      redis: redisStore,
    });
    const oauth = config.oauthEnabled ? await startOAuth(config, db, baseUrl, authRateLimiter) : undefined;
    const verifier = oauth?.verifier;
    // The account page's disconnect (and anything else that revokes a grant here) drops it from this instance's cache at once.
    if (verifier) services.onGrantRevoked = (grantId) => verifier.invalidateGrant(grantId);
    // Expired codes, sessions, tokens and sign-in state are deleted hourly (any instance may do it; deletes are idempotent).
    purgeExpiredPayloadsHourly(db.prisma, cleanups);
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
    // Batched writes' wake-ups go to this instance alone while no other instance listens (runtime/local-wakes.ts).
    const localWakes = new LocalWakes(db.pool, listener, { warn: (o, m) => log.current.warn(o, m) });
    setLocalWakeRoute(db.pool, localWakes);
    cleanups.push(async () => setLocalWakeRoute(db.pool, undefined));
    mark('listen connection');
    const app = await buildApp({
      ...httpSettings(config, redisStore, db),
      registry,
      services,
      authenticator: new BearerAuthenticator(authenticator, verifier),
      signIn: { prisma: db.prisma, baseUrl, oidc: config.oidc, authRateLimiter },
      oauth: oauth?.routes,
      rateLimiter,
      baseUrl,
      baseUrlDerived: !config.baseUrl,
    });
    mark('routes');
    log.current = app.log;
    drainOnClose(app, cleanups);
    await app.listen({ port: config.port, host: config.host }).catch((e: unknown) => {
      throw portProblem(e, config.host, config.port) ?? e; // taken since the check
    });
    mark('listen');
    await startBackground(config, services, eventNotifier, databaseUrl, app, cleanups, mark);
    const cacheSizes = () => ({ ...authenticator.sizes(), ...inboxCache.sizes() });
    return {
      url: baseUrl,
      database: database.description,
      app,
      registry,
      services,
      inboxCache,
      listener,
      localWakes,
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
