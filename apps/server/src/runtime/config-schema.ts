/**
 * The environment variables Kitty reads, each with its rule and default, as one zod schema
 * (documented in docs/configuration.md); config.ts turns the parsed values into `ServerConfig`.
 */
import { isIP } from 'node:net';
import { z } from 'zod';

/** An empty or blank variable counts as unset. */
const unset = (v: unknown) => (typeof v === 'string' && v.trim() === '' ? undefined : v);

/** A non-negative integer (decimal digits only). */
const count = (dflt: number) =>
  z.preprocess(unset, z.string().trim().regex(/^\d+$/, 'expected a non-negative integer').transform(Number).default(dflt));

const port = (dflt: number) => count(dflt).refine((n) => n <= 65_535, 'expected a port number (0-65535)');

const TRUE = ['1', 'true', 'yes', 'on'];
const FALSE = ['0', 'false', 'no', 'off'];
/** true/false, also 1/0, yes/no, on/off (any case). */
const flag = (dflt: boolean) =>
  z.preprocess(
    unset,
    z
      .string()
      .trim()
      .toLowerCase()
      .refine((v) => TRUE.includes(v) || FALSE.includes(v), 'expected true or false (also 1/0, yes/no, on/off)')
      .transform((v) => TRUE.includes(v))
      .default(dflt),
  );

const url = (protocols: string[]) =>
  z.preprocess(
    unset,
    z
      .string()
      .trim()
      .refine(
        (v) => URL.canParse(v) && protocols.includes(new URL(v).protocol),
        `expected a URL starting with ${protocols.map((p) => `${p}//`).join(' or ')}`,
      )
      .optional(),
  );

/** Comma-separated values, blanks dropped. */
const list = z.preprocess(unset, z.string().optional()).transform((v) =>
  (v ?? '')
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean),
);
const text = z.preprocess(unset, z.string().trim().optional());

const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;

/** The environment variables Kitty reads, each with its rule and default (docs/configuration.md). */
export const envSchema = z
  .object({
    PORT: port(3000),
    HOST: text,
    DATABASE_URL: url(['postgres:', 'postgresql:']),
    KITTY_DATA_DIR: text,
    KITTY_EMBEDDED_PG_PORT: port(0),
    KITTY_PG_BIN_DIR: text,
    KITTY_BASE_URL: url(['http:', 'https:']),
    REDIS_URL: url(['redis:', 'rediss:']),
    KITTY_REDIS_PREFIX: z.preprocess(
      unset,
      z
        .string()
        .trim()
        .regex(/^[A-Za-z0-9_.:-]{1,64}$/, 'expected 1-64 letters, digits or _ . : -')
        .default('kitty'),
    ),
    KITTY_INVITE_ONLY: flag(false),
    KITTY_PLATFORM_INVITE_CODES: list,
    KITTY_RATE_LIMIT: count(600),
    KITTY_RATE_LIMIT_ANON: count(120),
    KITTY_RATE_LIMIT_WINDOW: count(60),
    KITTY_BODY_LIMIT: count(1024 * 1024),
    KITTY_ALLOWED_HOSTS: list,
    KITTY_ALLOWED_ORIGINS: list.refine(
      (xs) => xs.every((x) => /^https?:\/\/[^/?#\s]+$/i.test(x)),
      'expected comma-separated origins like https://app.example.com (scheme, host and optional port; no path)',
    ),
    KITTY_TRUST_PROXY: list.refine(
      (xs) => xs.every((x) => ['loopback', 'linklocal', 'uniquelocal'].includes(x) || isIP(x.replace(/\/\d{1,3}$/, '')) !== 0),
      'expected comma-separated IP addresses or CIDRs (or loopback, linklocal, uniquelocal)',
    ),
    KITTY_LOG: z.preprocess(unset, z.enum(LOG_LEVELS, { error: `expected one of ${LOG_LEVELS.join(', ')}` }).default('warn')),
    KITTY_LOG_FILE: text,
    KITTY_SCHEDULER: flag(true),
    KITTY_SCHEDULER_INTERVAL: count(60).refine((n) => n >= 1, 'expected at least 1 (seconds)'),
    KITTY_EVENT_RETENTION_DAYS: count(30).refine((n) => n >= 30, 'expected at least 30 (days)'),
    KITTY_EVENT_STREAMS_PER_CREDENTIAL: count(5).refine((n) => n >= 1, 'expected at least 1'),
    KITTY_WEBHOOKS: flag(true),
    KITTY_WEBHOOK_ALLOW_LOOPBACK: flag(false),
    KITTY_WEBHOOK_RETRY_DELAY: count(30).refine((n) => n >= 1, 'expected at least 1 (seconds)'),
    KITTY_WEBHOOK_RETRY_DELAY_MAX: count(3600).refine((n) => n >= 1, 'expected at least 1 (seconds)'),
    KITTY_WEBHOOK_RETRY_WINDOW: count(86_400).refine((n) => n >= 1, 'expected at least 1 (seconds)'),
    KITTY_WEBHOOK_TIMEOUT_MS: count(10_000).refine((n) => n >= 100, 'expected at least 100 (ms)'),
    KITTY_WEBHOOK_IN_FLIGHT: count(4).refine((n) => n >= 1 && n <= 32, 'expected 1-32'),
    KITTY_AUTH_FAIL_LIMIT: count(20),
    KITTY_AUTH_FAIL_WINDOW: count(300),
    KITTY_REGISTER_LIMIT_HOUR: count(30),
    KITTY_REGISTER_LIMIT_DAY: count(100),
    KITTY_REQUEST_TIMEOUT_MS: count(30_000),
    KITTY_HEADERS_TIMEOUT_MS: count(10_000),
    KITTY_CONNECTION_TIMEOUT_MS: count(60_000),
    KITTY_KEEP_ALIVE_TIMEOUT_MS: count(5_000),
    KITTY_OAUTH: flag(true),
    KITTY_OAUTH_CLIENTS: text,
    KITTY_OAUTH_JWKS: text,
    KITTY_OAUTH_COOKIE_KEYS: text,
    KITTY_OAUTH_ALLOW_LOOPBACK_CIMD: flag(false),
    KITTY_AUTH_RATE_LIMIT: count(60),
    KITTY_OIDC_ISSUER: url(['https:', 'http:']),
    KITTY_OIDC_CLIENT_ID: text,
    KITTY_OIDC_CLIENT_SECRET: text,
    KITTY_OIDC_NAME: text,
    KITTY_RECEIPT_MAX_BYTES: count(5 * 1024 * 1024).refine((n) => n >= 1 && n <= 25 * 1024 * 1024, 'expected 1 to 26214400 (25 MiB)'),
    KITTY_RECEIPT_LINK_TTL: count(300).refine((n) => n >= 1 && n <= 86_400, 'expected 1 to 86400 (seconds)'),
    KITTY_RECEIPT_LINK_SECRET: text.refine((v) => v === undefined || v.length >= 32, 'expected at least 32 characters'),
    KITTY_RECEIPT_S3_BUCKET: text,
    KITTY_RECEIPT_S3_ENDPOINT: url(['https:', 'http:']),
    KITTY_RECEIPT_S3_REGION: text,
    KITTY_RECEIPT_S3_PREFIX: text,
  })
  .superRefine((e, ctx) => {
    if (e.KITTY_OIDC_ISSUER && !e.KITTY_OIDC_CLIENT_ID) {
      ctx.addIssue({ code: 'custom', path: ['KITTY_OIDC_CLIENT_ID'], message: 'required when KITTY_OIDC_ISSUER is set' });
    }
  });
