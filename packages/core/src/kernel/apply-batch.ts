/**
 * Sends a batched write to the database: `kitty_apply_batch_quiet` with the batch's document (write-batch.ts), one
 * statement and one transaction, then the wake-ups after its commit (wakes.ts), and the caller's inbox summary for the
 * answer (caller-summary.ts).
 */
import type { Pool } from 'pg';
import type { InboxSummary, InboxSummarySource } from './context.ts';
import { finishSummary } from './inbox-calls.ts';
import { finishCallerSummary, planCallerSummary, summaryKept, type KeptCounts } from './caller-summary.ts';
import { wakeSenderFor } from './wakes.ts';
import { outcomeUnknownError } from './errors.ts';
import { groupCommitFor, isRolledBack, NotSentError } from './group-commit.ts';
import type { BatchIdempotency, WriteBatch } from './write-batch.ts';

/** SQLSTATE raised by kitty_apply_batch when the guard no longer holds. */
const STALE_SQLSTATE = 'KB001';
/** SQLSTATE of a transaction PostgreSQL rolled back to break a deadlock (deadlock_detected). */
const DEADLOCK_SQLSTATE = '40P01';

/** The guard no longer held when the batch reached the database: nothing was written; read and decide again. */
export class StaleBatchError extends Error {
  constructor(cause: unknown) {
    super('the state this write was decided on changed before it was written', { cause });
  }
}

/** 'applied' carries the caller's inbox summary after the write (null: nothing unread or to do; only with an idempotency record). */
export type BatchOutcome =
  { status: 'applied'; inbox: InboxSummary | null } | { status: 'duplicate'; request_hash: string; response: unknown };

/** What the statement answers: 'applied' with the summary it read, or the caller's counts when the cached one holds. */
type StatementOutcome =
  { status: 'applied'; inbox: InboxSummary | null; inbox_kept?: KeptCounts } | Exclude<BatchOutcome, { status: 'applied' }>;

/**
 * Writes `batch` (and `idempotency`, when given) in one statement, i.e. one transaction and one
 * round trip, shared with the writes into its group that queued behind one in flight
 * (kernel/group-commit.ts). Returns 'applied', or 'duplicate' with the stored record when the
 * idempotency key was already stored (nothing else was written). Throws StaleBatchError when the
 * guard no longer held or PostgreSQL broke a deadlock by rolling it back (nothing written); other
 * PostgreSQL errors as pg reports them (also nothing written); the INTERNAL outcome-unknown error
 * (details.outcome "unknown") when the connection was lost after the statement was sent.
 */
export async function applyBatch(
  pool: Pool,
  batch: WriteBatch,
  idempotency?: BatchIdempotency,
  summaries?: InboxSummarySource,
): Promise<BatchOutcome> {
  const caller = idempotency?.agent_id;
  const plan = caller ? planCallerSummary(summaries, caller, batch.inboxChangeOf(caller)) : undefined;
  const doc = batch.toDocument(idempotency);
  // The caller's summary answered from the cache, or the cached one brought up to date (kernel/caller-summary.ts).
  if (plan?.cached !== undefined) doc.summary_cached = true;
  else if (plan?.base) doc.summary_kept = summaryKept(plan.base);
  let outcome: StatementOutcome;
  try {
    // kitty_apply_batch with its notifications kept out of the write's commit; sent right after it (kernel/wakes.ts).
    // Sent with the other writes that queued while its group or both statements were busy (kernel/group-commit.ts).
    outcome = (await groupCommitFor(pool).apply(doc, batch.rowCount())) as StatementOutcome;
  } catch (e) {
    if (e instanceof NotSentError) throw e.cause; // nothing was sent: the pool's error (the database unavailable, say)
    // A stale guard, or a deadlock (PostgreSQL rolled this write back to let another through): decided and sent again.
    const code = (e as { code?: unknown }).code;
    if (code === STALE_SQLSTATE || code === DEADLOCK_SQLSTATE) throw new StaleBatchError(e);
    // A PostgreSQL error (it carries a SQLSTATE) means the statement, and so the write, was rolled back.
    if (isRolledBack(e)) throw e;
    // The statement was sent and no answer came (connection lost): it may or may not have committed.
    throw outcomeUnknownError(e);
  }
  if (outcome.status !== 'applied') return outcome;
  batch.applied();
  // Sent after the commit, together with the wake-ups of writes committed at the same time (kernel/wakes.ts).
  const wakes = batch.wakes(caller);
  const here = await wakeSenderFor(pool).send(wakes);
  const { inbox_kept: kept, ...applied } = outcome;
  const read = finishSummary(applied.inbox);
  if (!caller || !plan) return { ...applied, inbox: read };
  const ownWakes = here && wakes.inbox.has(caller) ? 1 : 0;
  return { ...applied, inbox: finishCallerSummary(summaries, caller, plan, { read, kept }, ownWakes) };
}
