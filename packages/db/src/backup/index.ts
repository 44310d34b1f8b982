/**
 * `kitty backup` / `kitty restore` (docs/operations.md): everything Kitty keeps is in its one
 * PostgreSQL database, so a backup is that database, taken with PostgreSQL's own means — a base
 * backup of the embedded server's data folder (physical.ts), or pg_dump for a DATABASE_URL
 * (logical.ts) — in one file with a manifest naming the schema's migrations (archive.ts).
 */
import { existsSync } from 'node:fs';
import { mkdtemp, readdir, rm, stat } from 'node:fs/promises';
import path from 'node:path';
import pg from 'pg';
import { readMigrations } from '../migrate/files.ts';
import { ArchiveWriter, MANIFEST_NAME, extractEntries, readManifest, type BackupManifest } from './archive.ts';
import { PGDATA_PREFIX, prepareDataFolder, writeBaseBackup } from './physical.ts';
import { findPgTool, majorOf, runPgTool } from './logical.ts';

export { readManifest, type BackupManifest } from './archive.ts';

const LOGICAL_ENTRY = 'database.pgdump';

async function connect(databaseUrl: string): Promise<pg.Client> {
  const client = new pg.Client({ connectionString: databaseUrl });
  client.on('error', () => {}); // a dropped connection fails the running query instead of ending the process
  await client.connect();
  return client;
}

async function serverInfo(client: pg.Client): Promise<{ version: string; major: number }> {
  const { rows } = await client.query<{ v: string; n: string }>(
    "SELECT current_setting('server_version') AS v, current_setting('server_version_num') AS n",
  );
  return { version: rows[0]!.v, major: majorOf(Number(rows[0]!.n)) };
}

/**
 * Writes a backup of the database at `databaseUrl` to `file` (refused if it exists), online: the
 * server keeps serving. With `dataDir` (the embedded server's data folder, on this machine) a
 * physical base backup; without, pg_dump of the server's major version.
 */
export async function backupDatabase(opts: {
  databaseUrl: string;
  file: string;
  dataDir?: string | undefined;
  pgBinDir?: string | undefined;
}): Promise<{ manifest: BackupManifest; bytes: number; files: number }> {
  if (existsSync(opts.file)) throw new Error(`${opts.file} exists; choose a new file name (a backup never overwrites)`);
  const client = await connect(opts.databaseUrl);
  const archive = new ArchiveWriter(opts.file);
  try {
    const server = await serverInfo(client);
    const { rows } = await client.query<{ name: string }>(
      'SELECT migration_name AS name FROM "_prisma_migrations" WHERE finished_at IS NOT NULL AND rolled_back_at IS NULL ORDER BY migration_name',
    );
    const manifest: BackupManifest = {
      format: 'kitty-backup',
      version: 1,
      kind: opts.dataDir ? 'physical' : 'logical',
      created_at: new Date().toISOString(),
      server_version: server.version,
      migrations: rows.map((r) => r.name),
    };
    await archive.addBuffer(MANIFEST_NAME, `${JSON.stringify(manifest, null, 2)}\n`);
    let files = 1;
    if (opts.dataDir) {
      files = (await writeBaseBackup(client, opts.dataDir, archive)).files;
    } else {
      const bin = await findPgTool('pg_dump', [server.major], opts.pgBinDir);
      const tmp = await mkdtemp(path.join(path.dirname(path.resolve(opts.file)), '.kitty-backup-'));
      try {
        const dump = path.join(tmp, LOGICAL_ENTRY);
        // One snapshot for the whole dump; compression left to the archive's gzip.
        await runPgTool(bin, ['--format=custom', '--compress=0', '--no-owner', '--no-privileges', '--file', dump], opts.databaseUrl);
        await archive.addFile(LOGICAL_ENTRY, dump);
      } finally {
        await rm(tmp, { recursive: true, force: true });
      }
    }
    await archive.finish();
    return { manifest, bytes: (await stat(opts.file)).size, files };
  } catch (e) {
    await archive.abort();
    throw e;
  } finally {
    await client.end().catch(() => {});
  }
}

/** A backup refused before anything is written, with the reason for people. */
export class RestoreRefused extends Error {
  override name = 'RestoreRefused';
}

/**
 * Reads the manifest and refuses a backup whose schema is newer than this Kitty's: one with a
 * migration this version does not have (restoring it would give a database this code cannot use).
 */
