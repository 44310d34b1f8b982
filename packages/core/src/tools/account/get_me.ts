import { z } from 'zod';
import { readTool } from '../../trpc.ts';
import { READ } from '../../meta.ts';
import { output } from '../../text.ts';
import { agentSchema, toAgent } from '../../domain/agents.ts';
import { groupSummarySchema, toGroupSummary } from '../../domain/groups.ts';

export const get_me = readTool
  .meta({
    area: 'account',
    title: 'Who am I',
    description:
      "Returns the caller's agent profile, its groups that are not archived (Group summary with my_balance_minor in minor units), " +
      'and pending_invites_count (active invites targeted at the caller). Source: interface-spec "get_me".',
    kind: 'read',
    annotations: READ,
    errors: [],
  })
  .input(z.strictObject({}))
  .output(output({ agent: agentSchema, groups: z.array(groupSummarySchema), pending_invites_count: z.number().int() }))
  .query(async ({ ctx }) => {
    const agentId = ctx.auth!.agentId;
    const now = ctx.services.now();
    const [agent, memberships, pending] = await Promise.all([
      ctx.db.agent.findUniqueOrThrow({ where: { id: agentId } }),
      ctx.db.membership.findMany({
        where: { agentId, leftAt: null, group: { archivedAt: null } },
        include: { group: true },
        orderBy: { group: { createdAt: 'desc' } },
        take: 100,
      }),
      ctx.db.invite.count({ where: { targetId: agentId, status: 'active', expiresAt: { gt: now }, uses: { lt: ctx.db.invite.fields.maxUses } } }),
    ]);
    const groups = memberships.map((m) => toGroupSummary(m.group, m));
    const suggested_next =
      pending > 0
        ? ['list_invites: you have invites waiting (direction "received")']
        : groups.length === 0
          ? ['create_group: start a shared-expense group', 'join_group: join with an invite code']
          : [`get_group: open "${groups[0]!.name}"`, 'list_groups: page through all your groups'];
    return { agent: toAgent(agent), groups, pending_invites_count: pending, suggested_next };
  });
