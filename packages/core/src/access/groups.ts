/**
 * Group access and projections (interface-spec "Group summary", "Group detail", "Member").
 */
import { z } from 'zod';
import type { Pool } from 'pg';
import type { Db } from '../kernel/context.ts';
import { ToolError } from '../kernel/errors.ts';
import { uuid, timestamp, agentRef } from '../kernel/text.ts';
import { formatMinor, toNumber } from '../kernel/money.ts';
import { toAgentRef, AGENT_REF_SELECT } from './agents.ts';

export const groupSummarySchema = z.object({
  group_id: uuid,
  name: z.string(),
  currency: z.string(),
  kind: z.enum(['group', 'direct']),
  archived: z.boolean(),
  member_count: z.number().int(),
  my_balance_minor: z.number().int().optional().describe('Yours; positive = you are owed.'),
  my_balance: z.string().optional().describe('Formatted, e.g. "€12.34".'),
});
export const groupDetailSchema = groupSummarySchema.extend({
  description: z.string().nullable(),
  created_by: agentRef,
  created_at: timestamp,
  archived_at: timestamp.nullable(),
});
export const memberSchema = z.object({
  agent_id: uuid,
  handle: z.string(),
  display_name: z.string(),
  role: z.enum(['admin', 'member']),
  joined_at: timestamp,
  balance_minor: z.number().int().optional(),
  balance: z.string().optional(),
  balance_pending_minor: z.number().int().optional().describe('Change once pending payments are confirmed.'),
});

export interface GroupRow {
  id: string;
  name: string;
  description: string | null;
  currency: string;
  kind: string;
  memberCount: number;
  createdAt: Date;
  archivedAt: Date | null;
  createdById: string;
}
export interface MembershipRow {
  role: string;
  joinedAt: Date;
  leftAt: Date | null;
  balanceMinor: bigint;
  balancePendingMinor: bigint;
  pendingCount: number;
}

export function toGroupSummary(
  g: Pick<GroupRow, 'id' | 'name' | 'currency' | 'kind' | 'memberCount' | 'archivedAt'>,
  m?: Pick<MembershipRow, 'balanceMinor'> | null,
) {
  return {
    group_id: g.id,
    name: g.name,
    currency: g.currency,
    kind: g.kind as 'group' | 'direct',
    archived: g.archivedAt !== null,
    member_count: g.memberCount,
    ...(m ? { my_balance_minor: toNumber(m.balanceMinor), my_balance: formatMinor(m.balanceMinor, g.currency) } : {}),
  };
}

export function toGroupDetail(
  g: GroupRow & { createdBy: { id: string; handle: string; displayName: string } },
  m?: Pick<MembershipRow, 'balanceMinor'> | null,
) {
  return {
    ...toGroupSummary(g, m),
    description: g.description,
    created_by: toAgentRef(g.createdBy),
    created_at: g.createdAt.toISOString(),
    archived_at: g.archivedAt?.toISOString() ?? null,
  };
}

export const GROUP_DETAIL_INCLUDE = { createdBy: { select: AGENT_REF_SELECT } } as const;

interface GroupMembershipRow {
  id: string;
  name: string;
  description: string | null;
  currency: string;
  kind: string;
  direct_key: string | null;
  members_can_edit: boolean;
  member_count: number;
  created_by: string;
  created_at: Date;
  updated_at: Date;
  archived_at: Date | null;
  cb_handle: string;
  cb_display_name: string;
  role: string | null;
  joined_at: Date | null;
  left_at: Date | null;
  /** Minor units as text (exact; the raw pool and Prisma would otherwise type int8 differently). */
  balance_minor: string | null;
  balance_pending_minor: string | null;
  pending_count: number | null;
}

/** The group (with its creator) and the caller's membership: $1 = group id, $2 = agent id. */
const GROUP_ACCESS_COLUMNS = `g.id, g.name, g.description, g.currency, g.kind, g.direct_key, g.members_can_edit, g.member_count,
       g.created_by, g.created_at, g.updated_at, g.archived_at,
       a.handle AS cb_handle, a.display_name AS cb_display_name,
       m.role, m.joined_at, m.left_at, m.balance_minor::text AS balance_minor,
       m.balance_pending_minor::text AS balance_pending_minor, m.pending_count`;
const GROUP_ACCESS_FROM = `FROM groups g
  JOIN agents a ON a.id = g.created_by
  LEFT JOIN memberships m ON m.group_id = g.id AND m.agent_id = $2::uuid
  WHERE g.id = $1::uuid`;