export async function checkBackup(file: string): Promise<BackupManifest> {
  if (!existsSync(file)) throw new RestoreRefused(`${file} does not exist`);
  const manifest = await readManifest(file).catch((e: Error) => {
    throw new RestoreRefused(e.message);
  });
  const known = new Set((await readMigrations()).map((m) => m.name));
  const unknown = manifest.migrations.filter((m) => !known.has(m));
  if (unknown.length)
    throw new RestoreRefused(
      `the backup comes from a newer Kitty: its schema has migrations this version does not know (${unknown.join(', ')}). Restore it with that Kitty version or a later one.`,
    );
  return manifest;
}

/** Restores a physical backup into `dataDir`, which must be missing or empty. Start PostgreSQL on it afterwards (it replays the backup's WAL). */
export async function restoreDataFolder(file: string, manifest: BackupManifest, dataDir: string): Promise<number> {
  if (manifest.kind !== 'physical') throw new RestoreRefused('this backup holds a pg_dump archive, not a data folder');
  if (existsSync(dataDir) && (await readdir(dataDir)).length > 0)
    throw new RestoreRefused(`${dataDir} is not empty: restore only into a new or empty data folder (KITTY_DATA_DIR)`);
  const files = await extractEntries(file, (name) =>
    name.startsWith(PGDATA_PREFIX) && name.length > PGDATA_PREFIX.length ? path.join(dataDir, name.slice(PGDATA_PREFIX.length)) : null,
  );
  await prepareDataFolder(dataDir);
  return files;
}

/** True when the database has no tables, views, sequences, functions or types of its own. */
export async function isDatabaseEmpty(databaseUrl: string): Promise<boolean> {
  const client = await connect(databaseUrl);
  try {
    const { rows } = await client.query<{ n: string }>(`SELECT
      (SELECT count(*) FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace WHERE n.nspname NOT IN ('pg_catalog', 'information_schema') AND n.nspname NOT LIKE 'pg\\_%')
    + (SELECT count(*) FROM pg_proc p JOIN pg_namespace n ON n.oid = p.pronamespace WHERE n.nspname NOT IN ('pg_catalog', 'information_schema') AND n.nspname NOT LIKE 'pg\\_%') AS n`);
    return Number(rows[0]!.n) === 0;
  } finally {
    await client.end().catch(() => {});
  }
}

/** Restores a pg_dump backup into the empty database at `databaseUrl` (one transaction: all or nothing). */
export async function restoreLogical(file: string, manifest: BackupManifest, databaseUrl: string, pgBinDir?: string): Promise<void> {
  if (manifest.kind !== 'logical')
    throw new RestoreRefused(
      'this backup is a copy of an embedded data folder: restore it into an empty KITTY_DATA_DIR with DATABASE_URL unset (then back that server up with DATABASE_URL set to move it)',
    );
  if (!(await isDatabaseEmpty(databaseUrl))) throw new RestoreRefused('the database is not empty: restore only into a new, empty database');
  const client = await connect(databaseUrl);
  const target = await serverInfo(client).finally(() => client.end().catch(() => {}));
  const sourceMajor = Number(/^(\d+)/.exec(manifest.server_version)?.[1] ?? 0);
  if (sourceMajor > target.major)
    throw new RestoreRefused(
      `the backup comes from PostgreSQL ${manifest.server_version}: restore it into PostgreSQL ${sourceMajor} or later (this one is ${target.version})`,
    );
  // pg_restore reads archives of its own and older versions, and restores into servers newer than itself.
  const majors = Array.from({ length: target.major - sourceMajor + 1 }, (_, i) => target.major - i);
  const bin = await findPgTool('pg_restore', majors, pgBinDir);
  const tmp = await mkdtemp(path.join(path.dirname(path.resolve(file)), '.kitty-restore-'));
  try {
    const dump = path.join(tmp, LOGICAL_ENTRY);
    await extractEntries(file, (name) => (name === LOGICAL_ENTRY ? dump : null));
    if (!existsSync(dump)) throw new RestoreRefused(`the backup has no ${LOGICAL_ENTRY}`);
    const dbName = decodeURIComponent(new URL(databaseUrl).pathname.slice(1));
    await runPgTool(
      bin,
      ['--no-owner', '--no-privileges', '--exit-on-error', '--single-transaction', '--dbname', dbName, dump],
      databaseUrl,
    );
  } finally {
    await rm(tmp, { recursive: true, force: true });
  }
}
