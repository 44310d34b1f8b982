/**
 * Group commit for batched writes. Each batched write is one statement and one transaction, paying its own COMMIT
 * (with its WAL flush), round trip and statement start, and writes into one group hold its member rows until their
 * COMMIT has been flushed, one after another. So an instance keeps writes in lanes: one lane per group (its writes
 * serialise on its member rows anyway) with one write in flight, and one lane of LANES in flight for writes into no
 * existing group (create_group). A write whose lane is busy queues, and a freed lane sends every write waiting in it
 * (up to MAX_DOCUMENTS) together: one statement (`kitty_apply_batches_quiet`, migration 20261126200000_apply_batches),
 * one transaction, one COMMIT. The documents run in arrival order, each seeing the ones before it, and each is answered
 * as it would have been alone. With its lane free a write leaves at once, so a quiet group adds no wait. Writes
 * into different groups are not combined: measured, that serialised work two backends did side by side
 * (docs/benchmarks.md, tenth session).
 *
 * When a combined statement fails with a PostgreSQL error (a stale guard, KB001, or a deadlock) nothing of it was
 * written, and each of its documents is sent again on its own, so each gets its own answer or error. When its
 * connection is lost every document's outcome is unknown, and each caller is told so.
 */
import type { Pool } from 'pg';

/** Statements in flight at once for writes into no existing group (create_group): nothing of theirs is contended. */
const LANES = 2;
/** At most this many documents share one statement; more wait for the next. */
const MAX_DOCUMENTS = 32;
/**
 * A document that writes more rows than this (WriteBatch.rowCount) is sent at once, outside its lane. Sent alone, a
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

/** One lane: statements in flight and the documents waiting. */
interface Lane {
  inFlight: number;
  waiting: Queued[];
}

/** The batched writes in flight from this instance, by lane, and the documents waiting in each. */
export class GroupCommit {
  private readonly pool: Pool;
  private readonly lanes = new Map<string, Lane>();
  /** Statements sent with more than one document, and the documents they carried (read by the tests). */
  readonly stats = { combined: 0, documents: 0 };

  constructor(pool: Pool) {
    this.pool = pool;
  }

  /** How many documents wait in `groupId`'s lane (no argument: the lane of writes into no existing group). */
  queued(groupId?: string): number {
    return this.lanes.get(groupId ?? '')?.waiting.length ?? 0;
  }

  /**
   * Applies one batch document (`kitty_apply_batch`'s answer: applied with the caller's inbox summary, or duplicate)
   * that writes `rows` rows (more than MAX_COMBINED_ROWS: sent at once, outside its lane). Rejects with PostgreSQL's
   * error when its write was rolled back (SQLSTATE KB001: the guard no longer held), with NotSentError when no
   * connection was had, or with the driver's error when the connection was lost after sending.
   */
  apply(doc: Document, rows: number): Promise<Answer> {
    if (rows > MAX_COMBINED_ROWS) return this.one(doc);
    const key = typeof doc.group_id === 'string' ? doc.group_id : '';
    let lane = this.lanes.get(key);
    if (!lane) this.lanes.set(key, (lane = { inFlight: 0, waiting: [] }));
    if (lane.inFlight >= (key ? 1 : LANES)) {
      const waiting = lane.waiting;
      return new Promise((resolve, reject) => waiting.push({ doc, resolve, reject }));
    }
    lane.inFlight++;
    return this.one(doc).finally(() => this.next(key));
  }

  /** A statement of lane `key` completed: sends what waits there (up to MAX_DOCUMENTS), or frees it when nothing does. */
  private next(key: string): void {
    const lane = this.lanes.get(key)!;
    if (!lane.waiting.length) {
      if (--lane.inFlight === 0) this.lanes.delete(key);
      return;
    }
    const taken = lane.waiting.splice(0, MAX_DOCUMENTS);
    void this.together(taken).finally(() => this.next(key));
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

/** The group commit of `pool` (one per pool, so per process and database). */
export function groupCommitFor(pool: Pool): GroupCommit {
  let g = byPool.get(pool);
  if (!g) byPool.set(pool, (g = new GroupCommit(pool)));
  return g;
}
