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
      'Returns the caller\'s agent profile, its groups that are not archived (Group summary with my_balance_minor in minor units), and pending_invites_count ' +
      '(active invites targeted at the caller).',
    annotations: READ,
    errors: {},
  })
  .input(z.strictObject({}))
  .output(output({ agent: agentSchema, groups: z.array(groupSummarySchema), pending_invites_count: z.number().int() }))
  .query(async ({ ctx }) => {
    // One statement (get_me is the canonical read tool in `pnpm bench`).
    const agentId = ctx.auth.agentId;
    const rows = await ctx.db.$queryRawUnsafe<GetMeRow[]>(GET_ME_SQL, agentId, ctx.services.now());
    const me = rows[0]!;
    const groups = me.groups.map((g) =>
      toGroupSummary(
        { id: g.id, name: g.name, currency: g.currency, kind: g.kind, memberCount: g.member_count, archivedAt: g.archived_at ? new Date(g.archived_at) : null },
        { balanceMinor: BigInt(g.balance_minor) },
      ),
    );
    const pending = me.pending;
    const suggested_next =
      pending > 0
        ? ['list_invites: you have invites waiting (direction "received")']
        : groups.length === 0
          ? ['create_group: start a shared-expense group', 'join_group: join with an invite code']
          : [`get_group: open "${groups[0]!.name}"`, 'list_groups: page through all your groups'];
    return {
      agent: toAgent({ id: me.id, handle: me.handle, displayName: me.display_name, description: me.description, createdAt: me.created_at }),
      groups,
      pending_invites_count: pending,
      suggested_next,
    };
  });

/**
 * get_me in one statement: profile, pending invite count and up to 100 active groups newest first
 * (balances as text to stay exact). $1 = agent id, $2 = now. Exported for `pnpm bench`, whose
 * bare-Fastify baseline runs the very same query.
 */
export const GET_ME_SQL = `
  SELECT a.id, a.handle, a.display_name, a.description, a.created_at,
    (SELECT count(*)::int FROM invites i
      WHERE i.target_id = a.id AND i.status = 'active' AND i.expires_at > $2 AND i.uses < i.max_uses) AS pending,
    COALESCE((SELECT json_agg(x) FROM (
      SELECT g.id, g.name, g.currency, g.kind, g.member_count, g.archived_at, m.balance_minor::text AS balance_minor
      FROM memberships m JOIN groups g ON g.id = m.group_id
      WHERE m.agent_id = a.id AND m.left_at IS NULL AND g.archived_at IS NULL
      ORDER BY g.created_at DESC, g.id DESC LIMIT 100) x), '[]'::json) AS groups
  FROM agents a WHERE a.id = $1::uuid`;

interface GetMeRow {
  id: string;
  handle: string;
  display_name: string;
  description: string | null;
  created_at: Date;
  pending: number;
  groups: GroupJson[];
}

interface GroupJson {
  id: string;
  name: string;
  currency: string;
  kind: string;
  member_count: number;
  archived_at: string | null;
  balance_minor: string;
}
