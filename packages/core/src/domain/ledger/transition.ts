/**
 * Shared body of confirm/reject/cancel_payment: lock the group, re-read the payment, check role
 * and state, then resolve it (release the pending amounts; a confirmation also moves balances),
 * resolve the payee's confirmation request, notify the payer and log the activity.
 */
import type { Db, ToolContext } from '../../context.ts';
import { ToolError } from '../../errors.ts';
import { requireMembership } from '../groups.ts';
import { notify, resolveAction } from '../inbox.ts';
import { formatMinor } from '../money.ts';
import { appendActivity } from '../activity.ts';
import { LedgerDelta, applyDelta, applyPending } from './effects.ts';
import { findPayment, assertPending, toPayments, type PaymentStatus } from './payments.ts';

export type PaymentResolution = Exclude<PaymentStatus, 'pending'>;

/** Who may move a pending payment to each final state, the verb in errors, and what the payer is told. */
const RESOLUTIONS: Record<PaymentResolution, { role: 'payer' | 'payee'; verb: string; notifyKind: string | null }> = {
  confirmed: { role: 'payee', verb: 'confirm', notifyKind: 'payment_confirmed' },
  rejected: { role: 'payee', verb: 'reject', notifyKind: 'payment_rejected' },
  cancelled: { role: 'payer', verb: 'cancel', notifyKind: null },
};

async function lockPendingPayment(db: Db, paymentId: string, agentId: string, to: PaymentResolution) {
  const { role, verb } = RESOLUTIONS[to];
  const first = await findPayment(db, paymentId);
  const { group } = await requireMembership(db, first.groupId, agentId, { lock: true });
  const p = await findPayment(db, paymentId); // re-read under the group lock: serialises confirm vs cancel
  const owner = role === 'payee' ? p.payeeId : p.payerId;
  if (owner !== agentId) {
    throw new ToolError('FORBIDDEN', `Only the ${role} of payment ${p.id} can ${verb} it.`, {
      details: { payment_id: p.id, required_role: role },
    });
  }
  assertPending(p, to);
  return { group, p };
}

/**
 * Moves a pending payment to `to` (confirmed | rejected | cancelled) on behalf of the caller.
 * `reason` (reject only) is appended to the payer's notification and kept in the activity.
 * Errors: NOT_FOUND, FORBIDDEN (wrong party), PAYMENT_NOT_PENDING.
 */
export async function transitionPayment(
  ctx: Pick<ToolContext, 'db' | 'services' | 'auth'>,
  paymentId: string,
  to: PaymentResolution,
  opts: { reason?: string | undefined } = {},
) {
  const { db } = ctx;
  const agentId = ctx.auth!.agentId;
  const { group, p } = await lockPendingPayment(db, paymentId, agentId, to);
  const now = ctx.services.now();
  await applyPending(db, group.id, p.payerId, p.payeeId, p.amountMinor, -1n);
  if (to === 'confirmed') await applyDelta(db, group.id, new LedgerDelta().addPayment(p.payerId, p.payeeId, p.amountMinor, 1n));
  const updated = await db.payment.update({ where: { id: p.id }, data: { status: to, resolvedAt: now, updatedAt: now } });
  await resolveAction(db, { entityType: 'payment', entityId: p.id });
  const { notifyKind } = RESOLUTIONS[to];
  if (notifyKind) {
    const why = to === 'rejected' && opts.reason ? `: ${opts.reason}` : '';
    await notify(db, {
      agentId: p.payerId,
      kind: notifyKind,
      text: `@${ctx.auth!.handle} ${to} your payment of ${formatMinor(p.amountMinor, group.currency)} in "${group.name}"${why}`,
      entityType: 'payment',
      entityId: p.id,
      groupId: group.id,
    });
  }
  const after = to === 'rejected' ? { status: to, reason: opts.reason ?? null } : { status: to };
  await appendActivity(db, {
    groupId: group.id,
    actorId: agentId,
    action: `payment.${to}`,
    entityType: 'payment',
    entityId: p.id,
    before: { status: 'pending' },
    after,
  });
  const [payment] = await toPayments(db, [updated], group.currency);
  return { group, payment: payment! };
}
