/**
 * The inbox summary on every successful response (issue 4): `{unread, requires_action, top}`
 * when the caller has unread items. Reads the counters maintained on the agent row (one
 * primary-key lookup); the top lines are fetched only when there is something unread.
 */
import type { Db } from '../context.ts';

export interface InboxSummary {
  unread: number;
  requires_action: number;
  /** Up to 3 short lines, most urgent first. */
  top: string[];
}

export async function inboxSummaryFor(db: Db, agentId: string): Promise<InboxSummary | undefined> {
  const agent = await db.agent.findUnique({ where: { id: agentId }, select: { inboxUnread: true, inboxRequiresAction: true } });
  if (!agent || (agent.inboxUnread <= 0 && agent.inboxRequiresAction <= 0)) return undefined;
  const items = await db.inboxItem.findMany({
    where: { agentId, OR: [{ readAt: null }, { requiresAction: true, resolvedAt: null }] },
    orderBy: [{ requiresAction: 'desc' }, { priority: 'asc' }, { createdAt: 'desc' }],
    take: 3,
    select: { text: true },
  });
  return { unread: agent.inboxUnread, requires_action: agent.inboxRequiresAction, top: items.map((i) => i.text) };
}
