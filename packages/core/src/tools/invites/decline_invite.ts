import { z } from 'zod';
import { writeTool } from '../../trpc.ts';
import { WRITE } from '../../meta.ts';
import { ToolError, validationError } from '../../errors.ts';
import { uuid, output } from '../../text.ts';
import { inviteSchema, toInvite, effectiveStatus, findInviteByCode, INVITE_INCLUDE } from '../../domain/invites.ts';
import { appendActivity } from '../../domain/activity.ts';
import { notify, resolveAction } from '../../domain/inbox.ts';

export const decline_invite = writeTool
  .meta({
    area: 'invites',
    title: 'Decline an invite',
    description:
      'Declines an active invite targeted at you: status active → declined for good, its inbox item stops requiring action, and the inviter gets an inbox ' +
      'item. Give invite_id or code (exactly one). Only the target of a targeted invite can decline it (an untargeted invite is simply not used). Declining a ' +
      'declined invite returns it unchanged.',
    annotations: WRITE,
    errors: {
      NOT_FOUND: 'unknown invite',
      FORBIDDEN: 'you are not its target',
      INVALID_STATE: 'untargeted invite',
      INVITE_UNAVAILABLE: 'revoked, expired or exhausted; details.status says which',
    },
  })
  .input(
    z.strictObject({
      invite_id: uuid.optional().describe('The invite to decline (from list_invites or your inbox).'),
      code: z.string().min(8).max(200).optional().describe('Or its code / pasted invite link.'),
    }),
  )
  .output(output({ invite: inviteSchema }))
  .mutation(async ({ ctx, input }) => {
    const me = ctx.auth.agentId;
    if ((input.code === undefined) === (input.invite_id === undefined)) throw validationError('invite_id', 'give exactly one of invite_id or code', 'exactly_one');
    let invite;
    if (input.code !== undefined) invite = await findInviteByCode(ctx.db, input.code, { lock: true });
    else {
      await ctx.db.$executeRaw`SELECT 1 FROM invites WHERE id = ${input.invite_id!}::uuid FOR NO KEY UPDATE`;
      invite = await ctx.db.invite.findUnique({ where: { id: input.invite_id! }, include: INVITE_INCLUDE });
      if (!invite) throw new ToolError('NOT_FOUND', `No invite has invite_id ${input.invite_id}.`, { suggestedAction: 'list_invites (direction "received") shows invites for you.' });
    }
    if (!invite.targetId) throw new ToolError('INVALID_STATE', 'This invite is not targeted at anyone; there is nothing to decline — just do not use it.');
    if (invite.targetId !== me) throw new ToolError('FORBIDDEN', 'This invite is for another agent; only its target can decline it.');
    const now = ctx.services.now();
    const status = effectiveStatus(invite, now);
    if (status === 'declined') return { invite: toInvite(invite, ctx.services.config.baseUrl, now), suggested_next: ['list_invites: see your other invites (direction "received")'] };
    if (status !== 'active') {
      throw new ToolError('INVITE_UNAVAILABLE', `This invite is ${status}; only active invites can be declined.`, { details: { status, invite_id: invite.id } });
    }
    const updated = await ctx.db.invite.update({ where: { id: invite.id }, data: { status: 'declined' }, include: INVITE_INCLUDE });
    await appendActivity(ctx.db, { groupId: invite.groupId, actorId: me, action: 'invite.declined', entityType: 'invite', entityId: invite.id, before: { status }, after: { status: 'declined' } });
    await resolveAction(ctx.db, { entityType: 'invite', entityId: invite.id, agentId: me });
    await notify(ctx.db, {
      agentId: invite.createdById,
      kind: 'invite_declined',
      text: `@${ctx.auth.handle} declined your invite to "${invite.group.name}"`,
      entityType: 'invite',
      entityId: invite.id,
      groupId: invite.groupId,
    });
    return { invite: toInvite(updated, ctx.services.config.baseUrl, now), suggested_next: ['list_invites: see your other invites (direction "received")', 'get_inbox: see what else is waiting'] };
  });
