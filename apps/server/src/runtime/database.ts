/**
 * Which PostgreSQL a Kitty process uses: DATABASE_URL, or the embedded server of the data folder
 * (started here, or the one already running for that folder). Shared by `serve`, `migrate` and
 * `verify` so that each says the same thing about the database it uses and none of them stops a
 * database it did not start.
 */
import { startEmbeddedPostgres, type EmbeddedPostgresHandle } from '@kitty/db/embedded';
import type { ServerConfig } from './config.ts';

export interface OpenedDatabase {
  /** Connection URL (with the password: do not print; print `description`). */
  url: string;
  /** For people: e.g. "embedded PostgreSQL at 127.0.0.1:41234, data ./data (/abs/data), started by this process". */
  description: string;
  /** Stops the embedded server if this process started it; otherwise does nothing. */
  stop(): Promise<void>;
  /** The embedded server's handle (absent with DATABASE_URL). */
  embedded?: EmbeddedPostgresHandle;
}

/**
 * Opens the database named by the configuration.
 * @param opts.create  false: when there is no DATABASE_URL and the data folder holds no database
 *        yet, throw instead of creating one (used by `verify`, which has nothing to check there)
 * @param opts.onLaunched  with the embedded server: called once its process runs (startEmbeddedPostgres)
 * @throws Error with a message for people when the embedded server cannot be started or attached
 */
export async function openDatabase(
  config: Pick<ServerConfig, 'databaseUrl' | 'dataDir' | 'embeddedPgPort'>,
  opts: { create?: boolean; onLaunched?: () => void } = {},
): Promise<OpenedDatabase> {
  if (config.databaseUrl) {
    return { url: config.databaseUrl, description: `PostgreSQL at ${redactUrl(config.databaseUrl)} (DATABASE_URL)`, stop: async () => {} };
  }
  const embedded = await startEmbeddedPostgres({
    dataDir: config.dataDir,
    ...(config.embeddedPgPort ? { port: config.embeddedPgPort } : {}),
    ...(opts.create === false ? { create: false } : {}),
    ...(opts.onLaunched ? { onLaunched: opts.onLaunched } : {}),
  });
  const who = embedded.started ? 'started by this process' : `already running (pid ${embedded.pid}), left running on exit`;
  return {
    url: embedded.databaseUrl,
    description: `embedded PostgreSQL at 127.0.0.1:${embedded.port}, data folder ${embedded.dataDir}, ${who}`,
    stop: () => embedded.stop(),
    embedded,
  };
}

/** The URL without its password (user, host, port and database stay). */
function redactUrl(url: string): string {
  try {
    const u = new URL(url);
    if (u.password) u.password = '';
    return u.toString().replace(/:@/, '@');
  } catch {
    return '(unparseable DATABASE_URL)';
  }
}
