/**
 * Server configuration, all from the environment (documented in docs/configuration.md), parsed
 * by one zod schema: every variable's rule and default is written once, in `envSchema` (config-schema.ts).
 */
import path from 'node:path';
import { envSchema } from './config-schema.ts';

export interface ServerConfig {
  /** PORT, default 3000 (0 = any free port). */
  port: number;
  /** HOST, default 127.0.0.1. */
  host: string;
  /** DATABASE_URL; when absent an embedded PostgreSQL runs in `dataDir`. */
  databaseUrl: string | undefined;
  /** KITTY_DATA_DIR, default ./data (embedded database files). */
  dataDir: string;
  /** KITTY_PG_BIN_DIR: folder with pg_dump/pg_restore of the DATABASE_URL server's major version, for `kitty backup`/`restore` (default: Debian's /usr/lib/postgresql/<major>/bin, then the PATH). */
  pgBinDir: string | undefined;
  /** KITTY_EMBEDDED_PG_PORT: port of the embedded PostgreSQL; default: the data folder's last port if free, else any free port. */
  embeddedPgPort: number | undefined;
  /** KITTY_BASE_URL, the public address; default http://localhost:PORT on a loopback HOST (passkeys refuse IP addresses), else http://HOST:PORT. */
  baseUrl: string | undefined;
  /** REDIS_URL; when set, rate-limit counters live in Redis (shared by instances). */
  redisUrl: string | undefined;
  /** KITTY_REDIS_PREFIX: first part of every Redis key Kitty writes (default "kitty"); instances that share limits use the same one. */
  redisPrefix: string;
  /** KITTY_INVITE_ONLY=true makes register_agent require a platform_invite_code. */
  inviteOnly: boolean;
  /** KITTY_PLATFORM_INVITE_CODES: comma-separated accepted platform invite codes. */
  platformInviteCodes: string[];
  /** KITTY_RATE_LIMIT: requests per window per credential (default 600). */
  rateLimitPoints: number;
  /** KITTY_RATE_LIMIT_ANON: requests per window per IP for anonymous calls (default 120). */
  rateLimitAnonPoints: number;
  /** KITTY_RATE_LIMIT_WINDOW: window in seconds (default 60). */
  rateLimitWindowSeconds: number;
  /** KITTY_BODY_LIMIT: maximum request body in bytes (default 1 MiB). */
  bodyLimit: number;
  /** KITTY_ALLOWED_HOSTS: extra Host names accepted by /mcp (DNS-rebinding protection); comma-separated. */
  allowedHosts: string[];
  /** KITTY_ALLOWED_ORIGINS: web origins (scheme://host[:port]) of browser-based MCP clients allowed by CORS on /mcp and the OAuth metadata, besides loopback; comma-separated. */
  allowedOrigins: string[];
  /** KITTY_TRUST_PROXY: comma-separated addresses/CIDRs of load balancers whose X-Forwarded-For names the client (per-IP limits, logs); default none. */
  trustProxy: string[];
  /** KITTY_LOG: "info" (logs every request) | "warn" | "silent" … (default warn). */
  logLevel: string;
  /** KITTY_LOG_FILE: append log lines (JSON, secrets redacted) to this file instead of stdout. */
  logFile: string | undefined;
  /** KITTY_SCHEDULER=off disables the recurring-expense scheduler in this instance. */
  scheduler: boolean;
  /** KITTY_SCHEDULER_INTERVAL: seconds between scheduler runs (default 60, at least 1). */
  schedulerIntervalSeconds: number;
  /** KITTY_EVENT_RETENTION_DAYS: days events are kept before the scheduler prunes them (default 30, at least 30). */
  eventRetentionDays: number;
  /** KITTY_EVENT_STREAMS_PER_CREDENTIAL: open GET /v1/events streams per credential and instance (default 5). */
  eventStreamsPerCredential: number;
  /** Webhook deliveries (docs/events.md): KITTY_WEBHOOKS=off stops this instance's worker (others still deliver). */
  webhooks: {
    enabled: boolean;
    /** KITTY_WEBHOOK_ALLOW_LOOPBACK (tests and development only): also http://127.0.0.1:PORT and http://localhost:PORT. */
    allowLoopback: boolean;
    /** KITTY_WEBHOOK_RETRY_DELAY / _RETRY_DELAY_MAX / _RETRY_WINDOW, seconds (defaults 30, 3600, 86400). */
    retryDelaySeconds: number;
    retryDelayMaxSeconds: number;
    retryWindowSeconds: number;
    /** KITTY_WEBHOOK_TIMEOUT_MS (default 10000) and KITTY_WEBHOOK_IN_FLIGHT per endpoint (default 4). */
    timeoutMs: number;
    maxInFlight: number;
  };
  /** KITTY_AUTH_FAIL_LIMIT: failed authentications per IP per window before 429 (default 20; 0 = off). */
  authFailLimit: number;
  /** KITTY_AUTH_FAIL_WINDOW: that window in seconds (default 300). */
  authFailWindowSeconds: number;
  /** KITTY_REGISTER_LIMIT_HOUR: agent registrations per IP per hour (default 30; 0 = off). */
  registerPerHour: number;
  /** KITTY_REGISTER_LIMIT_DAY: agent registrations per IP per day (default 100; 0 = off). */
  registerPerDay: number;
  /** KITTY_REQUEST_TIMEOUT_MS: time to receive a whole request, headers and body (default 30000). */
  requestTimeoutMs: number;
  /** KITTY_HEADERS_TIMEOUT_MS: time to receive the request headers (default 10000; at most the request timeout). */
  headersTimeoutMs: number;
  /** KITTY_CONNECTION_TIMEOUT_MS: a socket with no traffic for this long is closed (default 60000). */
  connectionTimeoutMs: number;
  /** KITTY_KEEP_ALIVE_TIMEOUT_MS: an idle keep-alive connection is closed after this long (default 5000). */
  keepAliveTimeoutMs: number;
  /** KITTY_OAUTH=off disables the OAuth authorization server (apps use API keys); person sign-in and the account page stay. */
  oauthEnabled: boolean;
  /** KITTY_OAUTH_CLIENTS: JSON array of pre-registered OAuth clients (RFC 7591 client metadata, with client_id). */
  oauthClients: string | undefined;
  /** KITTY_OAUTH_JWKS: JSON private JWK Set signing access tokens (default: generated once, kept in the database). */
  oauthJwks: string | undefined;
  /** KITTY_OAUTH_COOKIE_KEYS: comma-separated secrets signing the sign-in cookies (default: generated once, kept in the database). */
  oauthCookieKeys: string | undefined;
  /** KITTY_OAUTH_ALLOW_LOOPBACK_CIMD=true: tests/development only — fetch https://localhost client metadata documents over http. Off by default. */
  oauthAllowLoopbackCimd: boolean;
  /** KITTY_AUTH_RATE_LIMIT: requests per window per IP to sign-in, registration, consent and token endpoints (default 60). */
  authRateLimitPoints: number;
  /** KITTY_OIDC_ISSUER / _CLIENT_ID / _CLIENT_SECRET / _NAME: an OpenID Connect provider people can sign in with. */
  oidc: { issuer: string; clientId: string; clientSecret: string | undefined; name: string } | null;
  /** KITTY_RECEIPT_MAX_BYTES: largest receipt file, bytes (default 5 MiB, at most 25 MiB). */
  receiptMaxBytes: number;
  /** KITTY_RECEIPT_LINK_TTL: seconds a receipt download link works (default 300). */
  receiptLinkTtlSeconds: number;
  /** KITTY_RECEIPT_LINK_SECRET: secret signing those links (default: generated once, kept in the database). */
  receiptLinkSecret: string | undefined;
  /** KITTY_RECEIPT_S3_BUCKET (+ _ENDPOINT, _REGION, _PREFIX): keep receipt files in an S3-compatible bucket instead of PostgreSQL (docs/receipts.md). */
  receiptS3: { bucket: string; endpoint: string | undefined; region: string; prefix: string } | null;
}

