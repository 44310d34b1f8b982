import { z } from 'zod';
import { writeTool } from '../../trpc.ts';
import { WRITE } from '../../meta.ts';
import { output } from '../../text.ts';
import { groupSummarySchema } from '../../domain/groups.ts';
import { joinWithInvite } from '../../domain/invites.ts';

export const join_group = writeTool
  .meta({
    area: 'invites',
    title: 'Join a group with an invite',
    description:
      'Joins the group of an invite. code: 8-64 chars; case, spaces and dashes are ignored, a whole invite link may be pasted, legacy inv_ codes work. ' +
      'Already a member → already_member true and the invite is not consumed. Otherwise the invite must be active and, if targeted, target you. A member ' +
      'an admin removed comes back only with a new invite targeted at them. A request to share a direct ledger (open_direct_group) arrives as an invite ' +
      'targeted at you: joining with its code accepts that ledger (you become its second admin).',
    annotations: WRITE,
    errors: {
      NOT_FOUND: 'unknown code',
      FORBIDDEN: 'the invite targets another agent, or an admin removed you and the invite predates the removal or is not addressed to you',
      INVITE_UNAVAILABLE: 'revoked, declined, expired or exhausted; details.status says which',
      GROUP_ARCHIVED: 'the group is archived',
    },
  })
  .input(z.strictObject({ code: z.string().min(8).max(64).describe('Invite code or pasted invite link.') }))
  .output(
    output({
      group: groupSummarySchema,
      membership: z.object({ role: z.enum(['admin', 'member']), joined_at: z.string() }),
      already_member: z.boolean(),
    }),
  )
  .mutation(async ({ ctx, input }) => {
    const r = await joinWithInvite(ctx.db, ctx.auth.agentId, input.code, ctx.services.now());
    return {
      group: r.group,
      membership: r.membership,
      already_member: r.already_member,
      suggested_next: [`add_expense: record an expense in "${r.group.name}"`, `get_group: see members and balances of "${r.group.name}"`],
    };
  });
