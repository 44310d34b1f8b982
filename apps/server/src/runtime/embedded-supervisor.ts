/**
 * Keeps the embedded PostgreSQL running: when the server this process started exits on its own
 * (postmaster killed or crashed), it is started again on the same data folder and port, so the
 * database URL stays valid and the pool, the LISTEN connection and Prisma reconnect by
 * themselves. Meanwhile /health answers 503 and calls answer 503 SERVICE_UNAVAILABLE ("nothing
 * was changed"; a write whose COMMIT was lost answers "outcome unknown"). If it cannot be
 * started again within `attempts` tries (backoff 200 ms doubling to 5 s, ≈ 40 s), the process
 * exits with status 1 and a message saying why, for a supervisor (systemd, Docker, …) to restart.
 * (Chosen over exiting at once: a lone `pnpm start` keeps serving after a database crash.)
 */
import { startEmbeddedPostgres, type EmbeddedPostgresHandle } from '@kitty/db/embedded';

export interface SupervisorLog {
  error(obj: unknown, msg: string): void;
  warn(obj: unknown, msg: string): void;
}

export interface EmbeddedSupervisor {
  /** The running server's handle (changes after a restart). */
  readonly current: EmbeddedPostgresHandle;
  /** How many times the server was started again. */
  readonly restarts: number;
  /** Stops supervising and stops the current server. */
  stop(): Promise<void>;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/**
 * @param first   the handle of a server this process started (`started: true`)
 * @param opts.log where restarts and failures are reported (read on each use: the app logger comes later)
 * @param opts.attempts start attempts before giving up (default 12)
 * @param opts.giveUp called when every attempt failed (default: print and exit(1))
 */
export function superviseEmbedded(
  first: EmbeddedPostgresHandle,
  opts: { log: () => SupervisorLog; attempts?: number; giveUp?: (err: unknown) => void },
): EmbeddedSupervisor {
  let current = first;
  let restarts = 0;
  let stopped = false;
  let recovering: Promise<void> | undefined;
  const attempts = opts.attempts ?? 12;
  const giveUp =
    opts.giveUp ??
    ((err: unknown) => {
      // eslint-disable-next-line no-console -- the last words of a process about to exit, past its logger
      console.error(
        `kitty: the embedded PostgreSQL (data ${first.dataDir}) died and could not be started again: ${(err as Error)?.message ?? err}. Exiting with status 1 so a supervisor can restart Kitty.`,
      );
      process.exit(1);
    });

  const watch = (handle: EmbeddedPostgresHandle) =>
    handle.onUnexpectedExit((code, signal) => {
      if (stopped) return;
      opts.log().error({ pid: handle.pid, code, signal }, `embedded PostgreSQL (pid ${handle.pid}) exited unexpectedly; starting it again`);
      recovering = recover();
    });

  const recover = async () => {
    let delay = 200;
    let lastError: unknown;
    for (let i = 1; i <= attempts && !stopped; i++) {
      await sleep(delay);
      delay = Math.min(delay * 2, 5000);
      if (stopped) return;
      try {
        const next = await startEmbeddedPostgres({ dataDir: first.dataDir, port: first.port });
        if (stopped) {
          await next.stop();
          return;
        }
        current = next;
        restarts++;
        watch(next);
        opts.log().warn({ pid: next.pid, attempt: i }, `embedded PostgreSQL started again (pid ${next.pid})`);
        return;
      } catch (e) {
        lastError = e;
        opts.log().warn({ err: e, attempt: i }, 'embedded PostgreSQL did not start yet; retrying');
      }
    }
    if (!stopped) giveUp(lastError);
  };

  watch(first);
  return {
    get current() {
      return current;
    },
    get restarts() {
      return restarts;
    },
    async stop() {
      stopped = true;
      await recovering;
      await current.stop();
    },
  };
}
