/**
 * What every tool call runs with. Built by apps/server per request (after authentication);
 * the tRPC middlewares in trpc.ts fill `db` (a transaction for write tools).
 * No HTTP or MCP types appear here: adapters translate their requests into this.
 */
import type { PrismaClient, Prisma } from '@kitty/db';
import type { Pool } from 'pg';

export type Db = Prisma.TransactionClient;
/**
 * What a reader that only runs tagged-template SQL needs: a Prisma client or transaction, or a pg connection's
 * equivalent that reads int8 as bigint (the webhook dispatcher's transaction).
 */
export type SqlReader = { $queryRaw<T = unknown>(query: TemplateStringsArray, ...values: unknown[]): PromiseLike<T> };

/** Prisma interactive-transaction limits for one write call (milliseconds): wait for a connection, then run. */
export const TX_OPTIONS = { maxWait: 10_000, timeout: 20_000 } as const;

/** The inbox summary on every successful response: counters and up to 3 short lines, most urgent first (kernel/inbox-summary.ts). */
export interface InboxSummary {
  unread: number;
  requires_action: number;
  /** Up to 3 short lines, most urgent first. */
  top: string[];
  /** The items behind `top`, same order, each with the one call that acts on it (kernel/inbox-calls.ts). */
  top_items: InboxTopItem[];
}

export interface InboxTopItem {
  item_id: string;
  kind: string;
  requires_action: boolean;
  entity: { type: string; id: string } | null;
  call: { tool: string; arguments: Record<string, unknown> };
}

export interface KittyConfig {
  /** Public base URL, no trailing slash, e.g. "http://127.0.0.1:3000". */
  baseUrl: string;
  /** When true, register_agent requires a platform_invite_code from `platformInviteCodes`. */
  inviteOnly: boolean;
  platformInviteCodes: string[];
  /** Receipts (attach_receipt, GET /v1/receipts/{id}); absent → defaults in areas/expenses/receipts.ts. */
  receipts?: ReceiptConfig;
  /** KITTY_WEBHOOK_ALLOW_LOOPBACK (tests and development only): webhooks may also go to http://127.0.0.1:PORT and http://localhost:PORT. */
  webhookAllowLoopback?: boolean;
}

export interface ReceiptConfig {
  /** KITTY_RECEIPT_MAX_BYTES: largest receipt accepted, bytes (default 5 MiB). */
  maxBytes: number;
  /** Secret signing the short-lived download links (HMAC-SHA-256); every instance must share it. */
  linkSecret: string;
  /** KITTY_RECEIPT_LINK_TTL: how long a download link works, seconds (default 300). */
  linkTtlSeconds: number;
}

/**
 * Where receipt bytes live (the metadata row is always in PostgreSQL): PostgreSQL by default
 * (areas/expenses/receipt-store.ts), an S3-compatible bucket in apps/server. A store never decides who may read.
 */
export interface ReceiptStore {
  /** Recorded on each receipt row, so a receipt is read from the store that kept it. */
  readonly kind: 'postgres' | 's3';
  /** Keeps `bytes` under `receiptId`; `db` is the transaction that inserted the metadata row. */
  put(db: Db, receiptId: string, bytes: Uint8Array, contentType: string): Promise<void>;
  /** The bytes, or null when the store has none. */
  get(db: Db, receiptId: string): Promise<Uint8Array | null>;
  /** Forgets the bytes (a missing object is not an error); called after the row was deleted in `db`. */
  delete(db: Db, receiptId: string): Promise<void>;
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
  /** Where receipt bytes are kept; absent → PostgreSQL (areas/expenses/receipt-store.ts). */
  receiptStore?: ReceiptStore;
  /**
   * Where the inbox summary on every response comes from. Absent → read from the database each call
   * (kernel/inbox-summary.ts). The server plugs in a cache invalidated by PostgreSQL NOTIFY.
   * `fresh: true` (after a write tool) must not answer from a cache.
   */
  inboxSummaries?: InboxSummarySource;
  /** Wakes event-feed readers (the server: PostgreSQL LISTEN kitty_events). Absent → readers poll. */
  eventWaiter?: EventWaiter;
  /**
   * Where batched writes may take the read of their group from, by group id (the server: an LRU per process).
   * Absent → every write reads its group. A write decided on a cached read is checked by its guard against the
   * group's version (access/group-reads.ts) and decided again on a fresh read when the group changed.
   */
  groupReads?: KeyedCache<object>;
  /**
   * Where confirm/reject/cancel_payment may take a pending payment from, by payment id (the server: an LRU per process,
   * filled by record_payment). Absent → every transition reads its payment. A stale entry (the payment left pending
   * elsewhere) fails the write's guard and the call is decided again on a fresh read (areas/payments/payment-reads.ts).
   */
  paymentReads?: KeyedCache<object>;
  /** Resolves webhook host names (tests fake DNS with it). Absent → the system resolver. */
  resolveHost?: (hostname: string) => Promise<Array<{ address: string; family: number }>>;
}

/** The inbox summaries of callers (the server: a per-process cache dropped by notifications, runtime/inbox-cache.ts). */
export interface InboxSummarySource {
  /** The agent's summary; `fresh: true` reads the database (and may store what it read). */
  get(agentId: string, opts: { fresh: boolean }): Promise<InboxSummary | undefined>;
  /**
   * The agent's summary as cached now, if the cache can vouch for it (null: nothing unread or to do); undefined when
   * it cannot. A batched write that cannot change the caller's inbox answers with it (`use` 'answer', the default); a
   * write whose only change to it is resolving the caller's own items may have its statement bring it up to date
   * (`use` 'base'). Kernel/caller-summary.ts.
   */
  peek?(agentId: string, use?: 'answer' | 'base'): InboxSummary | null | undefined;
  /** Taken before a summary is read: `remember` then stores what was read only if nothing dropped the agent's since. */
  mark?(agentId: string): unknown;
  /**
   * Stores `value`, read after `mark` was taken, unless a notification about the agent arrived in between, other than
   * the `ownWakes` notifications this write delivered to this process itself after its commit (they announce the
   * change `value` already shows). `kept`: `value` is a cached summary the write's statement brought up to date.
   */
  remember?(agentId: string, value: InboxSummary | null, mark: unknown, after?: { ownWakes: number; kept: boolean }): void;
}

/** A bounded in-process cache by string key (least recently used entries are dropped first). */
export interface KeyedCache<V> {
  get(key: string): V | undefined;
  set(key: string, value: V): void;
  delete(key: string): void;
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
  /** The answer is a static tool's stored answer, unchanged (no inbox block): the same object on every such call, so an adapter may serialise it once. */
  static?: boolean;
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
