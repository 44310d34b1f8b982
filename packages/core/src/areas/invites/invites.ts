/**
 * Invite projection, status and the join rule shared by join_group and register_agent
 * (interface-spec "Membership" and "Invite status"; issue 4 "Invite status transitions").
 */
import { z } from 'zod';
import type { Db } from '../../kernel/context.ts';
import { ToolError } from '../../kernel/errors.ts';
import { uuid, timestamp, agentRef } from '../../kernel/text.ts';
import { toAgentRef, AGENT_REF_SELECT } from '../../access/agents.ts';
import { Prisma } from '@kitty/db';
import { generateInviteCode, inviteCodeKey, inviteUrl } from './codes.ts';
import { toGroupSummary } from '../../access/groups.ts';
import { appendActivity } from '../../kernel/activity.ts';
import { appendEvent } from '../../kernel/events.ts';
import { notifyAll, resolveAction } from '../../kernel/notify.ts';

const INVITE_STATUSES = ['active', 'revoked', 'declined', 'expired', 'exhausted'] as const;
export type InviteStatus = (typeof INVITE_STATUSES)[number];

export const inviteSchema = z.object({
  invite_id: uuid,
  group_id: uuid,
  group_name: z.string(),
  code: z.string().describe('Four words joined by dashes.'),
  url: z.string().describe('Invite URL (GET describes it).'),
  created_by: agentRef,
  target: agentRef.nullable(),
  note: z.string().nullable(),
  expires_at: timestamp,
  max_uses: z.number().int(),
  uses: z.number().int(),
  status: z.enum(INVITE_STATUSES),
  created_at: timestamp,
});

export const INVITE_INCLUDE = {
  group: { select: { name: true } },
  createdBy: { select: AGENT_REF_SELECT },
  target: { select: AGENT_REF_SELECT },
} as const;

interface InviteRow {
  id: string;
  groupId: string;
  code: string;
  status: string;
  expiresAt: Date;
  maxUses: number;
  uses: number;
  note: string | null;
  createdAt: Date;
  group: { name: string };
  createdBy: { id: string; handle: string; displayName: string };
  target: { id: string; handle: string; displayName: string } | null;
}

/** Stored status plus the derived ones: exhausted when uses reach max_uses, expired after expires_at. */
export function effectiveStatus(inv: { status: string; uses: number; maxUses: number; expiresAt: Date }, now: Date): InviteStatus {
  if (inv.status === 'revoked' || inv.status === 'declined') return inv.status;
  if (inv.uses >= inv.maxUses) return 'exhausted';
  if (inv.expiresAt.getTime() <= now.getTime()) return 'expired';
  return 'active';
}

export function toInvite(inv: InviteRow, baseUrl: string, now: Date) {
  return {
    invite_id: inv.id,
    group_id: inv.groupId,
    group_name: inv.group.name,
    code: inv.code,
    url: inviteUrl(baseUrl, inv.code),
    created_by: toAgentRef(inv.createdBy),
    target: inv.target ? toAgentRef(inv.target) : null,
    note: inv.note,
    expires_at: inv.expiresAt.toISOString(),
    max_uses: inv.maxUses,
    uses: inv.uses,
    status: effectiveStatus(inv, now),
    created_at: inv.createdAt.toISOString(),
  };
}

/** Finds an invite by anything pasted (code in any case/spacing, or URL). NOT_FOUND when none. Locks it with `lock`. */
export async function findInviteByCode(db: Db, pasted: string, opts: { lock?: boolean } = {}) {
  const key = inviteCodeKey(pasted);
  if (opts.lock) await db.$executeRaw`SELECT 1 FROM invites WHERE code_key = ${key} FOR NO KEY UPDATE`;
  const invite = await db.invite.findUnique({ where: { codeKey: key }, include: INVITE_INCLUDE });
  if (!invite) {
    throw new ToolError('NOT_FOUND', 'No invite has this code.', {
      details: { code: pasted },
      suggestedAction: 'Check the code (four words joined by dashes) or ask the inviter for a new invite.',
    });
  }
  return invite;
}

/**
 * Joins the group of the invite `pasted` as `agentId` (interface-spec "Membership").
 * Already a member → unchanged, `already_member: true`, the invite is not consumed.
 * A member removed by an admin is admitted again only by an invite created after the removal and
 * targeted at them (our rule: removal holds against the invites they came in with).
 * Errors: NOT_FOUND (no such code), FORBIDDEN (targeted at another agent, or removed and the invite is older or untargeted),
 * INVITE_UNAVAILABLE with details.status (revoked | declined | expired | exhausted), GROUP_ARCHIVED.
 */
