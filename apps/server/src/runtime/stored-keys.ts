/**
 * Key material kept in `oauth_payloads` (type "KittyKeys"): the authorization server's keys (oauth/keys.ts) and the
 * receipt-link secret (receipts.ts), read at start-up with plain SQL on the pg pool. Start-up thereby runs no Prisma
 * query: Prisma's query compiler (WebAssembly, ~0.1 s to set up and ~0.2 s CPU for its first compiled queries) is first
 * used by the scheduler after the server listens, not before the first `/health` (docs/design-notes.md "Start-up").
 */

/** What these reads need: a pg Pool or client (`Db['pool']`). Rows' jsonb columns come back parsed. */
export interface Sql {
  query(text: string, values?: unknown[]): Promise<{ rows: Array<Record<string, unknown>> }>;
}

/** The stored payload of key row `id`, or undefined when there is none. */
export async function readStoredKeys<T>(sql: Sql, id: string): Promise<T | undefined> {
  const { rows } = await sql.query(`SELECT payload FROM oauth_payloads WHERE type = 'KittyKeys' AND id = $1`, [id]);
  return rows[0]?.payload as T | undefined;
}

/**
 * Stores `fresh` as key row `id` unless one exists (the first instance to start wins), then returns what is stored.
 * Two statements, each its own transaction, so the read sees a row another instance committed meanwhile.
 * @throws the pg error when the database refuses either statement
 */
export async function keepStoredKeys<T>(sql: Sql, id: string, fresh: T): Promise<T> {
  await sql.query(`INSERT INTO oauth_payloads (type, id, payload) VALUES ('KittyKeys', $1, $2::jsonb) ON CONFLICT (type, id) DO NOTHING`, [
    id,
    JSON.stringify(fresh),
  ]);
  const stored = await readStoredKeys<T>(sql, id);
  if (stored === undefined) throw new Error(`oauth_payloads: key row ${id} vanished after it was stored`);
  return stored;
}
