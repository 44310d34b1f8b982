/**
 * Revoking an invite (revoke_invite): its creator or a group admin withdraws an active invite; the
 * target's open item is resolved, in the caller's transaction.
 */
import type { Db, Services } from '../../kernel/context.ts';
import type { Actor } from '../../kernel/actor.ts';
import { ToolError } from '../../kernel/errors.ts';
import { toInvite, effectiveStatus, INVITE_INCLUDE } from './invites.ts';
import { appendActivity } from '../../kernel/activity.ts';
import { appendEvent } from '../../kernel/events.ts';
import { resolveAction } from '../../kernel/notify.ts';

/**
 * Revokes invite `input.invite_id` on behalf of `actor`, its creator or an admin of its group, with the
 * invite row locked. Revoking it again changes nothing (`changed` false). Returns the invite (wire
 * shape), `changed` and the invite's group ({ id, name }).
 * Errors: NOT_FOUND (no such invite, or one the actor cannot see: neither its creator nor a member),
 * FORBIDDEN (a member who is neither its creator nor an admin), INVITE_UNAVAILABLE (declined, expired
 * or exhausted; details.status).
 */
export async function revokeInvite(
  db: Db,
  actor: Pick<Actor, 'agentId' | 'handle'>,
  input: { invite_id: string },
  services: Pick<Services, 'now' | 'config'>,
) {
  const me = actor.agentId;
  await db.$executeRaw`SELECT 1 FROM invites WHERE id = ${input.invite_id}::uuid FOR NO KEY UPDATE`;
  const invite = await db.invite.findUnique({ where: { id: input.invite_id }, include: INVITE_INCLUDE });
  const membership = invite
    ? await db.membership.findUnique({ where: { groupId_agentId: { groupId: invite.groupId, agentId: me } } })
    : null;
  const isMember = membership !== null && membership.leftAt === null;
  if (!invite || (invite.createdById !== me && !isMember)) {
    throw new ToolError('NOT_FOUND', `No invite you can see has invite_id ${input.invite_id}.`, {
      suggestedAction: 'list_invites (direction "sent") shows your invites.',
    });
  }
  if (invite.createdById !== me && membership?.role !== 'admin') {
    throw new ToolError('FORBIDDEN', "Only the invite's creator or a group admin can revoke it.", {
      details: { required_role: 'admin' },
    });
  }
  const now = services.now();
  const status = effectiveStatus(invite, now);
  if (status === 'revoked') {
    return {
      invite: toInvite(invite, services.config.baseUrl, now),
      changed: false,
      group: { id: invite.groupId, name: invite.group.name },
    };
  }
  if (status !== 'active') {
    throw new ToolError('INVITE_UNAVAILABLE', `This invite is ${status}; only active invites can be revoked.`, {
      details: { status, invite_id: invite.id },
    });
  }
  const updated = await db.invite.update({ where: { id: invite.id }, data: { status: 'revoked' }, include: INVITE_INCLUDE });
  await appendActivity(db, {
    groupId: invite.groupId,
    actorId: me,
    action: 'invite.revoked',
    entityType: 'invite',
    entityId: invite.id,
    before: { status },
    after: { status: 'revoked' },
  });
  await resolveAction(db, { entityType: 'invite', entityId: invite.id, resolution: `revoked by @${actor.handle}` });
  await appendEvent(db, {
    type: 'invite.revoked',
    groupId: invite.groupId,
    actorId: me,
    recipients: [me, ...(invite.targetId ? [invite.targetId] : [])],
    data: { invite_id: invite.id, group_id: invite.groupId },
  });
  return { invite: toInvite(updated, services.config.baseUrl, now), changed: true, group: { id: invite.groupId, name: invite.group.name } };
}
