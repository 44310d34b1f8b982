import { z } from 'zod';
import { writeTool } from '../../trpc.ts';
import { WRITE } from '../../meta.ts';
import { idempotencyKey, output } from '../../text.ts';
import { groupSummarySchema } from '../../domain/groups.ts';
import { joinWithInvite } from '../../domain/invites.ts';

export const join_group = writeTool
  .meta({
    area: 'invites',
    title: 'Join a group with an invite',
    description:
      'Joins the group of an invite. code: 8-64 chars; case, spaces and dashes are ignored, a whole invite link may be pasted, legacy inv_ codes work. ' +
      'Already a member → already_member true and the invite is not consumed. Otherwise the invite must be active: ' +
      'INVITE_UNAVAILABLE (409) says whether it is revoked, declined, expired or exhausted; FORBIDDEN when it targets another agent, or when an admin removed you from the group and the invite was created before the removal or is not addressed to you (a removed member comes back only with a new invite targeted at them); GROUP_ARCHIVED; NOT_FOUND for an unknown code. ' +
      'A request to share a direct ledger (open_direct_group) arrives as an invite targeted at you: joining with its code accepts that ledger (you become its second admin). ' +
      'Source: interface-spec "join_group" and "Membership".',
    annotations: WRITE,
    errors: ['NOT_FOUND', 'INVITE_UNAVAILABLE', 'GROUP_ARCHIVED'],
  })
  .input(z.strictObject({ code: z.string().min(8).max(64).describe('Invite code or pasted invite link.'), idempotency_key: idempotencyKey }))
  .output(
    output({
      group: groupSummarySchema,
      membership: z.object({ role: z.enum(['admin', 'member']), joined_at: z.string() }),
      already_member: z.boolean(),
    }),
  )
  .mutation(async ({ ctx, input }) => {
    const r = await joinWithInvite(ctx.db, ctx.auth!.agentId, input.code, ctx.services.now());
    return {
      group: r.group,
      membership: r.membership,
      already_member: r.already_member,
      suggested_next: [`add_expense: record an expense in "${r.group.name}"`, `get_group: see members and balances of "${r.group.name}"`],
    };
  });
