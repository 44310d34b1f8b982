/**
 * Group commit for batched writes. Each batched write used to be one statement and one transaction, paying its own
 * COMMIT (with its WAL flush), round trip and statement start; writes into one group also held its member rows until
 * their COMMIT was flushed, one after another. An instance now keeps at most LANES batched writes in flight; the ones
 * that arrive meanwhile queue, and each freed lane sends every write waiting (up to MAX_DOCUMENTS) together: one
 * statement (`kitty_apply_batches_quiet`, migration 20261126200000_apply_batches), one transaction, one COMMIT. The
 * documents run in arrival order, each seeing the ones before it, with the answers of the same writes sent one by one.
 * With a lane free a write leaves at once, so a quiet server adds no wait.
 *
 * When a combined statement fails with a PostgreSQL error (a stale guard, KB001, or a deadlock) nothing of it was
 * written, and each of its documents is sent again on its own, so each gets its own answer or error. When its
 * connection is lost every document's outcome is unknown, and each caller is told so.
 */
import type { Pool } from 'pg';

/**
 * Combined statements in flight at once: two keep two PostgreSQL backends busy (this machine has two cores), and a
 * third write already waits. Measured against one lane and against no combining (docs/benchmarks.md, tenth session).
 */
const LANES = 2;
/** At most this many documents share one statement; more wait for the next. */
const MAX_DOCUMENTS = 32;
/**
 * A document that writes more rows than this (WriteBatch.rowCount) is sent at once, outside the lanes. Sent alone, a
 * write's own rows (shares, inbox items, event recipients) are written in parallel with the other writes' until it
 * waits for the member rows; in a combined statement they are written one after another by one backend. Measured with
 * add_expense into one group from 10 connections (docs/benchmarks.md, tenth session): combining wins at 4 members (23
 * rows per write), breaks even at 8 (47 rows) and loses at 12 (71 rows) and 20 (119 rows). Payments and their
 * transitions write 8-12 rows, create_group 5.
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

/** The batched writes in flight from this instance, and the documents waiting for a lane. */
export class GroupCommit {
  private readonly pool: Pool;
  private readonly lanes: number;
  private readonly waiting: Queued[] = [];
  private inFlight = 0;
  /** Statements sent with more than one document, and the documents they carried (for tests and the benchmark). */
  readonly stats = { combined: 0, documents: 0 };

  constructor(pool: Pool, lanes: number = LANES) {
    this.pool = pool;
    this.lanes = lanes;
  }

  /** How many documents wait for a lane. */
  queued(): number {
    return this.waiting.length;
  }

  /**
   * Applies one batch document (`kitty_apply_batch`'s answer: applied with the caller's inbox summary, or duplicate)
   * that writes `rows` rows (more than MAX_COMBINED_ROWS: sent at once, outside the lanes). Rejects with PostgreSQL's
   * error when its write was rolled back (SQLSTATE KB001: the guard no longer held), with NotSentError when no
   * connection was had, or with the driver's error when the connection was lost after sending.
   */
  apply(doc: Document, rows: number): Promise<Answer> {
    if (rows > MAX_COMBINED_ROWS) return this.one(doc);
    if (this.inFlight >= this.lanes) return new Promise((resolve, reject) => this.waiting.push({ doc, resolve, reject }));
    this.inFlight++;
    return this.one(doc).finally(() => this.next());
  }

  /** A lane came free: sends what waits (up to MAX_DOCUMENTS), or frees the lane when nothing does. */
  private next(): void {
    if (!this.waiting.length) {
      this.inFlight--;
      return;
    }
    const taken = this.waiting.splice(0, MAX_DOCUMENTS);
    void this.together(taken).finally(() => this.next());
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
      // One statement each, in order, so each gets its own answer (or its own error).
      for (const q of taken) await this.one(q.doc).then(q.resolve, q.reject);
      return;
    }
    this.stats.combined++;
    this.stats.documents += taken.length;
    taken.forEach((q, i) => q.resolve(answers[i]));
  }
}

const byPool = new WeakMap<Pool, GroupCommit>();

/** The group commit of `pool` (one per pool, so per process and database), made with `lanes` lanes on first use. */
export function groupCommitFor(pool: Pool, lanes?: number): GroupCommit {
  let g = byPool.get(pool);
  if (!g) byPool.set(pool, (g = new GroupCommit(pool, lanes)));
  return g;
}