const GROUP_ACCESS_SQL = `SELECT ${GROUP_ACCESS_COLUMNS} ${GROUP_ACCESS_FROM}`;
/** The group access columns, the group's read version and its active members with their balances (minor units as
 * text) and payout methods, in joining order: what a batched write reads (readGroupForWrite). */
const GROUP_FOR_WRITE_COLUMNS = `${GROUP_ACCESS_COLUMNS}, g.read_version::text AS read_version,
  (SELECT coalesce(json_agg(json_build_object('id', ma.id, 'handle', ma.handle, 'display_name', ma.display_name,
            'balance_minor', mm.balance_minor::text, 'balance_pending_minor', mm.balance_pending_minor::text,
            'payout_methods', ma.payout_methods, 'payout_methods_md5', md5(ma.payout_methods::text))
          ORDER BY mm.joined_at, mm.agent_id), '[]'::json)
     FROM memberships mm JOIN agents ma ON ma.id = mm.agent_id
    WHERE mm.group_id = g.id AND mm.left_at IS NULL) AS members`;
const GROUP_FOR_WRITE_SQL = `SELECT ${GROUP_FOR_WRITE_COLUMNS} ${GROUP_ACCESS_FROM}`;

/**
 * Loads a group (with its creator) and the caller's active membership in one statement — this
 * runs at the start of almost every group tool, so it is a hot path (see `pnpm bench`).
 * Errors: NOT_FOUND (no such group), FORBIDDEN (caller is not an active member — interface-spec "Errors").
 * With `lock: true` the group row is first locked (FOR NO KEY UPDATE: writers of the group queue, while
 * inserts that merely reference the group — activities, invites — are not blocked), serialising writes that change
 * balances or membership of this group (write tools only). The lock is its own statement on
 * purpose: a joined `FOR UPDATE OF g` that waits re-reads only the group row after the wait
 * (EvalPlanQual), so the membership columns would be from before the concurrent write
 * (test/ledger/concurrency.test.ts "leave_group racing add_expense" catches exactly that).
 */
export async function requireMembership(db: Db, groupId: string, agentId: string, opts: { lock?: boolean } = {}) {
  if (opts.lock) await db.$executeRaw`SELECT 1 FROM groups WHERE id = ${groupId}::uuid FOR NO KEY UPDATE`;
  const rows = await db.$queryRawUnsafe<GroupMembershipRow[]>(GROUP_ACCESS_SQL, groupId, agentId);
  return groupAccess(rows[0], groupId, agentId);
}

/** The group and the caller's active membership from one row; NOT_FOUND / FORBIDDEN as requireMembership. */
function groupAccess(r: GroupMembershipRow | undefined, groupId: string, agentId: string) {
  if (!r) throw new ToolError('NOT_FOUND', `No group with group_id ${groupId}.`, { suggestedAction: 'list_groups shows your groups.' });
  if (r.role === null || r.left_at !== null) {
    throw new ToolError('FORBIDDEN', 'You are not a member of this group.', {
      details: { group_id: groupId },
      suggestedAction: 'Ask a member for an invite, then join_group.',
    });
  }
  const group = {
    id: r.id,
    name: r.name,
    description: r.description,
    currency: r.currency.trim(),
    kind: r.kind,
    directKey: r.direct_key,
    membersCanEdit: r.members_can_edit,
    memberCount: r.member_count,
    createdById: r.created_by,
    createdAt: r.created_at,
    updatedAt: r.updated_at,
    archivedAt: r.archived_at,
    createdBy: { id: r.created_by, handle: r.cb_handle, displayName: r.cb_display_name },
  };
  const membership = {
    groupId: r.id,
    agentId,
    role: r.role,
    joinedAt: r.joined_at!,
    leftAt: null,
    balanceMinor: BigInt(r.balance_minor!),
    balancePendingMinor: BigInt(r.balance_pending_minor!),
    pendingCount: r.pending_count!,
  };
  return { group, membership };
}

/**
 * The read half of a batched write (kernel/write-batch.ts): the group, the caller's active
 * membership and the group's active members (keyed by handle, in joining order), in one
 * statement on the raw pool, without a lock — the batch's guard re-checks what matters.
 * Balances are minor units (bigint). Errors: NOT_FOUND (no such group), FORBIDDEN (caller not
 * an active member).
 */
export async function readGroupForWrite(pool: Pool, groupId: string, agentId: string) {
  const { rows } = await pool.query<GroupForWriteRow>({
    name: 'kitty_read_group_for_write',
    text: GROUP_FOR_WRITE_SQL,
    values: [groupId, agentId],
  });
  return groupForWrite(rows[0], groupId, agentId);
}

