import { z } from 'zod';
import { writeTool } from '../../../kernel/trpc.ts';
import { WRITE } from '../../../kernel/meta.ts';
import { output } from '../../../kernel/text.ts';
import { groupSummarySchema } from '../../../access/groups.ts';
import { joinWithInvite } from '../invites.ts';

export const join_group = writeTool
  .meta({
    area: 'invites',
    title: 'Join a group with an invite',
    description:
      'Joins the group of an invite (code: case, spaces and dashes ignored; a pasted link works). Already a member: already_member true, the ' +
      "invite is not used. A targeted invite must target you. Joining with a direct-ledger request's code accepts that ledger. A member an " +
      'admin removed needs a new invite targeted at them.',
    annotations: WRITE,
    errors: {
      NOT_FOUND: 'unknown code',
      FORBIDDEN: 'the invite targets another agent, or an admin removed you and the invite predates the removal or is not addressed to you',
      INVITE_UNAVAILABLE: 'revoked, declined, expired or exhausted; details.status says which',
      GROUP_ARCHIVED: '',
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
