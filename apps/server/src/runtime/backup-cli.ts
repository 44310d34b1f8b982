/**
 * `kitty backup FILE` and `kitty restore FILE` (docs/operations.md). Everything Kitty keeps —
 * agents and key digests, people, passkeys, OAuth state, ledgers, inbox, activity — is in its one
 * PostgreSQL database; these commands copy that database with PostgreSQL's own means:
 * - embedded database (no DATABASE_URL): a base backup of the data folder through the low-level
 *   backup API, online (the server keeps running; the command attaches to it, or starts the
 *   database for itself when no server runs). Restore: into a missing or empty KITTY_DATA_DIR.
 * - DATABASE_URL: pg_dump of the server's major version (one snapshot). Restore: pg_restore into an
 *   empty database, in one transaction.
 * Restore refuses a non-empty target and a backup from a newer schema (a migration this version
 * lacks); an older backup is brought up to date by the usual migrations afterwards.
 */
import { readdir } from 'node:fs/promises';
import path from 'node:path';
import { applyMigrations, backupDatabase, checkBackup, restoreDataFolder, restoreLogical, RestoreRefused } from '@kitty/db';
import type { ServerConfig } from './config.ts';
import { openDatabase } from './database.ts';

type Print = (line: string) => void;

const size = (bytes: number) => (bytes < 1 << 20 ? `${Math.ceil(bytes / 1024)} KB` : `${(bytes / (1 << 20)).toFixed(1)} MB`);

/** Writes a backup to `file`; the running server (if any) keeps serving. */
export async function runBackup(config: ServerConfig, file: string, print: Print): Promise<void> {
  const target = path.resolve(process.env.INIT_CWD ?? process.cwd(), file);
  // DATABASE_URL, or the embedded server of KITTY_DATA_DIR (the running one, else started for this command).
  const db = await openDatabase(config, { create: false });
  try {
    print(`backup: ${db.description}`);
    const t = performance.now();
    const r = await backupDatabase({
      databaseUrl: db.url,
      dataDir: db.embedded?.dataDir,
      file: target,
      pgBinDir: config.pgBinDir,
    });
    const how = r.manifest.kind === 'physical' ? 'base backup of the data folder' : 'pg_dump';
    print(
      `wrote ${target}: ${size(r.bytes)}, ${how} of PostgreSQL ${r.manifest.server_version}, schema ${r.manifest.migrations.at(-1) ?? '(none)'}, in ${((performance.now() - t) / 1000).toFixed(1)} s`,
    );
  } finally {
    await db.stop();
  }
}

/**
 * Restores `file` into the configured database, which must be empty (or, embedded, a missing or
 * empty data folder). Throws RestoreRefused (exit 2) when the target or the backup is refused.
 */
export async function runRestore(config: ServerConfig, file: string, print: Print): Promise<void> {
  const source = path.resolve(process.env.INIT_CWD ?? process.cwd(), file);
  const manifest = await checkBackup(source);
  print(`restore: ${source} (${manifest.kind} backup of ${manifest.created_at}, PostgreSQL ${manifest.server_version})`);
  if (config.databaseUrl) {
    await restoreLogical(source, manifest, config.databaseUrl, config.pgBinDir);
    const m = await applyMigrations(config.databaseUrl);
    print(`restored into DATABASE_URL${m.applied.length ? `; migrations applied: ${m.applied.join(', ')}` : ''}`);
    return;
  }
  if (manifest.kind === 'physical') {
    const files = await restoreDataFolder(source, manifest, config.dataDir);
    print(`unpacked ${files} files into ${config.dataDir}; starting PostgreSQL on it (it replays the backup's WAL)`);
  }
  // A pg_dump backup goes into a new embedded database.
  else await refuseNonEmptyFolder(config.dataDir);
  const db = await openDatabase(config, { create: manifest.kind === 'logical' });
  try {
    if (manifest.kind === 'logical') await restoreLogical(source, manifest, db.url, config.pgBinDir);
    const m = await applyMigrations(db.url);
    print(`restored into ${db.description}${m.applied.length ? `; migrations applied: ${m.applied.join(', ')}` : ''}`);
  } finally {
    await db.stop();
  }
}

async function refuseNonEmptyFolder(dir: string): Promise<void> {
  const entries = await readdir(dir).catch(() => []);
  if (entries.length) throw new RestoreRefused(`${dir} is not empty: restore only into a new or empty data folder (KITTY_DATA_DIR)`);
}
