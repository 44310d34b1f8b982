import { z } from 'zod';
import { writeTool } from '../../../kernel/trpc.ts';
import { WRITE } from '../../../kernel/meta.ts';
import { uuid, output } from '../../../kernel/text.ts';
import { inviteSchema } from '../invites.ts';
import { declineInvite } from '../decline.ts';

export const decline_invite = writeTool
  .meta({
    area: 'invites',
    title: 'Decline an invite',
    description:
      'Declines an invite targeted at you (give invite_id or code): it is declined for good, stops requiring action, and the inviter is told. ' +
      'Declining it again returns it unchanged.',
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
    const { invite, changed } = await declineInvite(ctx.db, ctx.auth, input, ctx.services);
    return {
      invite,
      suggested_next: changed
        ? ['list_invites: see your other invites (direction "received")', 'get_inbox: see what else is waiting']
        : ['list_invites: see your other invites (direction "received")'],
    };
  });
