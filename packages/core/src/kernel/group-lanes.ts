/**
 * Group commit for batched writes into one group. Writes into a group serialise on its member rows, each holding them
 * until its COMMIT has been flushed to the WAL; so a write into a group that already has one in flight from this
 * instance waits for it, and every write that queued meanwhile is then sent together: one statement
 * (`kitty_apply_batches_quiet`, migration 20261126200000_apply_batches_one_group), one transaction, one COMMIT. The
 * documents run in arrival order, each seeing the ones before it, with the answers of the same writes sent one by one.
 * With nothing in flight for its group a write leaves at once, so a quiet group pays no wait.
 *
 * When a combined statement fails with a PostgreSQL error (a stale guard, KB001, included) nothing of it was written,
 * and each of its documents is sent again on its own, so each gets its own answer or error. When its connection is lost
 * every document's outcome is unknown, and each caller is told so.
 */
import type { Pool } from 'pg';

/** At most this many documents share one statement; more wait for the next. */
const MAX_DOCUMENTS = 32;
/**
 * A document that writes more rows than this (WriteBatch.rowCount) is sent at once, outside its group's lane. Until it
 * waits for the member rows, a write's own rows (shares, inbox items, event recipients) are written in parallel with
 * the other writes into the group; in a combined statement they are written one after another by one backend. Measured
 * with add_expense into one group from 10 connections (docs/benchmarks.md, tenth session): combining wins at 4 members
 * (23 rows per write), breaks even at 8 (47 rows) and loses at 12 (71 rows) and 20 (119 rows). Payments and their
 * transitions write 8-12 rows.
 */
const MAX_COMBINED_ROWS = 32;

/** A batch document (kernel/write-batch.ts toDocument) and its answer from `kitty_apply_batch`, as PostgreSQL sent it. */
type Document = Record<string, unknown>;
type Answer = unknown;

interface Queued {
  doc: Document;
  resolve: (answer: Answer) => void;
  reject: (error: unknown) => void;
}

/** True for an error PostgreSQL reported (it carries a SQLSTATE): the statement, and so its transaction, was rolled back. */
export function isRolledBack(e: unknown): boolean {
  const code = (e as { code?: unknown } | null)?.code;
  return typeof code === 'string' && /^[0-9A-Z]{5}$/.test(code);
}

/** The pool gave no connection, so nothing was sent; `cause` is the pool's error (the database unavailable, say). */
export class NotSentError extends Error {
  constructor(cause: unknown) {
    super('no database connection: nothing was sent', { cause });
  }
}

/**
 * Runs `text` with `values` on a client of `pool` as a named prepared statement and answers the row's `answer`. Throws
 * NotSentError when no client was had, PostgreSQL's error when the statement was rolled back, and the driver's error
 * when the connection was lost after sending (the client is then destroyed).
 */
async function query<T>(pool: Pool, name: string, text: string, values: unknown[]): Promise<T> {
  let client;
  try {
    client = await pool.connect();
  } catch (e) {
    throw new NotSentError(e);
  }
  try {
    const r = await client.query<{ answer: T }>({ name, text, values });
    client.release();
    return r.rows[0]!.answer;
  } catch (e) {
    client.release(isRolledBack(e) ? undefined : e instanceof Error ? e : true);
    throw e;
  }
}

/** The batched writes in flight from this instance, by group, and the documents waiting for each. */
export class GroupLanes {
  private readonly waiting = new Map<string, Queued[]>();
  /** Statements sent with more than one document, and the documents they carried (for tests and the benchmark). */
  readonly stats = { combined: 0, documents: 0 };

  private readonly pool: Pool;

  constructor(pool: Pool) {
    this.pool = pool;
  }

  /** How many documents for `groupId` wait behind one in flight (0 when none is in flight). */
  queued(groupId: string): number {
    return this.waiting.get(groupId)?.length ?? 0;
  }

  /**
   * Applies one batch document (`kitty_apply_batch`'s answer: applied with the caller's inbox summary, or duplicate)
   * that writes `rows` rows. A document without a group, or with more than MAX_COMBINED_ROWS rows, is sent at once. Rejects with PostgreSQL's error when its write was rolled back
   * (SQLSTATE KB001: the guard no longer held), or with the driver's error when the connection was lost.
   */
  apply(doc: Document, rows: number): Promise<Answer> {
    const groupId = typeof doc.group_id === 'string' ? doc.group_id : undefined;
    if (!groupId || rows > MAX_COMBINED_ROWS) return this.one(doc);
    const queue = this.waiting.get(groupId);
    if (queue) return new Promise((resolve, reject) => queue.push({ doc, resolve, reject }));
    this.waiting.set(groupId, []);
    return this.one(doc).finally(() => this.next(groupId));
  }

  /** Sends what waits for `groupId` (up to MAX_DOCUMENTS), or frees the group when nothing does. */
  private next(groupId: string): void {
    const queue = this.waiting.get(groupId)!;
    if (!queue.length) {
      this.waiting.delete(groupId);
      return;
    }
    const taken = queue.splice(0, MAX_DOCUMENTS);
    void this.together(taken).finally(() => this.next(groupId));
  }

  private one(doc: Document): Promise<Answer> {
    return query<Answer>(this.pool, 'kitty_apply_batch', 'SELECT kitty_apply_batch_quiet($1::jsonb) AS answer', [JSON.stringify(doc)]);
  }

  /** Sends `taken` in one statement; on a rollback, each again on its own. Settles every one of them; never rejects. */
  private async together(taken: Queued[]): Promise<void> {
    if (taken.length === 1) {
      await this.one(taken[0]!.doc).then(taken[0]!.resolve, taken[0]!.reject);
      return;
    }
    let answers: Answer[];
    try {
      answers = await query<Answer[]>(this.pool, 'kitty_apply_batches', 'SELECT kitty_apply_batches_quiet($1::jsonb) AS answer', [
        JSON.stringify(taken.map((q) => q.doc)),
      ]);
    } catch (e) {
      // Rolled back, or never sent: nothing was written.
      if (!isRolledBack(e) && !(e instanceof NotSentError)) {
        for (const q of taken) q.reject(e);
        return;
      }
      // Nothing was written: one statement each, in order, so each gets its own answer (or its own error).
      for (const q of taken) await this.one(q.doc).then(q.resolve, q.reject);
      return;
    }
    this.stats.combined++;
    this.stats.documents += taken.length;
    taken.forEach((q, i) => q.resolve(answers[i]));
  }
}

const lanes = new WeakMap<Pool, GroupLanes>();

/** The lanes of `pool` (one per pool, so per process and database). */
export function groupLanesFor(pool: Pool): GroupLanes {
  let l = lanes.get(pool);
  if (!l) lanes.set(pool, (l = new GroupLanes(pool)));
  return l;
}
