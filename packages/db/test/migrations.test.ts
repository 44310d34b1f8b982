import { cp, mkdir, mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createHash } from 'node:crypto';
import { applyMigrations, createDb, createTestDatabase } from '../src/index.ts';
import { checkMigrations, createMigration } from '../src/migrate/authoring.ts';
import { adminQuery, dropDatabase, withDatabase } from '../src/migrate/databases.ts';
import { MIGRATIONS_DIR, SCHEMA_PATH } from '../src/migrate/files.ts';

const ADMIN_URL = process.env.TEST_DATABASE_URL ?? 'postgresql://postgres@127.0.0.1:5432/postgres';

describe('migrations', () => {
  let db: Awaited<ReturnType<typeof createTestDatabase>>;
  beforeAll(async () => {
    db = await createTestDatabase();
  });
  afterAll(async () => {
    await db?.drop();
  });

  it('applies all migrations to a fresh test database, with the standard history table', async () => {
    const dirs = (await readdir(MIGRATIONS_DIR, { withFileTypes: true })).filter((d) => d.isDirectory());
    const { rows } = await withClient(db.databaseUrl, (c) =>
      c.query('SELECT migration_name, finished_at FROM _prisma_migrations ORDER BY migration_name'),
    );
    expect(rows.map((r) => r.migration_name)).toEqual(dirs.map((d) => d.name).sort());
    expect(rows.every((r) => r.finished_at)).toBe(true);
    expect(await applyMigrations(db.databaseUrl)).toEqual({ applied: [] });
  });

  it('serves Prisma and the raw pool from createDb', async () => {
    const { prisma, pool, close } = createDb(db.databaseUrl, { poolMax: 4 });
    try {
      const agent = await prisma.agent.create({ data: { handle: 'tom', displayName: 'Tom' } });
      const { rows } = await pool.query('SELECT handle FROM agents WHERE id = $1', [agent.id]);
      expect(rows).toEqual([{ handle: 'tom' }]);
      expect(pool.options.max).toBe(4);
    } finally {
      await close();
    }
  });

  it('records each migration as Prisma does: sha256 checksum of migration.sql, one step, finished', async () => {
    const { rows } = await withClient(db.databaseUrl, (c) =>
      c.query(
        'SELECT migration_name, checksum, applied_steps_count, finished_at, rolled_back_at, logs FROM _prisma_migrations ORDER BY migration_name',
      ),
    );
    for (const r of rows) {
      const sql = await readFile(path.join(MIGRATIONS_DIR, r.migration_name, 'migration.sql'));
      expect(r).toMatchObject({
        checksum: createHash('sha256').update(sql).digest('hex'),
        applied_steps_count: 1,
        rolled_back_at: null,
        logs: null,
      });
      expect(r.finished_at).toBeInstanceOf(Date);
    }
  });

  it('two instances applying at once on a fresh database migrate it exactly once', async () => {
    await withFreshDatabase(async (url) => {
      const [a, b] = await Promise.all([applyMigrations(url), applyMigrations(url)]);
      const dirs = (await readdir(MIGRATIONS_DIR, { withFileTypes: true }))
        .filter((d) => d.isDirectory())
        .map((d) => d.name)
        .sort();
      expect([...a.applied, ...b.applied].sort()).toEqual(dirs);
      expect(a.applied.length === 0 || b.applied.length === 0).toBe(true);
      const { rows } = await withClient(url, (c) => c.query('SELECT migration_name FROM _prisma_migrations ORDER BY migration_name'));
      expect(rows.map((r) => r.migration_name)).toEqual(dirs);
    });
  });

  it('waits for the advisory lock held by another session before touching the database', async () => {
    await withFreshDatabase(async (url) => {
      const holder = new pg.Client({ connectionString: url });
      await holder.connect();
      try {
        await holder.query('SELECT pg_advisory_lock(72707369)');
        const running = applyMigrations(url);
        // Wait until the runner's session is queued on the lock (a condition, not a delay).
        for (;;) {
          const { rows } = await holder.query(
            "SELECT count(*)::int AS n FROM pg_locks WHERE locktype = 'advisory' AND objid = 72707369 AND NOT granted AND database = (SELECT oid FROM pg_database WHERE datname = current_database())",
          );
          if (rows[0].n > 0) break;
        }
        const { rows } = await holder.query("SELECT to_regclass('_prisma_migrations') AS t");
        expect(rows[0].t).toBeNull();
        await holder.query('SELECT pg_advisory_unlock(72707369)');
        expect((await running).applied.length).toBeGreaterThan(0);
      } finally {
        await holder.end();
      }
    });
  });

  it('a failing migration is rolled back whole and not recorded; the ones before it stay applied', async () => {
    await withMigrationsCopy(async (migrationsDir) => {
      await mkdir(path.join(migrationsDir, '99990101000000_broken'));
      await writeFile(
        path.join(migrationsDir, '99990101000000_broken', 'migration.sql'),
        'CREATE TABLE half_done (id int);\nSELECT 1/0;\n',
      );
      await withFreshDatabase(async (url) => {
        await expect(applyMigrations(url, { migrationsDir })).rejects.toThrow(
          /99990101000000_broken failed and was rolled back: division by zero/,
        );
        const { rows } = await withClient(url, (c) =>
          c.query(
            "SELECT to_regclass('half_done') AS half, (SELECT count(*)::int FROM _prisma_migrations WHERE migration_name LIKE '9999%') AS broken, (SELECT count(*)::int FROM _prisma_migrations) AS total",
          ),
        );
        expect(rows[0]).toMatchObject({ half: null, broken: 0 });
        expect(rows[0].total).toBeGreaterThan(0);
      });
    });
  });

  it('refuses an applied migration whose file changed, and a failed migration left in the history', async () => {
    await withMigrationsCopy(async (migrationsDir) => {
      await withFreshDatabase(async (url) => {
        await applyMigrations(url, { migrationsDir });
        const [first] = (await readdir(migrationsDir, { withFileTypes: true }))
          .filter((d) => d.isDirectory())
          .map((d) => d.name)
          .sort();
        const file = path.join(migrationsDir, first!, 'migration.sql');
        const original = await readFile(file, 'utf8');
        await writeFile(file, `${original}\n-- edited\n`);
        await expect(applyMigrations(url, { migrationsDir })).rejects.toThrow(new RegExp(`${first} was changed after it was applied`));
        await writeFile(file, original);

        await withClient(url, (c) =>
          c.query(
            "INSERT INTO _prisma_migrations (id, checksum, migration_name, applied_steps_count) VALUES ('00000000-0000-0000-0000-000000000001', 'x', '99990101000000_failed', 0)",
          ),
        );
        await expect(applyMigrations(url, { migrationsDir })).rejects.toThrow(/99990101000000_failed failed earlier/);
      });
    });
  });

  it('check passes on the committed schema and migrations', async () => {
    const res = await checkMigrations(ADMIN_URL);
    expect(res).toMatchObject({ ok: true });
  });

  it('check detects drift, create writes the missing migration, then check passes', async () => {
    const tmp = await mkdtemp(path.join(tmpdir(), 'kitty-drift-'));
    try {
      const paths = { schemaPath: path.join(tmp, 'schema.prisma'), migrationsDir: path.join(tmp, 'migrations') };
      await cp(MIGRATIONS_DIR, paths.migrationsDir, { recursive: true });
      const schema = await readFile(SCHEMA_PATH, 'utf8');
      await writeFile(paths.schemaPath, `${schema}\nmodel DriftProbe {\n  id Int @id\n  @@map("drift_probe")\n}\n`);

      const drift = await checkMigrations(ADMIN_URL, paths);
      expect(drift.ok).toBe(false);
      expect(drift.summary).toContain('drift_probe');

      const created = await createMigration('drift_probe', ADMIN_URL, paths);
      expect(created).toMatch(/^\d{14}_drift_probe$/);
      const sql = await readFile(path.join(paths.migrationsDir, created!, 'migration.sql'), 'utf8');
      expect(sql).toContain('CREATE TABLE "drift_probe"');
      expect(await checkMigrations(ADMIN_URL, paths)).toMatchObject({ ok: true });
      expect(await createMigration('again', ADMIN_URL, paths)).toBeNull();
    } finally {
      await rm(tmp, { recursive: true, force: true });
    }
  });

  it('leaves no temporary databases behind', async () => {
    const { rows } = await withClient(ADMIN_URL, (c) => c.query("SELECT datname FROM pg_database WHERE datname LIKE 'kitty_shadow_%'"));
    expect(rows).toEqual([]);
  });
});

async function withClient<T>(url: string, fn: (c: pg.Client) => Promise<T>): Promise<T> {
  const c = new pg.Client({ connectionString: url });
  await c.connect();
  try {
    return await fn(c);
  } finally {
    await c.end();
  }
}

async function withFreshDatabase(fn: (url: string) => Promise<void>): Promise<void> {
  const name = `kitty_test_mig_${Date.now()}_${Math.floor(Math.random() * 1e6)}`;
  await adminQuery(ADMIN_URL, `CREATE DATABASE "${name}"`);
  try {
    await fn(withDatabase(ADMIN_URL, name));
  } finally {
    await dropDatabase(ADMIN_URL, name);
  }
}

async function withMigrationsCopy(fn: (dir: string) => Promise<void>): Promise<void> {
  const tmp = await mkdtemp(path.join(tmpdir(), 'kitty-migrations-'));
  try {
    await cp(MIGRATIONS_DIR, tmp, { recursive: true });
    await fn(tmp);
  } finally {
    await rm(tmp, { recursive: true, force: true });
  }
}
