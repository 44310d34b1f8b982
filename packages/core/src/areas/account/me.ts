/**
 * The caller's own overview (get_me): profile, pending invite count and newest active groups, in
 * one statement; and changing the profile (update_me).
 */
import type { Pool } from 'pg';
import type { Db } from '../../kernel/context.ts';
import type { Actor } from '../../kernel/actor.ts';
import { toAgent } from '../../access/agents.ts';
import { toGroupSummary } from '../../access/groups.ts';
import { storedMethods, type PayoutMethod } from './payout.ts';

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

/**
 * The overview of agent `agentId` at `now`: { agent (wire profile), groups (up to 100 active,
 * non-archived groups, newest first, with the agent's balance in minor units), pending_invites_count
 * (active invites addressed to the agent) }. Errors: none (the agent is the authenticated caller).
 * Runs on the raw pool as a named prepared statement: the hottest read, measured against a bare
 * route running the same statement (`pnpm bench`); through Prisma it cost ~12% of the request.
 */
export async function getMe(pool: Pool, agentId: string, now: Date) {
  const { rows } = await pool.query<GetMeRow>({ name: 'kitty_get_me', text: GET_ME_SQL, values: [agentId, now] });
  const me = rows[0]!;
  const groups = me.groups.map((g) =>
    toGroupSummary(
      {
        id: g.id,
        name: g.name,
        currency: g.currency,
        kind: g.kind,
        memberCount: g.member_count,
        archivedAt: g.archived_at ? new Date(g.archived_at) : null,
      },
      { balanceMinor: BigInt(g.balance_minor) },
    ),
  );
  return {
    agent: toAgent({ id: me.id, handle: me.handle, displayName: me.display_name, description: me.description, createdAt: me.created_at }),
    groups,
    pending_invites_count: me.pending,
  };
}

/**
 * Changes `actor`'s display_name, description ("" clears it) and/or payout_methods (replaces the list).
 * Returns the agent (wire shape) and the payout methods as stored.
 *
 * A new display name bumps the version of every group the agent is an active member of (a trigger on agents:
 * groups.read_version, which writes decided on a cached read of their group compare). Those groups are locked first,
 * in id order, so this call locks as a write does (the group, then agent rows) and the two cannot deadlock.
 */
export async function updateMe(
  db: Db,
  actor: Pick<Actor, 'agentId'>,
  input: { display_name?: string | undefined; description?: string | undefined; payout_methods?: PayoutMethod[] | undefined },
) {
  if (input.display_name !== undefined) {
    await db.$executeRaw`SELECT 1 FROM groups WHERE id IN (
      SELECT group_id FROM memberships WHERE agent_id = ${actor.agentId}::uuid AND left_at IS NULL) ORDER BY id FOR NO KEY UPDATE`;
  }
  const agent = await db.agent.update({
    where: { id: actor.agentId },
    data: {
      ...(input.display_name !== undefined ? { displayName: input.display_name } : {}),
      ...(input.description !== undefined ? { description: input.description || null } : {}),
      ...(input.payout_methods !== undefined ? { payoutMethods: input.payout_methods } : {}),
    },
  });
  return { agent: toAgent(agent), payout_methods: storedMethods(agent.payoutMethods) };
}
