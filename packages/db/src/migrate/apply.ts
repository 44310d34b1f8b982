/**
 * Run-time migrations: a plain SQL runner over `pg`, no Prisma engine and no driver adapter.
 * Starting the server loads nothing else from this folder (engine.ts and authoring.ts are for
 * the migration scripts and tests only).
 *
 * It keeps Prisma's history table `_prisma_migrations` (same DDL, one row per applied migration,
 * `checksum` = SHA-256 hex of migration.sql, `applied_steps_count` 1), so a database migrated
 * here and one migrated by `prisma migrate deploy` are interchangeable.
 *
 * Concurrency: the whole run holds a session advisory lock with the key Prisma's schema engine
 * uses for its migrate commands (72707369, prisma-engines `sql-schema-connector`, PostgreSQL
 * flavour), so several instances starting at once (or one and a Prisma CLI) apply each
 * migration exactly once: later callers wait, then find nothing pending.
 */
import { randomUUID } from 'node:crypto';
import pg from 'pg';
import { MIGRATIONS_DIR, readMigrations, type MigrationPaths } from './files.ts';

const MIGRATE_LOCK_KEY = 72707369;

/** Prisma's history table, as its schema engine creates it on PostgreSQL. */
const HISTORY_DDL = `CREATE TABLE IF NOT EXISTS "_prisma_migrations" (
    "id"                    VARCHAR(36) PRIMARY KEY NOT NULL,
    "checksum"              VARCHAR(64) NOT NULL,
    "finished_at"           TIMESTAMPTZ,
    "migration_name"        VARCHAR(255) NOT NULL,
    "logs"                  TEXT,
    "rolled_back_at"        TIMESTAMPTZ,
    "started_at"            TIMESTAMPTZ NOT NULL DEFAULT now(),
    "applied_steps_count"   INTEGER NOT NULL DEFAULT 0
)`;

interface HistoryRow {
  migration_name: string;
  checksum: string;
  finished_at: Date | null;
  rolled_back_at: Date | null;
}

/**
 * Applies the pending migrations of prisma/migrations to `databaseUrl`, in name order, each in
 * its own transaction together with its `_prisma_migrations` row (a failing migration leaves
 * nothing behind; the next start tries it again).
 * @param databaseUrl  postgres:// URL of the application database (must already exist)
 * @param paths        `migrationsDir` to read instead of this package's (tests); `schemaPath` is unused here
 * @returns names of the migrations applied by this call (empty when up to date)
 * @throws on connection errors; when a migration fails (message names it, PostgreSQL's error as
 *         `cause`); when the history records a failed migration (finished_at and rolled_back_at
 *         both empty, e.g. left by Prisma) or an applied migration whose file has changed since
 */
export async function applyMigrations(
  databaseUrl: string,
  { migrationsDir = MIGRATIONS_DIR }: MigrationPaths = {},
): Promise<{ applied: string[] }> {
  const migrations = await readMigrations(migrationsDir);
  const client = new pg.Client({ connectionString: databaseUrl });
  client.on('error', () => {}); // a dropped connection fails the running query; unhandled, its 'error' event would end the process
  await client.connect();
  try {
    await client.query('SELECT pg_advisory_lock($1)', [MIGRATE_LOCK_KEY]);
    await client.query(HISTORY_DDL);
    const { rows } = await client.query<HistoryRow>(
      'SELECT migration_name, checksum, finished_at, rolled_back_at FROM "_prisma_migrations" ORDER BY started_at',
    );

    const failed = rows.find((r) => r.finished_at === null && r.rolled_back_at === null);
    if (failed) {
      throw new Error(
        `migration ${failed.migration_name} failed earlier and is recorded as unfinished in _prisma_migrations: ` +
          'repair the database by hand, then set finished_at (if it is now applied) or rolled_back_at (if not) on that row',
      );
    }
    const applied = new Map(
      rows.filter((r) => r.finished_at !== null && r.rolled_back_at === null).map((r) => [r.migration_name, r.checksum]),
    );
    for (const m of migrations) {
      const checksum = applied.get(m.name);
      if (checksum !== undefined && checksum !== m.checksum) {
        throw new Error(
          `migration ${m.name} was changed after it was applied (checksum ${checksum} in _prisma_migrations, ${m.checksum} on disk): restore the file and add a new migration instead`,
        );
      }
    }

    const done: string[] = [];
    for (const m of migrations.filter((x) => !applied.has(x.name))) {
      const startedAt = new Date();
      await client.query('BEGIN');
      try {
        // No parameters → the simple-query protocol: the whole script in one message, so
        // semicolons inside comments, strings and dollar-quoted bodies need no splitting.
        await client.query(m.sql);
        await client.query(
          `INSERT INTO "_prisma_migrations" (id, checksum, migration_name, started_at, finished_at, applied_steps_count)
           VALUES ($1, $2, $3, $4, clock_timestamp(), 1)`,
          [randomUUID(), m.checksum, m.name, startedAt],
        );
        await client.query('COMMIT');
      } catch (e) {
        await client.query('ROLLBACK').catch(() => undefined);
        throw new Error(`migration ${m.name} failed and was rolled back: ${(e as Error).message}`, { cause: e });
      }
      done.push(m.name);
    }
    return { applied: done };
  } finally {
    // Ending the session releases the advisory lock even if the unlock query is skipped.
    await client.query('SELECT pg_advisory_unlock($1)', [MIGRATE_LOCK_KEY]).catch(() => undefined);
    await client.end();
  }
}
