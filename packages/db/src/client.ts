/**
 * Prisma Client 7 over @prisma/adapter-pg with a pg.Pool we own, so hot paths can also use the
 * raw pool (STACK-NOTES: Prisma runs at ~0.4-0.5x raw pg on single-row queries).
 */
import { createHash } from 'node:crypto';
import pg from 'pg';
import { PrismaPg } from '@prisma/adapter-pg';
import type { SqlQueryable } from '@prisma/driver-adapter-utils';
import { PrismaClient } from './generated/prisma/client.ts';

export interface Db {
  /** Prisma Client bound to `pool` through @prisma/adapter-pg. */
  prisma: PrismaClient;
  /** The pg pool behind `prisma`. Raw queries return node-postgres types (int8/bigint as string
   *  unless parsed), not Prisma's (bigint); use `$queryRaw`/typed SQL when Prisma types matter. */
  pool: pg.Pool;
  /** Disconnects Prisma, then ends the pool: waits for checked-out clients to be released and
   *  for every connection to be closed. Idempotent. */
  close(): Promise<void>;
}

/**
 * Connects to PostgreSQL. Lazy: no connection is opened until the first query, so a wrong URL
 * or a down server surfaces as an error from that query (Prisma `P1001`-style or a pg error).
 * @param databaseUrl  postgres:// or postgresql:// URL
 * @param opts.poolMax  maximum pool connections, shared by Prisma and raw use (default 20)
 * @param opts.onPoolError  called when an IDLE pooled connection fails (e.g. server restart);
 *        default logs to stderr. Without a listener such an error would crash the process.
 */
export function createDb(databaseUrl: string, opts: { poolMax?: number; onPoolError?: (err: Error) => void } = {}): Db {
  const pool = new pg.Pool({ connectionString: databaseUrl, max: opts.poolMax ?? 20 });
  // eslint-disable-next-line no-console -- the default for callers without a logger (scripts, tests)
  pool.on('error', opts.onPoolError ?? ((err) => console.error('[db] idle client error:', err.message)));
  // With an external pool, adapter-pg never ends it (disposeExternalPool defaults to false).
  // Named statements: PostgreSQL parses and plans each distinct query once per connection instead
  // of on every execution (measured on get_me's query: 373 µs unnamed → 128 µs prepared).
  const prisma = new PrismaClient({
    adapter: serialiseTransactionQueries(
      new PrismaPg(pool, { statementNameGenerator: (q) => statementName(q.sql) ?? '' }) /* '' = the unnamed statement */,
    ),
  });
  // pool.end() resolves once its clients are told to end, not when their connections have
  // closed; whoever stops the server right after (the embedded database at shutdown) would then
  // terminate live connections (57P01 errors). close() waits for each connection's 'end'.
  const open = new Set<pg.PoolClient>();
  pool.on('connect', (c) => {
    open.add(c);
    c.once('end', () => open.delete(c));
    // The pool listens for errors only while a client is idle. A client checked out (by Prisma's
    // transactions, applyBatch, a raw query) whose server goes away between two queries (57P01 after
    // a postmaster crash, a dropped socket) emits 'error' with no active query to fail: without a
    // listener that would crash the process (STACK-NOTES). Its next query fails instead, which the
    // caller maps to SERVICE_UNAVAILABLE, and the pool discards it on release (not queryable).
    c.on('error', () => {});
  });
  let closing: Promise<void> | undefined;
  return {
    prisma,
    pool,
    close() {
      closing ??= (async () => {
        await prisma.$disconnect();
        const ended = [...open].map((c) => new Promise((r) => c.once('end', r)));
        await pool.end();
        await Promise.all(ended);
      })();
      return closing;
    },
  };
}

const statementNames = new Map<string, string>();

/** Most distinct SQL texts that get a prepared-statement name (per process; so at most this many per connection). */
export const MAX_NAMED_STATEMENTS = 500;

/**
 * Texts whose shape varies with the data: an `IN ($1, $2, …)` list or a multi-row `VALUES (…), (…)`
 * (Prisma writes one text per list length or batch size). Naming them would keep one prepared
 * statement per length on every pooled connection, in node-postgres (it remembers each name's text
 * per client for good) and in each PostgreSQL backend: memory that grows with the data, not the code.
 */
const VARIABLE_SHAPE = /\bIN \(\$\d+\s*,|\)\s*,\s*\(\s*\$\d+/i;

/**
 * A stable prepared-statement name for a SQL text (hash of the text), or undefined (an unnamed
 * statement, planned on each execution) for texts of variable shape and for new texts once
 * MAX_NAMED_STATEMENTS are named: the code's fixed query shapes get names at once and keep them, and
 * what a connection remembers stays bounded (measured growth in the 10-minute soak before this rule).
 */
export function statementName(sql: string): string | undefined {
  const name = statementNames.get(sql);
  if (name !== undefined) return name;
  if (VARIABLE_SHAPE.test(sql) || statementNames.size >= MAX_NAMED_STATEMENTS) return undefined;
  const fresh = `k_${createHash('sha256').update(sql).digest('base64url').slice(0, 24)}`;
  statementNames.set(sql, fresh);
  return fresh;
}

/**
 * Makes the queries of one interactive transaction run one after another. A transaction has one
 * connection, and Prisma's query interpreter sends some queries concurrently (e.g. the relations
 * of an `include` with two or more relations are fetched in parallel); node-postgres then queues
 * them on the connection and warns "Calling client.query() when the client is already executing
 * a query is deprecated" (pg 8.x; pg 9 removes the queue). Chaining them here is the "external
 * async flow control" pg asks for: same order, same connection, no warning, no lost parallelism
 * (one connection runs one query at a time anyway). Queries outside transactions use the pool and
 * stay concurrent.
 */
function serialiseTransactionQueries(factory: PrismaPg): PrismaPg {
  const connect = factory.connect.bind(factory);
  factory.connect = async () => {
    const adapter = await connect();
    const start = adapter.startTransaction.bind(adapter);
    adapter.startTransaction = async (isolationLevel) => {
      const tx = await start(isolationLevel);
      let tail: Promise<unknown> = Promise.resolve();
      const chain =
        <A, R>(fn: (a: A) => Promise<R>) =>
        (a: A): Promise<R> => {
          const run = tail.then(() => fn(a));
          tail = run.catch(() => undefined);
          return run;
        };
      const q = tx as SqlQueryable;
      q.queryRaw = chain(q.queryRaw.bind(q));
      q.executeRaw = chain(q.executeRaw.bind(q));
      return tx;
    };
    return adapter;
  };
  return factory;
}
