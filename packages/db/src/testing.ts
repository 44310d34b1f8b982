/** Throwaway databases for tests. */
import { randomBytes } from 'node:crypto';
import { applyMigrations } from './migrate/apply.ts';
import { adminQuery, dropDatabase, withDatabase } from './migrate/databases.ts';

/**
 * Creates `kitty_test_<12 hex>` on the server of `adminUrl` and applies all migrations to it
 * (with `opts.migrate: false` it stays empty, e.g. as the target of a restore).
 * @param adminUrl  URL of any existing database on the target server, used for CREATE/DROP
 *        DATABASE (default: TEST_DATABASE_URL, else postgresql://postgres@127.0.0.1:5432/postgres)
 * @returns databaseUrl of the new database (same credentials/host as adminUrl), and `drop()`,
 *          which terminates remaining connections and drops it (idempotent)
 * @throws if the server is unreachable, the role cannot CREATE DATABASE, or a migration fails
 *         (the database is dropped again before the error is rethrown)
 */
export async function createTestDatabase(
  adminUrl: string = process.env.TEST_DATABASE_URL ?? 'postgresql://postgres@127.0.0.1:5432/postgres',
  opts: { migrate?: boolean } = {},
): Promise<{ databaseUrl: string; drop(): Promise<void> }> {
  const name = `kitty_test_${randomBytes(6).toString('hex')}`;
  await adminQuery(adminUrl, `CREATE DATABASE "${name}"`);
  const drop = () => dropDatabase(adminUrl, name);
  const databaseUrl = withDatabase(adminUrl, name);
  try {
    if (opts.migrate !== false) await applyMigrations(databaseUrl);
  } catch (e) {
    await drop().catch(() => undefined);
    throw e;
  }
  return { databaseUrl, drop };
}