export async function joinWithInvite(db: Db, agentId: string, pasted: string, now: Date) {
  const invite = await findInviteByCode(db, pasted, { lock: true });
  await db.$executeRaw`SELECT 1 FROM groups WHERE id = ${invite.groupId}::uuid FOR NO KEY UPDATE`;
  const group = await db.group.findUniqueOrThrow({ where: { id: invite.groupId } });
  const existing = await db.membership.findUnique({ where: { groupId_agentId: { groupId: group.id, agentId } } });
  if (existing && !existing.leftAt) {
    return {
      group: toGroupSummary(group, existing),
      membership: { role: existing.role as 'admin' | 'member', joined_at: existing.joinedAt.toISOString() },
      already_member: true,
      invite,
    };
  }
  if (invite.target && invite.target.id !== agentId) {
    throw new ToolError('FORBIDDEN', 'This invite is for another agent.', {
      suggestedAction: 'Ask the inviter for an invite of your own.',
    });
  }
  if (existing?.removedAt && !(invite.targetId === agentId && invite.createdAt.getTime() > existing.removedAt.getTime())) {
    // Removal holds (our rule): the invites that let this agent in before, and any untargeted one, no longer do.
    throw new ToolError(
      'FORBIDDEN',
      `You were removed from "${group.name}" by an admin; invites created before the removal, and invites not addressed to you, no longer admit you.`,
      {
        details: { group_id: group.id, removed_at: existing.removedAt.toISOString() },
        suggestedAction: 'Ask a member of the group for a new invite addressed to you (create_invite with your handle as target_handle).',
      },
    );
  }
  const status = effectiveStatus(invite, now);
  if (status !== 'active') {
    throw new ToolError('INVITE_UNAVAILABLE', `This invite is ${status}.`, { details: { status, invite_id: invite.id } });
  }
  if (group.archivedAt)
    throw new ToolError('GROUP_ARCHIVED', 'This group is archived; it takes no new members.', { details: { group_id: group.id } });

  const { membership, group: updated } = await admitMember(db, {
    group,
    agentId,
    role: group.kind === 'direct' ? 'admin' : 'member',
    rejoining: existing !== null,
    inviteId: invite.id,
    now,
  });
  return {
    group: toGroupSummary(updated, membership),
    membership: { role: membership.role as 'admin' | 'member', joined_at: membership.joinedAt.toISOString() },
    already_member: false,
    invite,
  };
}

/**
 * Makes `agentId` an active member of `group` (the group row must be locked by the caller):
 * membership (re)activated, member_count + 1, the invite used (when one), activity, an inbox
 * item for the other members, and the agent's open "invite" action items for it resolved.
 */
export async function admitMember(
  db: Db,
  a: {
    group: { id: string; name: string };
    agentId: string;
    role: 'admin' | 'member';
    rejoining: boolean;
    inviteId: string | null;
    now: Date;
    text?: string;
  },
) {
  const { group, agentId, now } = a;
  const membership = a.rejoining
    ? await db.membership.update({
        where: { groupId_agentId: { groupId: group.id, agentId } },
        data: { leftAt: null, removedAt: null, joinedAt: now, role: a.role },
      })
    : await db.membership.create({ data: { groupId: group.id, agentId, role: a.role, joinedAt: now } });
  if (a.inviteId) await db.invite.update({ where: { id: a.inviteId }, data: { uses: { increment: 1 } } });
  const updated = await db.group.update({ where: { id: group.id }, data: { memberCount: { increment: 1 } } });
  const joiner = await db.agent.findUniqueOrThrow({ where: { id: agentId }, select: AGENT_REF_SELECT });
  await appendActivity(db, {
    groupId: group.id,
    actorId: agentId,
    action: 'member.joined',
    entityType: 'member',
    entityId: agentId,
    after: { role: a.role, invite_id: a.inviteId },
  });
  const others = await db.membership.findMany({ where: { groupId: group.id, leftAt: null }, select: { agentId: true } });
  await notifyAll(
    db,
    others.map((o) => o.agentId),
    agentId,
    {
      kind: 'member_joined',
      text: a.text ?? `@${joiner.handle} joined "${group.name}"`,
      entityType: 'group',
      entityId: group.id,
      groupId: group.id,
    },
  );
  await appendEvent(db, {
    type: 'member.joined',
    groupId: group.id,
    actorId: agentId,
    recipients: others.map((o) => o.agentId),
    data: { agent_id: agentId, role: a.role, ...(a.inviteId ? { invite_id: a.inviteId } : {}) },
    link: { entityType: 'group', entityId: group.id },
  });
  if (a.inviteId)
    await resolveAction(db, { entityType: 'invite', entityId: a.inviteId, agentId, resolution: `accepted by @${joiner.handle}` });
  return { membership, group: updated };
}

/**
 * Inserts an invite with a fresh code (retrying the rare collision of a 44-bit code).
 * @returns the invite row with INVITE_INCLUDE.
 */
export async function insertInvite(
  db: Db,
  data: {
    groupId: string;
    createdById: string;
    targetId: string | null;
    note: string | null;
    expiresAt: Date;
    maxUses: number;
    createdAt: Date;
  },
) {
  for (let attempt = 0; ; attempt++) {
    const code = generateInviteCode();
    try {
      return await db.invite.create({ data: { ...data, code, codeKey: inviteCodeKey(code) }, include: INVITE_INCLUDE });
    } catch (e) {
      if (attempt < 3 && e instanceof Prisma.PrismaClientKnownRequestError && e.code === 'P2002') continue;
      throw e;
    }
  }
}
