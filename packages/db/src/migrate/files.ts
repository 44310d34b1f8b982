/** Where the schema and the migrations live, and how the migration folders are read. */
import { createHash } from 'node:crypto';
import { readdir, readFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

/** packages/db root, resolved from this file (packages are consumed as TS source). */
const PACKAGE_DIR = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');
export const SCHEMA_PATH = path.join(PACKAGE_DIR, 'prisma', 'schema.prisma');
export const MIGRATIONS_DIR = path.join(PACKAGE_DIR, 'prisma', 'migrations');

/** Where the schema and the migrations live; defaults to this package's prisma/ folder. Tests
 *  point these at temporary copies. */
export interface MigrationPaths {
  /** Absolute path of schema.prisma. */
  schemaPath?: string;
  /** Absolute path of the migrations folder (created by `createMigration` if missing). */
  migrationsDir?: string;
}

/** One migration folder: `<yyyyMMddHHmmss>_<name>/migration.sql`. */
export interface MigrationFile {
  /** Folder name, e.g. "20261121122130_init"; the order of application is the order of names. */
  name: string;
  /** The whole SQL script. */
  sql: string;
  /** SHA-256 (hex) of the script's bytes: what Prisma stores in `_prisma_migrations.checksum`. */
  checksum: string;
}

/**
 * Reads every migration folder of `dir`, sorted by name (the order Prisma applies them).
 * A missing folder is an empty history.
 * @throws if a migration folder has no readable migration.sql
 */
export async function readMigrations(dir = MIGRATIONS_DIR): Promise<MigrationFile[]> {
  const entries = await readdir(dir, { withFileTypes: true }).catch(() => []);
  const names = entries
    .filter((e) => e.isDirectory())
    .map((e) => e.name)
    .sort();
  return Promise.all(
    names.map(async (name) => {
      const bytes = await readFile(path.join(dir, name, 'migration.sql')).catch((e: Error) => {
        throw new Error(`migration ${name} has no readable migration.sql: ${e.message}`, { cause: e });
      });
      return { name, sql: bytes.toString('utf8'), checksum: createHash('sha256').update(bytes).digest('hex') };
    }),
  );
}