/** A row selected with GROUP_FOR_WRITE_COLUMNS. */
type GroupForWriteRow = GroupMembershipRow & {
  /** The group's read_version (bigint as text): what a write's guard compares when it decided on a cached read. */
  read_version: string;
  members: Array<{
    id: string;
    handle: string;
    display_name: string;
    balance_minor: string;
    balance_pending_minor: string;
    payout_methods: unknown;
    /** MD5 (hex) of the stored payout methods as text, null when none: what a write's guard compares (payout_methods). */
    payout_methods_md5: string | null;
  }>;
};

/** readGroupForWrite's answer from a row selected with GROUP_FOR_WRITE_COLUMNS (undefined: no such group → NOT_FOUND). */
function groupForWrite(r: GroupForWriteRow | undefined, groupId: string, agentId: string) {
  const access = groupAccess(r, groupId, agentId);
  const members = r!.members.map((x) => ({
    agentId: x.id,
    handle: x.handle,
    displayName: x.display_name,
    balanceMinor: BigInt(x.balance_minor),
    balancePendingMinor: BigInt(x.balance_pending_minor),
    /** As stored (JSON, null when none); `storedMethods` validates it. */
    payoutMethods: x.payout_methods,
    /** MD5 of the stored payout methods as PostgreSQL writes them as text (null when none), for a write's guard. */
    payoutMethodsMd5: x.payout_methods_md5,
  }));
  return {
    ...access,
    /** The group's version as read (bigint as text; groups.read_version, bumped by triggers). */
    readVersion: r!.read_version,
    /** Active members by handle, in joining order. */
    members: new Map(members.map((x) => [x.handle, x])),
    /** The same members as agent references by id (to answer without loading agents). */
    refs: new Map(members.map((x) => [x.agentId, { id: x.agentId, handle: x.handle, displayName: x.displayName }])),
  };
}

/** A group and the caller's active membership in it, as `requireMembership` read them. */
export type GroupAccess = Awaited<ReturnType<typeof requireMembership>>;

/** Refuses writes to archived groups (GROUP_ARCHIVED, 409). */
export function assertNotArchived(group: { id: string; archivedAt: Date | null }): void {
  if (group.archivedAt) {
    throw new ToolError('GROUP_ARCHIVED', 'This group is archived: it is read-only for good.', { details: { group_id: group.id } });
  }
}

/** Requires role admin (FORBIDDEN otherwise). */
export function assertAdmin(membership: { role: string }, what: string): void {
  if (membership.role !== 'admin')
    throw new ToolError('FORBIDDEN', `Only a group admin can ${what}.`, { details: { required_role: 'admin' } });
}

/**
 * Refuses any booking (expense, payment, import, edit, delete, restore) in a direct ledger the
 * other agent has not accepted yet (it then has one member): nobody may put a debt on an agent who
 * has not agreed to share that ledger (our rule). DIRECT_LEDGER_NOT_ACCEPTED (409) names the agent.
 */
export async function assertLedgerAccepted(
  db: Db,
  group: { id: string; kind: string; memberCount: number; directKey: string | null; createdById: string },
  opts: { messaging?: boolean } = {},
): Promise<void> {
  if (group.kind !== 'direct' || group.memberCount >= 2) return;
  // direct_key = "<agent id>:<agent id>:<currency>" (":archived:<id>" appended once archived).
  const otherId = (group.directKey ?? '')
    .split(':')
    .slice(0, 2)
    .find((id) => id !== group.createdById);
  const other = otherId ? await db.agent.findUnique({ where: { id: otherId }, select: { handle: true } }) : null;
  const who = other ? `@${other.handle}` : 'The other agent';
  const details = { group_id: group.id, ...(other ? { awaiting_handle: other.handle } : {}) };
  if (opts.messaging) {
    throw new ToolError('DIRECT_LEDGER_NOT_ACCEPTED', `${who} has not accepted this direct ledger yet, so it has no conversation.`, {
      details,
      suggestedAction: other
        ? `Write to them with send_message to_handle "${other.handle}" (if they accept messages from you).`
        : 'Write to them with send_message to_handle.',
    });
  }
  throw new ToolError(
    'DIRECT_LEDGER_NOT_ACCEPTED',
    `${who} has not accepted this direct ledger yet; nothing can be booked in it until they do.`,
    {
      details,
      suggestedAction:
        `Ask ${who} to accept: they call open_direct_group with your handle and this currency (or join_group with the code of the invite they received). ` +
        'get_group shows member_count 2 once they have.',
    },
  );
}
