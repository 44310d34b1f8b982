/** Shared helpers for the ledger tests. */
import { expect } from 'vitest';
import { verifyLedger } from '../src/index.ts';
import type { Harness, TestAgent } from './harness.ts';

/** Creates a group owned by agents[0] and joins the others through one multi-use invite. */
export async function groupWith(h: Harness, agents: TestAgent[], currency = 'EUR', name = 'Trip'): Promise<string> {
  const g = await h.call(agents[0]!, 'create_group', { name, currency });
  const groupId = g.group.group_id as string;
  if (agents.length > 1) {
    const inv = await h.call(agents[0]!, 'create_invite', { group_id: groupId, max_uses: Math.min(50, agents.length - 1) });
    for (const a of agents.slice(1)) await h.call(a, 'join_group', { code: inv.invite.code });
  }
  return groupId;
}

/** Asserts every ledger invariant holds. */
export async function expectLedgerOk(h: Harness): Promise<void> {
  const r = await verifyLedger(h.services.prisma);
  expect(r.problems).toEqual([]);
  expect(r.ok).toBe(true);
}

export async function balancesOf(h: Harness, agent: TestAgent, groupId: string): Promise<Record<string, number>> {
  const b = await h.call(agent, 'get_balances', { group_id: groupId });
  return Object.fromEntries(b.members.map((m: { handle: string; balance_minor: number }) => [m.handle, m.balance_minor]));
}

/**
 * `agent`'s inbox as its rows count it (items unread; items requiring action and still open) and as its counters on the
 * agent row say (`counters`): the two must agree after every write.
 */
export async function inboxRowsAndCounters(h: Harness, agent: TestAgent) {
  const [row] = await h.services.prisma.$queryRaw<Array<{ unread: bigint; open: bigint; cu: number; cr: number }>>`
    SELECT count(*) FILTER (WHERE i.read_at IS NULL) AS unread,
           count(*) FILTER (WHERE i.requires_action AND i.resolved_at IS NULL) AS open,
           min(a.inbox_unread) AS cu, min(a.inbox_requires_action) AS cr
    FROM agents a LEFT JOIN inbox_items i ON i.agent_id = a.id WHERE a.id = ${agent.agentId}::uuid`;
  return { rows: { unread: Number(row!.unread), open: Number(row!.open) }, counters: { unread: row!.cu, open: row!.cr } };
}
