import { z } from 'zod';
import { readTool } from '../../trpc.ts';
import { READ } from '../../meta.ts';
import { ToolError, validationError } from '../../errors.ts';
import { uuid, output } from '../../text.ts';
import { inviteSchema, toInvite, findInviteByCode, INVITE_INCLUDE } from '../../domain/invites.ts';

export const get_invite = readTool
  .meta({
    area: 'invites',
    title: 'Preview an invite',
    description:
      'Shows an invite before joining, without consuming it: group name, inviter (created_by), target, note, expiry, uses and status (active, revoked, ' +
      'declined, expired, exhausted). Give the code (any case/spacing, or the whole pasted invite link; 8-200 chars) or invite_id (exactly one). By code ' +
      'anyone holding the code may preview; by invite_id only its creator, its target and members of its group see it. Also tells whether you can join it now ' +
      '(can_join, with the reason when not) and whether you are already a member.',
    annotations: READ,
    errors: {
      NOT_FOUND: 'unknown code, or an invite_id you cannot see',
    },
  })
  .input(
    z.strictObject({
      code: z.string().min(8).max(200).optional().describe('Invite code or the whole pasted invite link.'),
      invite_id: uuid.optional().describe('The invite_id (from list_invites or your inbox).'),
    }),
  )
  .output(
    output({
      invite: inviteSchema,
      group: z.object({ currency: z.string(), member_count: z.number().int(), archived: z.boolean() }),
      already_member: z.boolean(),
      can_join: z.boolean().describe('True when join_group with this code would add you now.'),
      reason: z.string().nullable().describe('Why you cannot join it, when can_join is false.'),
    }),
  )
  .query(async ({ ctx, input }) => {
    const me = ctx.auth.agentId;
    if ((input.code === undefined) === (input.invite_id === undefined)) throw validationError('code', 'give exactly one of code or invite_id', 'exactly_one');
    let invite;
    if (input.code !== undefined) invite = await findInviteByCode(ctx.db, input.code);
    else {
      invite = await ctx.db.invite.findUnique({ where: { id: input.invite_id! }, include: INVITE_INCLUDE });
      const visible =
        invite &&
        (invite.createdById === me ||
          invite.targetId === me ||
          (await ctx.db.membership.findFirst({ where: { groupId: invite.groupId, agentId: me, leftAt: null }, select: { agentId: true } })) !== null);
      if (!invite || !visible) throw new ToolError('NOT_FOUND', `No invite you can see has invite_id ${input.invite_id}.`, { suggestedAction: 'list_invites shows the invites you sent and received.' });
    }
    const now = ctx.services.now();
    const out = toInvite(invite, ctx.services.config.baseUrl, now);
    const [group, membership] = await Promise.all([
      ctx.db.group.findUniqueOrThrow({ where: { id: invite.groupId }, select: { currency: true, memberCount: true, archivedAt: true } }),
      ctx.db.membership.findUnique({ where: { groupId_agentId: { groupId: invite.groupId, agentId: me } }, select: { leftAt: true } }),
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
    const suggested_next: string[] = [];
    if (canJoin) {
      suggested_next.push(`join_group: join "${out.group_name}" (code "${out.code}")`);
      if (invite.targetId === me) suggested_next.push(`decline_invite: decline the invite to "${out.group_name}" (invite_id ${out.invite_id})`);
    } else if (alreadyMember) {
      suggested_next.push(`get_group: open "${out.group_name}" (group_id ${out.group_id})`);
      if (out.status === 'active' && invite.createdById === me) suggested_next.push(`revoke_invite: withdraw this invite (invite_id ${out.invite_id})`);
    } else suggested_next.push('list_invites: see the invites you received (direction "received")');
    return {
      invite: out,
      group: { currency: group.currency, member_count: group.memberCount, archived: group.archivedAt !== null },
      already_member: alreadyMember,
      can_join: canJoin,
      reason,
      suggested_next,
    };
  });