/** True for the loopback addresses a person reaches as `localhost` (127.0.0.0/8, ::1, localhost itself). */
export function isLoopbackHost(host: string): boolean {
  const h = host.toLowerCase().replace(/^\[|\]$/g, '');
  return h === 'localhost' || h === '::1' || /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(h);
}

/**
 * The base URL when KITTY_BASE_URL is not set: `http://localhost:PORT` when Kitty listens on a
 * loopback address (browsers refuse passkeys on IP addresses: the WebAuthn RP ID must be a domain,
 * and localhost is a secure context), else `http://HOST:PORT` (IPv6 in brackets).
 */
export function defaultBaseUrl(host: string, port: number): string {
  if (isLoopbackHost(host)) return `http://localhost:${port}`;
  return `http://${host.includes(':') ? `[${host}]` : host}:${port}`;
}

/** Variables whose values are never echoed in errors (URLs may carry passwords; the rest are secrets). */
const SECRET = /_URL$|_SECRET$|_JWKS$|_COOKIE_KEYS$|_CLIENTS$/;

/** Bad configuration: `message` lists every offending variable with the rule it broke. */
export class ConfigError extends Error {
  override name = 'ConfigError';
}

/**
 * Reads the configuration from `env` (default process.env) with one zod schema.
 * @throws ConfigError naming every bad variable, e.g. `KITTY_RATE_LIMIT="ten": expected a non-negative integer`
 *         (URLs and secrets are not echoed)
 */
