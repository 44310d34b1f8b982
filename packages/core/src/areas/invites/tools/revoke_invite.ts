import { z } from 'zod';
import { writeTool } from '../../../kernel/trpc.ts';
import { DESTRUCTIVE } from '../../../kernel/meta.ts';
import { ToolError } from '../../../kernel/errors.ts';
import { uuid, output } from '../../../kernel/text.ts';
import { inviteSchema, toInvite, effectiveStatus, INVITE_INCLUDE } from '../invites.ts';
import { appendActivity } from '../../../kernel/activity.ts';
import { appendEvent } from '../../../kernel/events.ts';
import { resolveAction } from '../../../kernel/notify.ts';

export const revoke_invite = writeTool
  .meta({
    area: 'invites',
    title: 'Revoke an invite',
    description:
      "Withdraws an active invite for good (its creator or a group admin): its code no longer joins and the target's item stops requiring " +
      'action. Revoking it again returns it unchanged.',
    annotations: DESTRUCTIVE,
    errors: {
      NOT_FOUND: 'no invite you can see',
      FORBIDDEN: 'a member who is neither its creator nor an admin',
      INVITE_UNAVAILABLE: 'declined, expired or exhausted; details.status says which',
    },
  })
  .input(z.strictObject({ invite_id: uuid.describe('The invite to revoke (from create_invite or list_invites).') }))
  .output(output({ invite: inviteSchema }))
  .mutation(async ({ ctx, input }) => {
    const me = ctx.auth.agentId;
    await ctx.db.$executeRaw`SELECT 1 FROM invites WHERE id = ${input.invite_id}::uuid FOR NO KEY UPDATE`;
    const invite = await ctx.db.invite.findUnique({ where: { id: input.invite_id }, include: INVITE_INCLUDE });
    const membership = invite
      ? await ctx.db.membership.findUnique({ where: { groupId_agentId: { groupId: invite.groupId, agentId: me } } })
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
    const now = ctx.services.now();
    const status = effectiveStatus(invite, now);
    if (status === 'revoked') {
      return {
        invite: toInvite(invite, ctx.services.config.baseUrl, now),
        suggested_next: [`create_invite: create a new invite to "${invite.group.name}"`],
      };
    }
    if (status !== 'active') {
      throw new ToolError('INVITE_UNAVAILABLE', `This invite is ${status}; only active invites can be revoked.`, {
        details: { status, invite_id: invite.id },
      });
    }
    const updated = await ctx.db.invite.update({ where: { id: invite.id }, data: { status: 'revoked' }, include: INVITE_INCLUDE });
    await appendActivity(ctx.db, {
      groupId: invite.groupId,
      actorId: me,
      action: 'invite.revoked',
      entityType: 'invite',
      entityId: invite.id,
      before: { status },
      after: { status: 'revoked' },
    });
    await resolveAction(ctx.db, { entityType: 'invite', entityId: invite.id, resolution: `revoked by @${ctx.auth.handle}` });
    await appendEvent(ctx.db, {
      type: 'invite.revoked',
      groupId: invite.groupId,
      actorId: me,
      recipients: [me, ...(invite.targetId ? [invite.targetId] : [])],
      data: { invite_id: invite.id, group_id: invite.groupId },
    });
    return {
      invite: toInvite(updated, ctx.services.config.baseUrl, now),
      suggested_next: [
        `create_invite: create a new invite to "${invite.group.name}" (group_id ${invite.groupId})`,
        'list_invites: see your other invites (direction "sent")',
      ],
    };
  });
