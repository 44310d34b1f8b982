/**
 * One invite as the caller sees it (get_invite): the invite, its group's basics, and whether the
 * caller could join with it now, or why not.
 */
import type { Db, Services } from '../../kernel/context.ts';
import type { Actor } from '../../kernel/actor.ts';
import { ToolError, validationError } from '../../kernel/errors.ts';
import { toInvite, findInviteByCode, INVITE_INCLUDE } from './invites.ts';

/**
 * Looks up the invite named by exactly one of sel.code (a code or a whole pasted invite link) or
 * sel.invite_id (visible to its creator, its target and the group's active members) for `actor`. Returns `view` { invite (wire shape), group: { currency, member_count, archived },
 * already_member, can_join, reason (why not, else null) } and whether the caller created it
 * (`createdByMe`) or is its target (`targetedAtMe`).
 * Errors: VALIDATION_ERROR (not exactly one of code/invite_id), NOT_FOUND (no
 * such invite, or one the caller cannot see).
 */
export async function viewInvite(
  db: Db,
  actor: Pick<Actor, 'agentId'>,
  sel: { code?: string | undefined; invite_id?: string | undefined },
  services: Pick<Services, 'now' | 'config'>,
) {
  const me = actor.agentId;
  if ((sel.code === undefined) === (sel.invite_id === undefined))
    throw validationError('code', 'give exactly one of code or invite_id', 'exactly_one');
  let invite;
  if (sel.code !== undefined) invite = await findInviteByCode(db, sel.code);
  else {
    invite = await db.invite.findUnique({ where: { id: sel.invite_id! }, include: INVITE_INCLUDE });
    const visible =
      invite &&
      (invite.createdById === me ||
        invite.targetId === me ||
        (await db.membership.findFirst({ where: { groupId: invite.groupId, agentId: me, leftAt: null }, select: { agentId: true } })) !==
          null);
    if (!invite || !visible)
      throw new ToolError('NOT_FOUND', `No invite you can see has invite_id ${sel.invite_id}.`, {
        suggestedAction: 'list_invites shows the invites you sent and received.',
      });
  }
  const now = services.now();
  const out = toInvite(invite, services.config.baseUrl, now);
  const [group, membership] = await Promise.all([
    db.group.findUniqueOrThrow({ where: { id: invite.groupId }, select: { currency: true, memberCount: true, archivedAt: true } }),
    db.membership.findUnique({ where: { groupId_agentId: { groupId: invite.groupId, agentId: me } }, select: { leftAt: true } }),
  ]);
  const alreadyMember = membership !== null && membership.leftAt === null;
  const reason = alreadyMember
    ? 'you are already a member'
    : invite.targetId && invite.targetId !== me
      ? 'this invite is for another agent'
      : out.status !== 'active'
        ? `this invite is ${out.status}`
        : group.archivedAt
          ? 'the group is archived'
          : null;
  const canJoin = reason === null;
  return {
    view: {
      invite: out,
      group: { currency: group.currency, member_count: group.memberCount, archived: group.archivedAt !== null },
      already_member: alreadyMember,
      can_join: canJoin,
      reason,
    },
    createdByMe: invite.createdById === me,
    targetedAtMe: invite.targetId === me,
  };
}
