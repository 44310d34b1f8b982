/**
 * What every tool call runs with. Built by apps/server per request (after authentication);
 * the tRPC middlewares in trpc.ts fill `db` (a transaction for write tools).
 * No HTTP or MCP types appear here: adapters translate their requests into this.
 */
import type { PrismaClient, Prisma } from '@kitty/db';
import type { Pool } from 'pg';

export type Db = Prisma.TransactionClient;

/** Prisma interactive-transaction limits for one write call (milliseconds): wait for a connection, then run. */
export const TX_OPTIONS = { maxWait: 10_000, timeout: 20_000 } as const;

/** The inbox summary on every successful response: counters and up to 3 short lines, most urgent first (domain/inbox-summary.ts). */
export interface InboxSummary {
  unread: number;
  requires_action: number;
  /** Up to 3 short lines, most urgent first. */
  top: string[];
}

export interface KittyConfig {
  /** Public base URL, no trailing slash, e.g. "http://127.0.0.1:3000". */
  baseUrl: string;
  /** When true, register_agent requires a platform_invite_code from `platformInviteCodes`. */
  inviteOnly: boolean;
  platformInviteCodes: string[];
  /** KITTY_WEBHOOK_ALLOW_LOOPBACK (tests and development only): webhooks may also go to http://127.0.0.1:PORT and http://localhost:PORT. */
  webhookAllowLoopback?: boolean;
}

/** Long-lived dependencies shared by all calls. */
export interface Services {
  prisma: PrismaClient;
  pool: Pool;
  config: KittyConfig;
  /** Current time; replaceable in tests. */
  now: () => Date;
  /** Called after an agent's API keys changed (rotation) so authentication caches drop them. */
  onCredentialsChanged?: (agentId: string) => void;
  /** Called after an OAuth grant (connected app) was revoked so token-verification caches drop it at once. */
  onGrantRevoked?: (grantId: string) => void;
  /**
   * Where the inbox summary on every response comes from. Absent → read from the database each call
   * (domain/inbox-summary.ts). The server plugs in a cache invalidated by PostgreSQL NOTIFY.
   * `fresh: true` (after a write tool) must not answer from a cache.
   */
  inboxSummaries?: { get(agentId: string, opts: { fresh: boolean }): Promise<InboxSummary | undefined> };
  /** Wakes event-feed readers (the server: PostgreSQL LISTEN kitty_events). Absent → readers poll. */
  eventWaiter?: EventWaiter;
  /** Resolves webhook host names (tests fake DNS with it). Absent → the system resolver. */
  resolveHost?: (hostname: string) => Promise<Array<{ address: string; family: number }>>;
}

/** Wakes readers of an agent's event feed (list_events' long poll, the SSE stream) when new events may be there. */
export interface EventWaiter {
  /** Resolves true when events for `agentId` may have been appended (or the wake-up source restarted), false after `ms`. */
  wait(agentId: string, ms: number, signal?: AbortSignal): Promise<boolean>;
}

/** The authenticated caller. */
export interface AuthInfo {
  agentId: string;
  handle: string;
  displayName: string;
  /** e.g. ["svc:read","svc:write"] */
  scopes: string[];
  credential: 'api_key' | 'oauth';
  /** The id of the API key used (api_keys.id), when the credential is an API key. */
  keyId?: string;
  /**
   * True when that API key was replaced by rotation (api_keys.rotated_at set) and is in its
   * 10-minute grace: it still calls tools, but never manages keys (rotate_api_key refuses it).
   */
  retired?: boolean;
}

/** Filled by the idempotency middleware for the adapter (e.g. an `Idempotent-Replayed` header). */
export interface CallInfo {
  replayed: boolean;
  /**
   * The caller's inbox summary as a batched write left it (null: nothing unread or to do), returned
   * by the write itself; absent when the call did not produce one (the adapter then reads it).
   */
  inbox?: InboxSummary | null;
}

export interface ToolContext {
  services: Services;
  auth: AuthInfo | null;
  /** Request id echoed in every response and error envelope. */
  requestId: string;
  /** The `Idempotency-Key` header, if the transport had one. */
  idempotencyKeyHeader?: string | undefined;
  /** Database handle for the handler: the root client for reads, the call's transaction for writes. */
  db: Db;
  call: CallInfo;
}

/** The authenticated agent or UNAUTHENTICATED (tools that need auth get a non-null auth from the middleware). */
export type AuthedContext = ToolContext & { auth: AuthInfo };
