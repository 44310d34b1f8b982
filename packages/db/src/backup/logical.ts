/**
 * Logical backup of a database Kitty reaches only over the network (DATABASE_URL): PostgreSQL's own
 * pg_dump (custom format, one consistent snapshot, online) and pg_restore. pg_dump refuses servers
 * of a newer major than its own, and an older pg_dump may miss what a newer server has, so the
 * tools used are those of the server's major: from KITTY_PG_BIN_DIR, Debian's
 * /usr/lib/postgresql/<major>/bin, or the PATH, whichever has that version first.
 */
import { execFile, spawn } from 'node:child_process';
import { access, constants } from 'node:fs/promises';
import path from 'node:path';
import { promisify } from 'node:util';

const run = promisify(execFile);

/** PostgreSQL's major version from `server_version_num` (e.g. 150020 → 15, 180004 → 18). */
export const majorOf = (versionNum: number) => Math.floor(versionNum / 10_000);

/**
 * Finds `tool` (pg_dump, pg_restore) of one of the PostgreSQL majors `majors`, the first preferred.
 * @throws naming the major needed and where it looked
 */
export async function findPgTool(tool: 'pg_dump' | 'pg_restore', majors: number[], binDir?: string): Promise<string> {
  const major = majors[0]!;
  const dirs = [
    ...(binDir ? [binDir] : []),
    ...majors.map((m) => `/usr/lib/postgresql/${m}/bin`),
    ...(process.env.PATH ?? '').split(path.delimiter).filter(Boolean),
  ];
  const found: string[] = [];
  const usable: Array<{ bin: string; rank: number }> = [];
  for (const dir of dirs) {
    const candidate = path.join(dir, tool);
    if (
      !(await access(candidate, constants.X_OK).then(
        () => true,
        () => false,
      ))
    )
      continue;
    const out = await run(candidate, ['--version']).then(
      (r) => r.stdout,
      () => '',
    );
    const m = /\) (\d+)/.exec(out);
    const rank = m ? majors.indexOf(Number(m[1])) : -1;
    if (rank === 0) return candidate;
    if (rank > 0) usable.push({ bin: candidate, rank });
    else if (m) found.push(`${candidate} is version ${m[1]}`);
  }
  usable.sort((a, b) => a.rank - b.rank);
  if (usable[0]) return usable[0].bin;
  throw new Error(
    `no ${tool} of PostgreSQL ${major} (the server's version) was found${found.length ? ` (${found.join('; ')})` : ''}. ` +
      `Install PostgreSQL ${major}'s client tools (e.g. the postgresql-client-${major} package) or set KITTY_PG_BIN_DIR to their folder.`,
  );
}

/** Runs a PostgreSQL tool with the connection given through the environment (the password never appears in the process list). */
export async function runPgTool(bin: string, args: string[], databaseUrl: string): Promise<void> {
  const u = new URL(databaseUrl);
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    PGHOST: decodeURIComponent(u.hostname.replace(/^\[|\]$/g, '')),
    PGPORT: u.port || '5432',
    PGUSER: decodeURIComponent(u.username),
    PGDATABASE: decodeURIComponent(u.pathname.slice(1)),
    ...(u.password ? { PGPASSWORD: decodeURIComponent(u.password) } : {}),
  };
  for (const [k, v] of u.searchParams) if (k === 'sslmode') env.PGSSLMODE = v;
  const child = spawn(bin, args, { env, stdio: ['ignore', 'ignore', 'pipe'] });
  let stderr = '';
  child.stderr.on('data', (d: Buffer) => (stderr = (stderr + d.toString()).slice(-4000)));
  const code = await new Promise<number | null>((resolve, reject) => {
    child.once('error', reject);
    child.once('close', resolve);
  });
  if (code !== 0) throw new Error(`${path.basename(bin)} failed (exit ${code}):\n${stderr.trim()}`);
}
