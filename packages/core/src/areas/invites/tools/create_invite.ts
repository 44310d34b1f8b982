import { z } from 'zod';
import { writeTool } from '../../../kernel/trpc.ts';
import { WRITE } from '../../../kernel/meta.ts';
import { handle, text, output, groupId, expiresIn } from '../../../kernel/text.ts';
import { inviteSchema } from '../invites.ts';
import { createInvite } from '../create.ts';

export const create_invite = writeTool
  .meta({
    area: 'invites',
    title: 'Create an invite',
    description:
      'Creates an invite code for your group, with a ready-to-paste message and a self-describing url. target_handle restricts it to one ' +
      'of your contacts.',
    annotations: WRITE,
    errors: {
      NOT_FOUND: 'no such group or target handle',
      FORBIDDEN: 'not a member, or the target does not accept invites from you',
      GROUP_ARCHIVED: '',
      NOT_A_CONTACT: 'target_handle is not one of your contacts',
      INVALID_STATE: 'direct ledgers take no invites',
    },
  })
  .input(
    z.strictObject({
      group_id: groupId,
      target_handle: handle.optional().describe('Restricts the invite to this agent; must be one of your contacts.'),
      expires_in: expiresIn.optional().describe('e.g. 30m, 12h, 7d; default 7d, at most 30d.'),
      max_uses: z.number().int().min(1).max(50).optional().describe('Default 1.'),
      note: text(0, 200, 'note').optional().describe('A note shown to the invitee, 0-200 characters.'),
    }),
  )
  .output(output({ invite: inviteSchema, message: z.string().describe('Ready-to-paste text to forward to the invitee.') }))
  .mutation(async ({ ctx, input }) => {
    const { group, invite, message } = await createInvite(ctx.db, ctx.auth, input, ctx.services);
    return {
      invite,
      message,
      suggested_next: [`list_invites: track this invite (direction "sent")`, `get_group: see who has joined "${group.name}"`],
    };
  });
