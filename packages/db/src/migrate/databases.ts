/** Short-lived admin connections: create/drop databases, point a URL at another database. */
import pg from 'pg';

/** Server used for temporary databases when DATABASE_URL is not set. */
export const DEFAULT_ADMIN_URL = 'postgresql://postgres@127.0.0.1:5432/postgres';

/** Returns `url` with its database name replaced. */
export function withDatabase(url: string, database: string): string {
  const u = new URL(url);
  u.pathname = `/${encodeURIComponent(database)}`;
  return u.toString();
}

/** Runs one statement on `url` with a short-lived client. */
export async function adminQuery(url: string, sql: string): Promise<pg.QueryResult> {
  const client = new pg.Client({ connectionString: url });
  client.on('error', () => {}); // a dropped connection fails the running query; unhandled, its 'error' event would end the process
  await client.connect();
  try {
    return await client.query(sql);
  } finally {
    await client.end();
  }
}

/** Drops a database, terminating its connections first (PostgreSQL >= 13). Never throws if it is
 *  already gone. */
export async function dropDatabase(adminUrl: string, name: string): Promise<void> {
  await adminQuery(adminUrl, `DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`);
}
