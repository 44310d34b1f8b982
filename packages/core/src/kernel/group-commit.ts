/**
 * Group commit for batched writes. Each batched write is one statement and one transaction, paying its own COMMIT
 * (with its WAL flush), round trip, statement start and per-transaction work in PostgreSQL (locks on every relation
 * and index the function touches, plan checks, snapshots): measured, a record_payment costs its backend 650-720 µs per
 * transaction for 290 µs of the function's own work (docs/benchmarks.md, twenty-third session). So an instance keeps
 * at most STATEMENTS_IN_FLIGHT batch statements in flight, and at most one per group (writes into one group serialise
 * on its member rows anyway). A write that cannot leave at once (its group has a statement in flight, or every slot
 * is taken) waits; a freed slot sends every waiting write whose group is free (up to MAX_DOCUMENTS, in arrival order,
 * of any groups) together: one statement (`kitty_apply_batches_quiet`, migration 20261126200000_apply_batches), one
 * transaction, one COMMIT. The documents run in arrival order, each seeing the ones before it, and each is answered as
 * it would have been alone; that statement first locks every row its documents lock, class by class in the order a
 * single write takes them, so documents of different groups cannot deadlock with each other or with another writer.
 * The last class, the agent rows whose inbox counters change, it locks and updates after its last document
 * (migration 20261128130000_apply_batches_counters_last): an agent who is a recipient in many groups is then not held
 * for the whole statement, and the instance's statements in flight do not wait for each other on that row.
 * With a slot and its group free a write leaves at once, so a quiet instance adds no wait. Measured (docs/benchmarks.md,
 * twenty-fourth session): record_payment from 10 connections into 10 groups, 0.56 → 0.81 of its HTTP ceiling once
 * writes of different groups share statements instead of each paying its own transaction.
 *
 * When a combined statement fails with a PostgreSQL error (a stale guard, KB001, or a deadlock) nothing of it was
 * written, and each of its documents is sent again on its own, so each gets its own answer or error. When its
 * connection is lost every document's outcome is unknown, and each caller is told so.
 */
import type { Pool } from 'pg';

/**
 * Batch statements one instance keeps in flight. Two keep PostgreSQL working while the instance decides the next
 * writes, and the writes that arrive meanwhile gather into the next statements. One instance's Node thread decides at
 * most a few thousand writes a second (~0.3-0.5 ms each), and a statement of MAX_DOCUMENTS documents takes ~10 ms of
 * one backend, so two statements are never what limits an instance; more instances add their own two.
 */
const STATEMENTS_IN_FLIGHT = 2;
/**
 * A statement in flight this long (ms) gives its slot back: it waits for a lock (a long interactive write into its
 * group, say), and the writes of other groups must not wait with it. Hot statements take 1-30 ms under load.
 */
const SLOW_STATEMENT_MS = 100;
/** At most this many documents share one statement; more wait for the next. */
const MAX_DOCUMENTS = 32;
/**
 * A document that writes more rows than this (WriteBatch.rowCount) is sent at once, on its own. Sent alone, a
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
  /** The document's group ('' for a write into no existing group: create_group). */
  group: string;
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

/**
 * `value` as a jsonb parameter in PostgreSQL's binary format (jsonb_recv: the version byte 1, then the JSON text in
 * UTF-8), which pg sends as it is. The JSON text is garbage as soon as it is encoded. Sent as a string (2-32 KB, two
 * bytes a character once it holds a `€`), pg held it until the statement's answer, and under load many of those strings
 * outlived a young-generation collection and were moved to the old generation: with record_payment from 10
 * connections the old generation grew 1.01 MB per young collection, 0.27 MB once sent as bytes (docs/benchmarks.md,
 * twenty-sixth session).
 */
function jsonbParameter(value: unknown): Buffer {
  const text = JSON.stringify(value);
  const parameter = Buffer.allocUnsafe(1 + Buffer.byteLength(text));
  parameter[0] = 1;
  parameter.write(text, 1);
  return parameter;
}

/** The batched writes in flight from this instance and the documents waiting for a statement. */
export class GroupCommit {
  private readonly pool: Pool;
  private readonly statementsInFlight: number;
  /** Statements in flight now (MAX_COMBINED_ROWS writes sent at once not counted). */
  private inFlight = 0;
  /** Groups with a statement in flight. */
  private readonly busy = new Set<string>();
  /** Documents waiting, in arrival order. */
  private waiting: Queued[] = [];
  /** Statements sent with more than one document, and the documents they carried (read by the tests). */
  readonly stats = { combined: 0, documents: 0 };

