/**
 * The caller's inbox summary on a batched write's answer. kitty_apply_batch reads it in the write's own statement; a
 * write that cannot change the caller's inbox (no counter of the caller's, no resolved items: `WriteBatch.leavesInboxOf`)
 * may instead answer with the summary the instance has cached, and the statement skips the read (`summary_cached`,
 * migration 20261126150000_apply_batch_cached_summary). A summary the statement did read is offered back to the
 * cache, under the same rule as any read: stored only if no notification about the caller arrived since just before
 * the statement was sent.
 */
import type { InboxSummary, InboxSummarySource } from './context.ts';

/** How one batched write gets its caller's summary: from the cache (`cached`), or read by the statement (`mark`). */
export interface CallerSummaryPlan {
  /** The cached summary to answer with (null: nothing unread or to do); undefined: the statement reads it. */
  cached: InboxSummary | null | undefined;
  /** The cache's mark taken before the statement, when the statement reads it. */
  mark: unknown;
}

/** Decided before the statement is sent: the cached summary when `untouched` (the write cannot change it) and cached. */
export function planCallerSummary(source: InboxSummarySource | undefined, agentId: string, untouched: boolean): CallerSummaryPlan {
  const cached = untouched ? source?.peek?.(agentId) : undefined;
  return { cached, mark: cached === undefined ? source?.mark?.(agentId) : undefined };
}

/** The summary for the answer: the cached one, or the one the statement read (then offered to the cache). */
export function finishCallerSummary(
  source: InboxSummarySource | undefined,
  agentId: string,
  plan: CallerSummaryPlan,
  read: InboxSummary | null,
): InboxSummary | null {
  if (plan.cached !== undefined) return plan.cached;
  if (plan.mark !== undefined) source?.remember?.(agentId, read, plan.mark);
  return read;
}
