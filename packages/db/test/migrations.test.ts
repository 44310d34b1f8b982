import { cp, mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { applyMigrations, checkMigrations, createDb, createMigration, createTestDatabase } from '../src/index.ts';
import { adminQuery, dropDatabase, MIGRATIONS_DIR, SCHEMA_PATH, withDatabase } from '../src/migrate.ts';

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

  it('is safe when two processes apply at once (advisory lock)', async () => {
    const name = `kitty_test_race_${Date.now()}`;
    await adminQuery(ADMIN_URL, `CREATE DATABASE "${name}"`);
    try {
      const url = withDatabase(ADMIN_URL, name);
      const results = await Promise.all([applyMigrations(url), applyMigrations(url), applyMigrations(url)]);
      const applied = results.flatMap((r) => r.applied);
      expect(applied.length).toBeGreaterThan(0);
      expect(new Set(applied).size).toBe(applied.length); // each migration applied exactly once
    } finally {
      await dropDatabase(ADMIN_URL, name);
    }
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
    const { rows } = await withClient(ADMIN_URL, (c) =>
      c.query("SELECT datname FROM pg_database WHERE datname LIKE 'kitty_shadow_%'"),
    );
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
