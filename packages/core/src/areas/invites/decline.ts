/**
 * Declining an invite (decline_invite): the target of an invite refuses it; its creator is told,
 * in the caller's transaction.
 */
import type { Db, Services } from '../../kernel/context.ts';
import type { Actor } from '../../kernel/actor.ts';
import { ToolError, validationError } from '../../kernel/errors.ts';
import { toInvite, effectiveStatus, findInviteByCode, INVITE_INCLUDE } from './invites.ts';
import { appendActivity } from '../../kernel/activity.ts';
import { appendEvent } from '../../kernel/events.ts';
import { notify, resolveAction } from '../../kernel/notify.ts';

/**
 * Declines the invite named by exactly one of sel.invite_id or sel.code (a code or pasted link) on
 * behalf of `actor`, its target, with the invite row locked. Declining an already
 * declined invite changes nothing (`changed` false). Otherwise the status becomes declined, the
 * caller's inbox item about it is resolved and the creator is told.
 * Returns the invite (wire shape) and `changed`.
 * Errors: VALIDATION_ERROR (not exactly one of invite_id/code), NOT_FOUND (no such invite),
 * INVALID_STATE (an untargeted invite), FORBIDDEN (targeted at another agent), INVITE_UNAVAILABLE
 * (expired, revoked or used up).
 */
export async function declineInvite(
  db: Db,
  actor: Pick<Actor, 'agentId' | 'handle'>,
  sel: { invite_id?: string | undefined; code?: string | undefined },
  services: Pick<Services, 'now' | 'config'>,
) {
  const me = actor.agentId;
  if ((sel.code === undefined) === (sel.invite_id === undefined))
    throw validationError('invite_id', 'give exactly one of invite_id or code', 'exactly_one');
  let invite;
  if (sel.code !== undefined) invite = await findInviteByCode(db, sel.code, { lock: true });
  else {
    await db.$executeRaw`SELECT 1 FROM invites WHERE id = ${sel.invite_id!}::uuid FOR NO KEY UPDATE`;
    invite = await db.invite.findUnique({ where: { id: sel.invite_id! }, include: INVITE_INCLUDE });
    if (!invite)
      throw new ToolError('NOT_FOUND', `No invite has invite_id ${sel.invite_id}.`, {
        suggestedAction: 'list_invites (direction "received") shows invites for you.',
      });
  }
  if (!invite.targetId)
    throw new ToolError('INVALID_STATE', 'This invite is not targeted at anyone; there is nothing to decline — just do not use it.');
  if (invite.targetId !== me) throw new ToolError('FORBIDDEN', 'This invite is for another agent; only its target can decline it.');
  const now = services.now();
  const status = effectiveStatus(invite, now);
  if (status === 'declined') return { invite: toInvite(invite, services.config.baseUrl, now), changed: false };
  if (status !== 'active') {
    throw new ToolError('INVITE_UNAVAILABLE', `This invite is ${status}; only active invites can be declined.`, {
      details: { status, invite_id: invite.id },
    });
  }
  const updated = await db.invite.update({ where: { id: invite.id }, data: { status: 'declined' }, include: INVITE_INCLUDE });
  await appendActivity(db, {
    groupId: invite.groupId,
    actorId: me,
    action: 'invite.declined',
    entityType: 'invite',
    entityId: invite.id,
    before: { status },
    after: { status: 'declined' },
  });
  await resolveAction(db, { entityType: 'invite', entityId: invite.id, agentId: me, resolution: `declined by @${actor.handle}` });
  await notify(db, {
    agentId: invite.createdById,
    kind: 'invite_declined',
    text: `@${actor.handle} declined your invite to "${invite.group.name}"`,
    entityType: 'invite',
    entityId: invite.id,
    groupId: invite.groupId,
  });
  await appendEvent(db, {
    type: 'invite.declined',
    groupId: invite.groupId,
    actorId: me,
    recipients: [invite.createdById, me],
    data: { invite_id: invite.id, group_id: invite.groupId },
    link: { entityType: 'invite', entityId: invite.id },
  });
  return { invite: toInvite(updated, services.config.baseUrl, now), changed: true };
}
