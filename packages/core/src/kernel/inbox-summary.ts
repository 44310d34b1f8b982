/**
 * The inbox summary on every successful response (issue 4): `{unread, requires_action, top}`
 * when the caller has unread items or items requiring action, and `top_items` (the same items with
 * their ids and the one call that acts on each, kernel/inbox-calls.ts).
 *
 * One round trip (the SQL function kitty_inbox_summary, also called at the end of every batched
 * write so its answer needs no second read): the counters maintained on the agent row (primary key), and — only when they
 * are non-zero (CASE is evaluated lazily) — the top 3 lines: items still requiring action first
 * (by priority, then newest), then the newest unread items that never required action. An item
 * whose action was taken (a payment confirmed, an invite declined) drops out of `top`: its text
 * ("awaiting your confirmation") would no longer be true. Each half is served by its
 * own index (inbox_items (agent_id, requires_action, resolved_at) and (agent_id, read_at)), so
 * the cost does not grow with the number of read items. Measured in test/kernel/inbox-summary.test.ts:
 * with 5,000 read items, 2.1 ms/call for the former two Prisma queries (count-free but scanning
 * the agent's items), ≈0.6 ms now, about one primary-key read.
 */
import type { Db, InboxSummary } from './context.ts';
import { finishSummary } from './inbox-calls.ts';

export async function inboxSummaryFor(db: Db, agentId: string): Promise<InboxSummary | undefined> {
  const rows = await db.$queryRaw<
    Array<{ summary: Parameters<typeof finishSummary>[0] }>
  >`SELECT kitty_inbox_summary(${agentId}::uuid) AS summary`;
  return finishSummary(rows[0]?.summary ?? null) ?? undefined;
}
