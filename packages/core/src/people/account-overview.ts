/** The account page's overview (read-only): per agent, its groups with balances and inbox counts; one group's charts. */
import { z } from 'zod';
import { uuid } from '../kernel/text.ts';
import { formatMinor, toNumber } from '../kernel/money.ts';
import { toGroupSummary } from '../access/groups.ts';
import { personProcedure } from './account-trpc.ts';
import { ownAgent } from './account-scope.ts';
import { spendingCharts } from './stats.ts';

export const overviewProcedures = {
  /** Read-only overview: per agent, its groups with balances and pending payments, and inbox counts. */
  overview: personProcedure.query(async ({ ctx }) => {
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
  }),

  /** Spending of one group of one of this person's agents, by month and by category (the overview's charts). */
  groupStats: personProcedure.input(z.strictObject({ agent_id: uuid, group_id: uuid })).query(async ({ ctx, input }) => {
    const db = ctx.services.prisma;
    const agent = await ownAgent(db, ctx.session.humanId, input.agent_id);
    return spendingCharts(db, agent.id, input.group_id);
  }),
};
