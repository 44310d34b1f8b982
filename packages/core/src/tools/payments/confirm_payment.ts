import { z } from 'zod';
import { writeTool } from '../../trpc.ts';
import { WRITE } from '../../meta.ts';
import { uuid, idempotencyKey, output } from '../../text.ts';
import { formatMinor } from '../../domain/money.ts';
import { appendActivity } from '../../domain/activity.ts';
import { notify, resolveAction } from '../../domain/inbox.ts';
import { LedgerDelta, applyDelta, applyPending } from '../../domain/ledger/effects.ts';
import { paymentSchema, toPayments } from '../../domain/ledger/payments.ts';
import { lockPendingPayment } from '../../domain/ledger/transition.ts';

export const confirm_payment = writeTool
  .meta({
    area: 'payments',
    title: 'Confirm a payment you received',
    description:
      'The payee confirms a pending payment: it becomes confirmed and moves balances (payer +amount, payee −amount, minor units); the pending amounts are released; the payer is notified. ' +
      'Errors: FORBIDDEN (only the payee may confirm), PAYMENT_NOT_PENDING (409; details.status, e.g. already cancelled), NOT_FOUND.',
    kind: 'write',
    annotations: WRITE,
    errors: ['NOT_FOUND', 'PAYMENT_NOT_PENDING'],
  })
  .input(z.strictObject({ payment_id: uuid, idempotency_key: idempotencyKey }))
  .output(output({ payment: paymentSchema }))
  .mutation(async ({ ctx, input }) => {
    const agentId = ctx.auth!.agentId;
    const { group, p } = await lockPendingPayment(ctx.db, input.payment_id, agentId, 'payee', 'confirm');
    const now = ctx.services.now();
    await applyPending(ctx.db, group.id, p.payerId, p.payeeId, p.amountMinor, -1n);
    await applyDelta(ctx.db, group.id, new LedgerDelta().addPayment(p.payerId, p.payeeId, p.amountMinor, 1n));
    const updated = await ctx.db.payment.update({ where: { id: p.id }, data: { status: 'confirmed', resolvedAt: now, updatedAt: now } });
    await resolveAction(ctx.db, { entityType: 'payment', entityId: p.id });
    await notify(ctx.db, { agentId: p.payerId, kind: 'payment_confirmed', text: `@${ctx.auth!.handle} confirmed your payment of ${formatMinor(p.amountMinor, group.currency)} in "${group.name}"`, entityType: 'payment', entityId: p.id, groupId: group.id });
    await appendActivity(ctx.db, { groupId: group.id, actorId: agentId, action: 'payment.confirmed', entityType: 'payment', entityId: p.id, before: { status: 'pending' }, after: { status: 'confirmed' } });
    const [payment] = await toPayments(ctx.db, [updated], group.currency);
    return { payment: payment!, suggested_next: [`get_balances: balances after this payment in "${group.name}"`, 'suggest_settlements: what is left to settle'] };
  });
