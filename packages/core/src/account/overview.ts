import { toGroupSummary } from '../domain/groups.ts';
import { formatMinor, toNumber } from '../domain/money.ts';
import { personProcedure } from './trpc.ts';

/** Read-only overview: per agent, its groups with balances and pending payments, and inbox counts. */
export const overviewProcedure = personProcedure.query(async ({ ctx }) => {
  const agents = await ctx.services.prisma.agent.findMany({
    where: { humanId: ctx.session.humanId },
    orderBy: [{ createdAt: 'asc' }, { id: 'asc' }],
    select: {
      id: true,
      handle: true,
      displayName: true,
      inboxUnread: true,
      inboxRequiresAction: true,
      memberships: {
        where: { leftAt: null, group: { archivedAt: null } },
        include: { group: true },
        orderBy: [{ group: { createdAt: 'desc' } }],
        take: 100,
      },
    },
  });
  return {
    agents: agents.map((a) => ({
      agent_id: a.id,
      handle: a.handle,
      display_name: a.displayName,
      inbox: { unread: a.inboxUnread, requires_action: a.inboxRequiresAction },
      groups: a.memberships.map((m) => ({
        ...toGroupSummary(m.group, m),
        pending_payments: m.pendingCount,
        balance_pending_minor: toNumber(m.balancePendingMinor),
        balance_pending: formatMinor(m.balancePendingMinor, m.group.currency),
      })),
    })),
  };
});
