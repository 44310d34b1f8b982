import { z } from 'zod';
import { writeTool } from '../../trpc.ts';
import { WRITE } from '../../meta.ts';
import { ToolError, validationError } from '../../errors.ts';
import { handle, text, positiveAmountMinor, output, groupId } from '../../text.ts';
import { requireMembership, assertNotArchived, assertLedgerAccepted } from '../../domain/groups.ts';
import { formatMinor } from '../../domain/money.ts';
import { appendActivity } from '../../domain/activity.ts';
import { notify } from '../../domain/inbox.ts';
import { LedgerDelta, applyDelta, applyPending } from '../../domain/ledger/effects.ts';
import { activeMembersByHandle } from '../../domain/ledger/expense-store.ts';
import { paymentSchema, toPayments, assertNotOverpaying } from '../../domain/ledger/payments.ts';

export const record_payment = writeTool
  .meta({
    area: 'payments',
    title: 'Record a payment',
    description:
      'Records money sent from one member (from_handle, default the caller) to another (to_handle) to settle up, amount_minor > 0 in the group currency\'s ' +
      'minor units, optional note (0-200 chars). The caller must be the payer or the payee. Recorded by the payer → status pending until the payee confirms ' +
      '(confirm_payment) or rejects (reject_payment); the payer may cancel it while pending (cancel_payment). Recorded by the payee → confirmed at once. Only ' +
      'confirmed payments move balances (payer +amount, payee −amount); pending ones show in balance_pending_minor and block leave_group/archive_group for ' +
      'both. A payment may not exceed what the payer owes or the payee is owed unless allow_overpayment is true. Each transfer of suggest_settlements carries ready arguments for this tool. Consent (our rule): in a direct ledger the other agent has not ' +
      'accepted yet nothing can be booked — DIRECT_LEDGER_NOT_ACCEPTED (409); nobody can be put in debt in a ledger they have not agreed to share.',
    annotations: WRITE,
    errors: {
      VALIDATION_ERROR: 'a handle is not a member, or payer = payee',
      FORBIDDEN: 'caller neither payer nor payee, or not a member',
      NOT_FOUND: 'no such group',
      GROUP_ARCHIVED: 'the group is archived',
      DIRECT_LEDGER_NOT_ACCEPTED: 'a direct ledger the other agent has not accepted yet',
      OVERPAYMENT: 'amount_minor is more than the payer owes or the payee is owed (pending payments counted), without allow_overpayment; details say what is owed',
    },
  })
  .input(
    z.strictObject({
      group_id: groupId,
      to_handle: handle.describe('The payee: who received the money.'),
      from_handle: handle.optional().describe('The payer: who sent it (default the caller).'),
      amount_minor: positiveAmountMinor.describe('Amount in minor units, > 0.'),
      note: text(0, 200, 'note').optional().describe('A note for the other side, 0-200 characters, e.g. "bank transfer".'),
      allow_overpayment: z.boolean().optional().describe('true records a payment larger than what is owed (the difference then becomes a debt the other way); default false.'),
    }),
  )
  .output(output({ payment: paymentSchema }))
  .mutation(async ({ ctx, input }) => {
    const agentId = ctx.auth.agentId;
    const { group } = await requireMembership(ctx.db, input.group_id, agentId, { lock: true });
    assertNotArchived(group);
    await assertLedgerAccepted(ctx.db, group);
    const members = await activeMembersByHandle(ctx.db, group.id);
    const fromHandle = input.from_handle ?? ctx.auth.handle;
    const payer = members.get(fromHandle);
    if (!payer) throw validationError('from_handle', `@${fromHandle} is not an active member of this group`, 'not_a_member');
    const payee = members.get(input.to_handle);
    if (!payee) throw validationError('to_handle', `@${input.to_handle} is not an active member of this group`, 'not_a_member');
    if (payer.agentId === payee.agentId) throw validationError('to_handle', 'payer and payee must differ', 'same_member');
    if (agentId !== payer.agentId && agentId !== payee.agentId) {
      throw new ToolError('FORBIDDEN', 'You can record only payments you made or received.', { suggestedAction: 'Ask the payer or the payee to record it.' });
    }
    const amount = BigInt(input.amount_minor);
    if (!input.allow_overpayment) await assertNotOverpaying(ctx.db, group, payer, payee, amount);
    const now = ctx.services.now();
    const confirmed = agentId === payee.agentId;
    const p = await ctx.db.payment.create({
      data: {
        groupId: group.id,
        payerId: payer.agentId,
        payeeId: payee.agentId,
        amountMinor: amount,
        note: input.note || null,
        status: confirmed ? 'confirmed' : 'pending',
        recordedById: agentId,
        createdAt: now,
        updatedAt: now,
        resolvedAt: confirmed ? now : null,
      },
    });
    const money = formatMinor(amount, group.currency);
    if (confirmed) {
      await applyDelta(ctx.db, group.id, new LedgerDelta().addPayment(payer.agentId, payee.agentId, amount, 1n));
      await notify(ctx.db, { agentId: payer.agentId, kind: 'payment_confirmed', text: `@${payee.handle} confirmed receiving ${money} from you in "${group.name}"`, entityType: 'payment', entityId: p.id, groupId: group.id });
    } else {
      await applyPending(ctx.db, group.id, payer.agentId, payee.agentId, amount, 1n);
      await notify(ctx.db, {
        agentId: payee.agentId,
        kind: 'payment_to_confirm',
        text: `Payment awaiting your confirmation: @${payer.handle} says they paid you ${money} in "${group.name}"`,
        requiresAction: true,
        entityType: 'payment',
        entityId: p.id,
        groupId: group.id,
      });
    }
    await appendActivity(ctx.db, { groupId: group.id, actorId: agentId, action: 'payment.recorded', entityType: 'payment', entityId: p.id, after: { from: payer.agentId, to: payee.agentId, amount_minor: amount.toString(), status: p.status } });
    const [payment] = await toPayments(ctx.db, [p], group.currency);
    return {
      payment: payment!,
      suggested_next: confirmed
        ? [`get_balances: balances after this payment in "${group.name}"`, 'suggest_settlements: what is left to settle']
        : [
            `cancel_payment: withdraw payment ${p.id} while it is pending`,
            `get_payment: check whether @${payee.handle} confirmed payment ${p.id}`,
            `get_balances: pending amounts show as balance_pending_minor`,
          ],
    };
  });
