/**
 * Prisma Client 7 over @prisma/adapter-pg with a pg.Pool we own, so hot paths can also use the
 * raw pool (STACK-NOTES: Prisma runs at ~0.4-0.5x raw pg on single-row queries).
 */
import pg from 'pg';
import { PrismaPg } from '@prisma/adapter-pg';
import { PrismaClient } from './generated/prisma/client.ts';

export interface Db {
  /** Prisma Client bound to `pool` through @prisma/adapter-pg. */
  prisma: PrismaClient;
  /** The pg pool behind `prisma`. Raw queries return node-postgres types (int8/bigint as string
   *  unless parsed), not Prisma's (bigint); use `$queryRaw`/typed SQL when Prisma types matter. */
  pool: pg.Pool;
  /** Disconnects Prisma, then ends the pool (waits for checked-out clients to be released).
   *  Idempotent. */
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
export function createDb(
  databaseUrl: string,
  opts: { poolMax?: number; onPoolError?: (err: Error) => void } = {},
): Db {
  const pool = new pg.Pool({ connectionString: databaseUrl, max: opts.poolMax ?? 20 });
  pool.on('error', opts.onPoolError ?? ((err) => console.error('[db] idle client error:', err.message)));
  // With an external pool, adapter-pg never ends it (disposeExternalPool defaults to false).
  const prisma = new PrismaClient({ adapter: new PrismaPg(pool) });
  let closing: Promise<void> | undefined;
  return {
    prisma,
    pool,
    close() {
      closing ??= (async () => {
        await prisma.$disconnect();
        await pool.end();
      })();
      return closing;
    },
  };
}
