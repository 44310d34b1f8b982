import { z } from 'zod';
import { writeTool } from '../../trpc.ts';
import { WRITE } from '../../meta.ts';
import { uuid, idempotencyKey, output } from '../../text.ts';
import { appendActivity } from '../../domain/activity.ts';
import { resolveAction } from '../../domain/inbox.ts';
import { applyPending } from '../../domain/ledger/effects.ts';
import { paymentSchema, toPayments } from '../../domain/ledger/payments.ts';
import { lockPendingPayment } from '../../domain/ledger/transition.ts';

export const cancel_payment = writeTool
  .meta({
    area: 'payments',
    title: 'Cancel a pending payment',
    description:
      'The payer withdraws a payment that is still pending: it becomes cancelled, balances stay as they were, the pending amounts are released and the payee\'s confirmation request is resolved. ' +
      'Errors: FORBIDDEN (only the payer may cancel), PAYMENT_NOT_PENDING (409; details.status, e.g. already confirmed), NOT_FOUND.',
    kind: 'write',
    annotations: WRITE,
    errors: ['NOT_FOUND', 'PAYMENT_NOT_PENDING'],
  })
  .input(z.strictObject({ payment_id: uuid, idempotency_key: idempotencyKey }))
  .output(output({ payment: paymentSchema }))
  .mutation(async ({ ctx, input }) => {
    const agentId = ctx.auth!.agentId;
    const { group, p } = await lockPendingPayment(ctx.db, input.payment_id, agentId, 'payer', 'cancel');
    const now = ctx.services.now();
    await applyPending(ctx.db, group.id, p.payerId, p.payeeId, p.amountMinor, -1n);
    const updated = await ctx.db.payment.update({ where: { id: p.id }, data: { status: 'cancelled', resolvedAt: now, updatedAt: now } });
    await resolveAction(ctx.db, { entityType: 'payment', entityId: p.id });
    await appendActivity(ctx.db, { groupId: group.id, actorId: agentId, action: 'payment.cancelled', entityType: 'payment', entityId: p.id, before: { status: 'pending' }, after: { status: 'cancelled' } });
    const [payment] = await toPayments(ctx.db, [updated], group.currency);
    return { payment: payment!, suggested_next: [`record_payment: record the payment again if you do send it`, `get_balances: balances in "${group.name}"`] };
  });
