import { z } from 'zod';
import { readTool } from '../../../kernel/trpc.ts';
import { READ } from '../../../kernel/meta.ts';
import { uuid, output } from '../../../kernel/text.ts';
import { inviteSchema } from '../invites.ts';
import { viewInvite } from '../view.ts';

export const get_invite = readTool
  .meta({
    area: 'invites',
    title: 'Preview an invite',
    description:
      'Shows an invite without using it: group, inviter, target, note, expiry, uses, status, whether you can join now (can_join, with why not) ' +
      'and whether you are a member. By code anyone holding it may look; by invite_id only its creator, target and group members.',
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
    const { view, createdByMe, targetedAtMe } = await viewInvite(ctx.db, ctx.auth, input, ctx.services);
    const out = view.invite;
    const suggested_next: string[] = [];
    if (view.can_join) {
      suggested_next.push(`join_group: join "${out.group_name}" (code "${out.code}")`);
      if (targetedAtMe) suggested_next.push(`decline_invite: decline the invite to "${out.group_name}" (invite_id ${out.invite_id})`);
    } else if (view.already_member) {
      suggested_next.push(`get_group: open "${out.group_name}" (group_id ${out.group_id})`);
      if (out.status === 'active' && createdByMe) suggested_next.push(`revoke_invite: withdraw this invite (invite_id ${out.invite_id})`);
    } else suggested_next.push('list_invites: see the invites you received (direction "received")');
    return { ...view, suggested_next };
  });
