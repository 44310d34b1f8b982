/**
 * The caller's inbox summary on a batched write's answer. kitty_apply_batch reads it in the write's own statement;
 * two kinds of write skip that read:
 * - a write that cannot change the caller's inbox (`WriteBatch.inboxChangeOf` 'none') answers with the summary the
 *   instance has cached, and the statement reads nothing (`summary_cached`, migration
 *   20261126150000_apply_batch_cached_summary);
 * - a write whose only change to it is resolving the caller's own items ('resolves': a payee confirming a payment)
 *   sends the cached summary's counts and top item ids (`summary_kept`, migration
 *   20261128000000_apply_batch_summary_kept); when no resolved item is among the top ones and the caller's counters
 *   held exactly the cached counts, the statement answers only the counts after the write (`inbox_kept`), and the
 *   answer is the cached summary with those counts (its top items are still the top items). Otherwise it reads it.
 * A summary the statement read or brought up to date is offered back to the cache, under the same rule as any read:
 * stored only if no notification about the caller arrived since just before the statement was sent, other than the
 * write's own wake-up delivered to this process.
 */
import type { InboxSummary, InboxSummarySource } from './context.ts';

/** How a batch can change an agent's inbox summary (`WriteBatch.inboxChangeOf`). */
export type InboxChange = 'none' | 'resolves' | 'other';

/** How one batched write gets its caller's summary: from the cache (`cached`), or from its statement (`mark`, `base`). */
export interface CallerSummaryPlan {
  /** The cached summary to answer with (null: nothing unread or to do); undefined: the statement reads it. */
  cached: InboxSummary | null | undefined;
  /** The cached summary the statement may bring up to date instead of reading it (`summary_kept`). */
  base: InboxSummary | undefined;
  /** The cache's mark taken before the statement, when the statement reads it. */
  mark: unknown;
}

/** The counts the statement answers in place of a summary when the cached one still holds (`inbox_kept`). */
export interface KeptCounts {
  unread: number;
  requires_action: number;
}

/** Decided before the statement is sent, from how the batch changes the caller's inbox (`change`). */
export function planCallerSummary(source: InboxSummarySource | undefined, agentId: string, change: InboxChange): CallerSummaryPlan {
  if (change === 'none') {
    const cached = source?.peek?.(agentId);
    if (cached !== undefined) return { cached, base: undefined, mark: undefined };
  }
  const mark = source?.mark?.(agentId);
  // A cached "nothing unread or to do" cannot be what a write that resolves an item of the caller's changes: read it.
  const base = change === 'resolves' && mark !== undefined ? (source?.peek?.(agentId, 'base') ?? undefined) : undefined;
  return { cached: undefined, base, mark };
}

/** The document's `summary_kept`: the base summary's counts and its top item ids. */
export function summaryKept(base: InboxSummary): KeptCounts & { top: string[] } {
  return { unread: base.unread, requires_action: base.requires_action, top: base.top_items.map((i) => i.item_id) };
}

/**
 * The summary for the answer: the cached one; the base with the counts the statement answered (`kept`); or the one
 * the statement read (`read`). The last two are offered to the cache; `ownWakes` is how many notifications about the
 * caller this write delivered to this process after its commit (0 when they went through PostgreSQL).
 */
export function finishCallerSummary(
  source: InboxSummarySource | undefined,
  agentId: string,
  plan: CallerSummaryPlan,
  answer: { read: InboxSummary | null; kept: KeptCounts | undefined },
  ownWakes: number,
): InboxSummary | null {
  if (plan.cached !== undefined) return plan.cached;
  const { base } = plan;
  const value = answer.kept !== undefined && base !== undefined ? withCounts(base, answer.kept) : answer.read;
  if (plan.mark !== undefined) source?.remember?.(agentId, value, plan.mark, { ownWakes, kept: answer.kept !== undefined });
  return value;
}

/** `base` with new counts (null when both are zero: nothing unread or to do). */
function withCounts(base: InboxSummary, counts: KeptCounts): InboxSummary | null {
  if (counts.unread <= 0 && counts.requires_action <= 0) return null;
  return { ...base, unread: counts.unread, requires_action: counts.requires_action };
}
