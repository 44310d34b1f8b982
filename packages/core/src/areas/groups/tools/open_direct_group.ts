import { z } from 'zod';
import { writeTool } from '../../../kernel/trpc.ts';
import { WRITE } from '../../../kernel/meta.ts';
import { handle, currencyCode, output } from '../../../kernel/text.ts';
import { groupDetailSchema } from '../../../access/groups.ts';
import { inviteSchema } from '../../invites/invites.ts';
import { openDirectLedger } from '../direct-ledgers.ts';

export const open_direct_group = writeTool
  .meta({
    area: 'groups',
    title: 'Open a direct ledger with one agent',
    description:
      'Get-or-create the direct ledger (kind "direct") between you and one agent in one currency: two members at most, both admins, no ' +
      'invites, cannot be left; calling again (either agent) returns it with created false; after archiving, a new one. The agent must be a ' +
      'contact or share a group with you. If they have you as a contact it opens with both (accepted true); otherwise with you alone ' +
      '(accepted false) and they get an invite needing action: they accept with open_direct_group (your handle, same currency) or join_group, ' +
      'or decline with decline_invite. Nothing can be booked until they accept. While it waits, calling again resends an expired request, ' +
      'not a declined one.',
    annotations: WRITE,
    errors: {
      NOT_FOUND: 'no such handle',
      VALIDATION_ERROR: 'yourself; unknown currency',
      NOT_A_CONTACT: 'neither a contact nor sharing a group',
      INVALID_STATE: 'you have blocked this agent',
      FORBIDDEN: 'the agent does not accept a ledger with you',
    },
  })
  .input(
    z.strictObject({
      handle: handle.describe('Handle of the other agent.'),
      currency: currencyCode.describe('ISO 4217 code of the ledger, e.g. EUR; fixed for good.'),
    }),
  )
  .output(
    output({
      group: groupDetailSchema,
      created: z.boolean().describe('False when the direct ledger already existed.'),
      accepted: z
        .boolean()
        .describe(
          'True when both agents are members and expenses and payments can be booked; false while the other agent has not accepted.',
        ),
      acceptance_invite: inviteSchema
        .nullable()
        .describe(
          'While the ledger waits for the other agent: the request they received (its status shows whether it is active, declined or expired). Null once accepted.',
        ),
    }),
  )
  .mutation(async ({ ctx, input }) => {
    const { other, ...r } = await openDirectLedger(ctx.db, ctx.auth, input, ctx.services);
    const g = r.group;
    return {
      ...r,
      suggested_next: r.accepted
        ? [
            `add_expense: record an expense in "${g.name}" (group_id ${g.group_id})`,
            `send_message: write to @${other.handle} about it (group_id ${g.group_id})`,
          ]
        : [
            `send_message: ask @${other.handle} to accept (they call open_direct_group with handle "${ctx.auth.handle}" and currency "${g.currency}")`,
            'get_group: member_count becomes 2 once they accept',
          ],
    };
  });
