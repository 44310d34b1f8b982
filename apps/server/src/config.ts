/**
 * Server configuration, all from the environment (documented in README "Configuration").
 */
import path from 'node:path';

export interface ServerConfig {
  /** PORT, default 3000 (0 = any free port). */
  port: number;
  /** HOST, default 127.0.0.1. */
  host: string;
  /** DATABASE_URL; when absent an embedded PostgreSQL runs in `dataDir`. */
  databaseUrl: string | undefined;
  /** KITTY_DATA_DIR, default ./data (embedded database files). */
  dataDir: string;
  /** KITTY_EMBEDDED_PG_PORT: port of the embedded PostgreSQL; default: the data folder's last port if free, else any free port. */
  embeddedPgPort: number | undefined;
  /** KITTY_BASE_URL, the public address; default http://HOST:PORT. */
  baseUrl: string | undefined;
  /** REDIS_URL; when set, rate-limit counters live in Redis (shared by instances). */
  redisUrl: string | undefined;
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
  /** KITTY_LOG: "info" (logs every request) | "warn" | "silent" … (default warn). */
  logLevel: string;
  /** KITTY_LOG_FILE: append log lines (JSON, secrets redacted) to this file instead of stdout. */
  logFile: string | undefined;
  /** KITTY_SCHEDULER=off disables the recurring-expense scheduler in this instance. */
  scheduler: boolean;
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
  /** KITTY_OAUTH=off disables the OAuth authorization server and the sign-in pages (API keys only). */
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
}

function int(v: string | undefined, dflt: number, name: string): number {
  if (v === undefined || v === '') return dflt;
  const n = Number(v);
  if (!Number.isInteger(n) || n < 0) throw new Error(`${name} must be a non-negative integer, got "${v}"`);
  return n;
}

export function loadConfig(env: NodeJS.ProcessEnv = process.env): ServerConfig {
  return {
    port: int(env.PORT, 3000, 'PORT'),
    host: env.HOST || '127.0.0.1',
    databaseUrl: env.DATABASE_URL || undefined,
    // Relative to where the command was typed (pnpm sets INIT_CWD), so `pnpm start` at the root uses ./data there.
    dataDir: path.resolve(env.INIT_CWD ?? process.cwd(), env.KITTY_DATA_DIR || './data'),
    embeddedPgPort: env.KITTY_EMBEDDED_PG_PORT ? int(env.KITTY_EMBEDDED_PG_PORT, 0, 'KITTY_EMBEDDED_PG_PORT') || undefined : undefined,
    baseUrl: env.KITTY_BASE_URL?.replace(/\/+$/, '') || undefined,
    redisUrl: env.REDIS_URL || undefined,
    inviteOnly: /^(1|true|yes)$/i.test(env.KITTY_INVITE_ONLY ?? ''),
    platformInviteCodes: (env.KITTY_PLATFORM_INVITE_CODES ?? '').split(',').map((s) => s.trim()).filter(Boolean),
    rateLimitPoints: int(env.KITTY_RATE_LIMIT, 600, 'KITTY_RATE_LIMIT'),
    rateLimitAnonPoints: int(env.KITTY_RATE_LIMIT_ANON, 120, 'KITTY_RATE_LIMIT_ANON'),
    rateLimitWindowSeconds: int(env.KITTY_RATE_LIMIT_WINDOW, 60, 'KITTY_RATE_LIMIT_WINDOW'),
    bodyLimit: int(env.KITTY_BODY_LIMIT, 1024 * 1024, 'KITTY_BODY_LIMIT'),
    allowedHosts: (env.KITTY_ALLOWED_HOSTS ?? '').split(',').map((s) => s.trim()).filter(Boolean),
    logLevel: env.KITTY_LOG || 'warn',
    logFile: env.KITTY_LOG_FILE || undefined,
    scheduler: !/^(0|off|false|no)$/i.test(env.KITTY_SCHEDULER ?? ''),
    authFailLimit: int(env.KITTY_AUTH_FAIL_LIMIT, 20, 'KITTY_AUTH_FAIL_LIMIT'),
    authFailWindowSeconds: int(env.KITTY_AUTH_FAIL_WINDOW, 300, 'KITTY_AUTH_FAIL_WINDOW'),
    registerPerHour: int(env.KITTY_REGISTER_LIMIT_HOUR, 30, 'KITTY_REGISTER_LIMIT_HOUR'),
    registerPerDay: int(env.KITTY_REGISTER_LIMIT_DAY, 100, 'KITTY_REGISTER_LIMIT_DAY'),
    requestTimeoutMs: int(env.KITTY_REQUEST_TIMEOUT_MS, 30_000, 'KITTY_REQUEST_TIMEOUT_MS'),
    headersTimeoutMs: int(env.KITTY_HEADERS_TIMEOUT_MS, 10_000, 'KITTY_HEADERS_TIMEOUT_MS'),
    connectionTimeoutMs: int(env.KITTY_CONNECTION_TIMEOUT_MS, 60_000, 'KITTY_CONNECTION_TIMEOUT_MS'),
    keepAliveTimeoutMs: int(env.KITTY_KEEP_ALIVE_TIMEOUT_MS, 5_000, 'KITTY_KEEP_ALIVE_TIMEOUT_MS'),
    oauthEnabled: !/^(0|off|false|no)$/i.test(env.KITTY_OAUTH ?? ''),
    oauthClients: env.KITTY_OAUTH_CLIENTS || undefined,
    oauthJwks: env.KITTY_OAUTH_JWKS || undefined,
    oauthCookieKeys: env.KITTY_OAUTH_COOKIE_KEYS || undefined,
    oauthAllowLoopbackCimd: /^(1|true|yes)$/i.test(env.KITTY_OAUTH_ALLOW_LOOPBACK_CIMD ?? ''),
    authRateLimitPoints: int(env.KITTY_AUTH_RATE_LIMIT, 60, 'KITTY_AUTH_RATE_LIMIT'),
    oidc: oidcConfig(env),
  };
}

function oidcConfig(env: NodeJS.ProcessEnv): ServerConfig['oidc'] {
  if (!env.KITTY_OIDC_ISSUER) return null;
  if (!env.KITTY_OIDC_CLIENT_ID) throw new Error('KITTY_OIDC_CLIENT_ID is required when KITTY_OIDC_ISSUER is set');
  return {
    issuer: env.KITTY_OIDC_ISSUER,
    clientId: env.KITTY_OIDC_CLIENT_ID,
    clientSecret: env.KITTY_OIDC_CLIENT_SECRET || undefined,
    name: env.KITTY_OIDC_NAME || new URL(env.KITTY_OIDC_ISSUER).hostname,
  };
}