export function loadConfig(env: NodeJS.ProcessEnv = process.env): ServerConfig {
  const parsed = envSchema.safeParse(env);
  if (!parsed.success) {
    const lines = parsed.error.issues.map((i) => {
      const name = String(i.path[0]);
      const shown = SECRET.test(name) || env[name] === undefined ? '' : `=${JSON.stringify(env[name])}`;
      return `  ${name}${shown}: ${i.message}`;
    });
    throw new ConfigError(`Invalid configuration in the environment:\n${lines.join('\n')}`);
  }
  const e = parsed.data;
  return {
    port: e.PORT,
    host: e.HOST ?? '127.0.0.1',
    databaseUrl: e.DATABASE_URL,
    // Relative to where the command was typed (pnpm sets INIT_CWD), so `pnpm start` at the root uses ./data there.
    dataDir: path.resolve(env.INIT_CWD ?? process.cwd(), e.KITTY_DATA_DIR ?? './data'),
    embeddedPgPort: e.KITTY_EMBEDDED_PG_PORT || undefined,
    pgBinDir: e.KITTY_PG_BIN_DIR,
    baseUrl: e.KITTY_BASE_URL?.replace(/\/+$/, ''),
    redisUrl: e.REDIS_URL,
    redisPrefix: e.KITTY_REDIS_PREFIX,
    inviteOnly: e.KITTY_INVITE_ONLY,
    platformInviteCodes: e.KITTY_PLATFORM_INVITE_CODES,
    rateLimitPoints: e.KITTY_RATE_LIMIT,
    rateLimitAnonPoints: e.KITTY_RATE_LIMIT_ANON,
    rateLimitWindowSeconds: e.KITTY_RATE_LIMIT_WINDOW,
    bodyLimit: e.KITTY_BODY_LIMIT,
    allowedHosts: e.KITTY_ALLOWED_HOSTS,
    allowedOrigins: e.KITTY_ALLOWED_ORIGINS,
    trustProxy: e.KITTY_TRUST_PROXY,
    logLevel: e.KITTY_LOG,
    logFile: e.KITTY_LOG_FILE,
    scheduler: e.KITTY_SCHEDULER,
    schedulerIntervalSeconds: e.KITTY_SCHEDULER_INTERVAL,
    eventRetentionDays: e.KITTY_EVENT_RETENTION_DAYS,
    eventStreamsPerCredential: e.KITTY_EVENT_STREAMS_PER_CREDENTIAL,
    webhooks: {
      enabled: e.KITTY_WEBHOOKS,
      allowLoopback: e.KITTY_WEBHOOK_ALLOW_LOOPBACK,
      retryDelaySeconds: e.KITTY_WEBHOOK_RETRY_DELAY,
      retryDelayMaxSeconds: e.KITTY_WEBHOOK_RETRY_DELAY_MAX,
      retryWindowSeconds: e.KITTY_WEBHOOK_RETRY_WINDOW,
      timeoutMs: e.KITTY_WEBHOOK_TIMEOUT_MS,
      maxInFlight: e.KITTY_WEBHOOK_IN_FLIGHT,
    },
    authFailLimit: e.KITTY_AUTH_FAIL_LIMIT,
    authFailWindowSeconds: e.KITTY_AUTH_FAIL_WINDOW,
    registerPerHour: e.KITTY_REGISTER_LIMIT_HOUR,
    registerPerDay: e.KITTY_REGISTER_LIMIT_DAY,
    requestTimeoutMs: e.KITTY_REQUEST_TIMEOUT_MS,
    headersTimeoutMs: e.KITTY_HEADERS_TIMEOUT_MS,
    connectionTimeoutMs: e.KITTY_CONNECTION_TIMEOUT_MS,
    keepAliveTimeoutMs: e.KITTY_KEEP_ALIVE_TIMEOUT_MS,
    oauthEnabled: e.KITTY_OAUTH,
    oauthClients: e.KITTY_OAUTH_CLIENTS,
    oauthJwks: e.KITTY_OAUTH_JWKS,
    oauthCookieKeys: e.KITTY_OAUTH_COOKIE_KEYS,
    oauthAllowLoopbackCimd: e.KITTY_OAUTH_ALLOW_LOOPBACK_CIMD,
    authRateLimitPoints: e.KITTY_AUTH_RATE_LIMIT,
    oidc:
      e.KITTY_OIDC_ISSUER && e.KITTY_OIDC_CLIENT_ID
        ? {
            issuer: e.KITTY_OIDC_ISSUER,
            clientId: e.KITTY_OIDC_CLIENT_ID,
            clientSecret: e.KITTY_OIDC_CLIENT_SECRET,
            name: e.KITTY_OIDC_NAME ?? new URL(e.KITTY_OIDC_ISSUER).hostname,
          }
        : null,
    receiptMaxBytes: e.KITTY_RECEIPT_MAX_BYTES,
    receiptLinkTtlSeconds: e.KITTY_RECEIPT_LINK_TTL,
    receiptLinkSecret: e.KITTY_RECEIPT_LINK_SECRET,
    receiptS3: e.KITTY_RECEIPT_S3_BUCKET
      ? {
          bucket: e.KITTY_RECEIPT_S3_BUCKET,
          endpoint: e.KITTY_RECEIPT_S3_ENDPOINT,
          region: e.KITTY_RECEIPT_S3_REGION ?? 'us-east-1',
          prefix: e.KITTY_RECEIPT_S3_PREFIX ?? 'receipts/',
        }
      : null,
  };
}
