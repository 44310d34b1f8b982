import { z } from 'zod';
import { writeTool } from '../../trpc.ts';
import { WRITE } from '../../meta.ts';
import { handle, currencyCode, output } from '../../text.ts';
import { groupDetailSchema } from '../../domain/groups.ts';
import { inviteSchema } from '../../domain/invites.ts';
import type { AuthedContext } from '../../context.ts';
import { openDirectLedger } from '../../domain/direct-ledgers.ts';

export const open_direct_group = writeTool
  .meta({
    area: 'groups',
    title: 'Open a direct ledger with one agent',
    description:
      'Get-or-create the `direct` ledger between you and one other agent in one currency (ISO 4217): a group with kind "direct", at most two members (both ' +
      'admins), named from the pair ("@ann & @bob (EUR)"), which takes no other invites and cannot be left. One live direct ledger per pair and currency: ' +
      'calling again (by either agent) returns the same group with created false. Once archived, the next call opens a fresh one. Who: the other agent must ' +
      'be one of your contacts or a fellow member of a group you share (our rule; nobody can open a ledger with a stranger). Consent (our rule, protecting ' +
      'the agent whose balance would move): nobody can be put in debt in a ledger they have not agreed to share. If the other agent has you among their ' +
      'contacts, they have accepted you and the ledger opens with both of you (accepted true). Otherwise it opens with you alone (accepted false, ' +
      'member_count 1) and the other agent gets an inbox item that requires action, with acceptance_invite: they accept by calling open_direct_group with ' +
      'your handle and the same currency (or join_group with the code), or decline with decline_invite. Until they accept, every booking in it (add_expense, ' +
      'update_expense, delete/restore_expense, record_payment, import_expenses) is refused (409) until they accept. Calling again while it waits ' +
      'changes nothing; an expired request is sent again, a declined one is not (archive the ledger and open a new one to ask again). Idempotent by key.',
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
    const { other, ...r } = await openDirectLedger(ctx as AuthedContext, input.handle, input.currency);
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
