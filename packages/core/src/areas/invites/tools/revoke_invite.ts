import { z } from 'zod';
import { writeTool } from '../../../kernel/trpc.ts';
import { DESTRUCTIVE } from '../../../kernel/meta.ts';
import { uuid, output } from '../../../kernel/text.ts';
import { inviteSchema } from '../invites.ts';
import { revokeInvite } from '../revoke.ts';

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
    const { invite, changed, group } = await revokeInvite(ctx.db, ctx.auth, input, ctx.services);
    return {
      invite,
      suggested_next: changed
        ? [
            `create_invite: create a new invite to "${group.name}" (group_id ${group.id})`,
            'list_invites: see your other invites (direction "sent")',
          ]
        : [`create_invite: create a new invite to "${group.name}"`],
    };
  });