  constructor(pool: Pool, statementsInFlight = STATEMENTS_IN_FLIGHT) {
    this.pool = pool;
    this.statementsInFlight = statementsInFlight;
  }

  /** How many documents wait for `groupId` (no argument: writes into no existing group). */
  queued(groupId?: string): number {
    const group = groupId ?? '';
    return this.waiting.filter((q) => q.group === group).length;
  }

  /**
   * Applies one batch document (`kitty_apply_batch`'s answer: applied with the caller's inbox summary, or duplicate)
   * that writes `rows` rows (more than MAX_COMBINED_ROWS: sent at once, on its own). Rejects with PostgreSQL's
   * error when its write was rolled back (SQLSTATE KB001: the guard no longer held), with NotSentError when no
   * connection was had, or with the driver's error when the connection was lost after sending.
   */
  apply(doc: Document, rows: number): Promise<Answer> {
    if (rows > MAX_COMBINED_ROWS) return this.one(doc);
    const group = typeof doc.group_id === 'string' ? doc.group_id : '';
    if (this.inFlight < this.statementsInFlight && (group === '' || !this.busy.has(group))) {
      const done = this.start([group]);
      return this.one(doc).finally(done);
    }
    return new Promise((resolve, reject) => this.waiting.push({ doc, group, resolve, reject }));
  }

  /**
   * A statement of `groups` starts: it takes a slot and its groups. Returns what to call when it completes: frees
   * them and sends what waits. A statement still in flight after SLOW_STATEMENT_MS (waiting for a lock another
   * transaction holds, say) gives its slot back, so the writes of other groups never wait behind it; its groups stay
   * busy until it completes.
   */
  private start(groups: string[]): () => void {
    this.inFlight++;
    for (const g of groups) if (g) this.busy.add(g);
    let holdsSlot = true;
    const slow = setTimeout(() => {
      holdsSlot = false;
      this.inFlight--;
      this.sendWaiting();
    }, SLOW_STATEMENT_MS);
    slow.unref();
    return () => {
      clearTimeout(slow);
      if (holdsSlot) this.inFlight--;
      for (const g of groups) this.busy.delete(g);
      this.sendWaiting();
    };
  }

  /**
   * While a slot is free, sends the waiting documents whose groups have no statement in flight (up to MAX_DOCUMENTS,
   * in arrival order) in one statement. A document whose group is busy stays, and so do the later ones of its group.
   */
  private sendWaiting(): void {
    while (this.inFlight < this.statementsInFlight && this.waiting.length) {
      const taken: Queued[] = [];
      const kept: Queued[] = [];
      for (const q of this.waiting) {
        if (taken.length < MAX_DOCUMENTS && (q.group === '' || !this.busy.has(q.group))) taken.push(q);
        else kept.push(q);
      }
      if (!taken.length) return;
      this.waiting = kept;
      const done = this.start([...new Set(taken.map((q) => q.group))]);
      void this.together(taken, done);
    }
  }

  private one(doc: Document): Promise<Answer> {
    return query<Answer>(this.pool, 'kitty_apply_batch', 'SELECT kitty_apply_batch_quiet($1::jsonb) AS answer', [jsonbParameter(doc)]);
  }

  /**
   * Sends `taken` in one statement; on a rollback, each again on its own. Settles every one of them; never rejects.
   * Calls `done` once its statements completed: when they succeeded, before the answers are handed out, so the writes
   * that waited meanwhile are on their way to PostgreSQL while this process turns these answers into responses.
   */
  private async together(taken: Queued[], done: () => void): Promise<void> {
    if (taken.length === 1) {
      const q = taken[0]!;
      await this.one(q.doc).then(
        (answer) => {
          done();
          q.resolve(answer);
        },
        (e: unknown) => {
          done();
          q.reject(e);
        },
      );
      return;
    }
    let answers: Answer[];
    try {
      answers = await query<Answer[]>(this.pool, 'kitty_apply_batches', 'SELECT kitty_apply_batches_quiet($1::jsonb) AS answer', [
        jsonbParameter(taken.map((q) => q.doc)),
      ]);
    } catch (e) {
      try {
        // Rolled back, or never sent: nothing was written.
        if (!isRolledBack(e) && !(e instanceof NotSentError)) {
          for (const q of taken) q.reject(e);
          return;
        }
        // One statement each, in order, so each gets its own answer (or its own error).
        for (const q of taken) await this.one(q.doc).then(q.resolve, q.reject);
        return;
      } finally {
        done();
      }
    }
    done();
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
