import { z } from 'zod';
import { writeTool } from '../../trpc.ts';
import { WRITE } from '../../meta.ts';
import { uuid, text, idempotencyKey, output } from '../../text.ts';
import { formatMinor } from '../../domain/money.ts';
import { appendActivity } from '../../domain/activity.ts';
import { notify, resolveAction } from '../../domain/inbox.ts';
import { applyPending } from '../../domain/ledger/effects.ts';
import { paymentSchema, toPayments } from '../../domain/ledger/payments.ts';
import { lockPendingPayment } from '../../domain/ledger/transition.ts';

export const reject_payment = writeTool
  .meta({
    area: 'payments',
    title: 'Reject a payment',
    description:
      'The payee rejects a pending payment (the money did not arrive): it becomes rejected, balances stay as they were, the pending amounts are released and the payer is notified (with the optional reason, 0-200 chars). ' +
      'Errors: FORBIDDEN (only the payee may reject), PAYMENT_NOT_PENDING (409; details.status), NOT_FOUND.',
    kind: 'write',
    annotations: WRITE,
    errors: ['NOT_FOUND', 'PAYMENT_NOT_PENDING'],
  })
  .input(z.strictObject({ payment_id: uuid, reason: text(0, 200, 'reason').optional(), idempotency_key: idempotencyKey }))
  .output(output({ payment: paymentSchema }))
  .mutation(async ({ ctx, input }) => {
    const agentId = ctx.auth!.agentId;
    const { group, p } = await lockPendingPayment(ctx.db, input.payment_id, agentId, 'payee', 'reject');
    const now = ctx.services.now();
    await applyPending(ctx.db, group.id, p.payerId, p.payeeId, p.amountMinor, -1n);
    const updated = await ctx.db.payment.update({ where: { id: p.id }, data: { status: 'rejected', resolvedAt: now, updatedAt: now } });
    await resolveAction(ctx.db, { entityType: 'payment', entityId: p.id });
    await notify(ctx.db, {
      agentId: p.payerId,
      kind: 'payment_rejected',
      text: `@${ctx.auth!.handle} rejected your payment of ${formatMinor(p.amountMinor, group.currency)} in "${group.name}"${input.reason ? `: ${input.reason}` : ''}`,
      entityType: 'payment',
      entityId: p.id,
      groupId: group.id,
    });
    await appendActivity(ctx.db, { groupId: group.id, actorId: agentId, action: 'payment.rejected', entityType: 'payment', entityId: p.id, before: { status: 'pending' }, after: { status: 'rejected', reason: input.reason ?? null } });
    const [payment] = await toPayments(ctx.db, [updated], group.currency);
    return { payment: payment!, suggested_next: [`get_balances: balances in "${group.name}" (unchanged)`] };
  });
