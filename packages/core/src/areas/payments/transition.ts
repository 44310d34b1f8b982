/**
 * Shared body of confirm/reject/cancel_payment: read the payment and its group, check role and
 * state, then resolve it (release the pending amounts; a confirmation also moves balances),
 * resolve the payee's confirmation request, notify the payer and log the activity — one batched
 * write whose guard is "the payment is still pending".
 */
import type { Db, Services } from '../../kernel/context.ts';
import type { Actor } from '../../kernel/actor.ts';
import { ToolError } from '../../kernel/errors.ts';
import { readGroupIdentities } from '../../access/group-reads.ts';
import { formatMinor } from '../../kernel/money.ts';
import type { WriteBatch } from '../../kernel/write-batch.ts';
import { LedgerDelta } from '../ledger/effects.ts';
import { assertPending, toPayments, type PaymentStatus } from './payments.ts';
import { readPaymentForWrite } from './payment-reads.ts';

export type PaymentResolution = Exclude<PaymentStatus, 'pending'>;

/** Who may move a pending payment to each final state, the verb in errors, and what the payer is told. */
const RESOLUTIONS: Record<PaymentResolution, { role: 'payer' | 'payee'; verb: string; notifyKind: string | null }> = {
  confirmed: { role: 'payee', verb: 'confirm', notifyKind: 'payment_confirmed' },
  rejected: { role: 'payee', verb: 'reject', notifyKind: 'payment_rejected' },
  cancelled: { role: 'payer', verb: 'cancel', notifyKind: null },
};

/**
 * Moves pending payment `req.payment_id` to `req.to` (confirmed | rejected | cancelled) on behalf of `actor`:
 * decides from the payment — kept in `services.paymentReads` when this process recorded it (payment-reads.ts) — and
 * the read of its group that add_expense and record_payment use — kept per group in `services.groupReads`
 * (access/group-reads.ts); a preview reads both afresh — and stages the change in `batch` (one round trip). The guard
 * carries the group's version as read; the payment must still be pending when it is written, else the call is
 * decided again and answers PAYMENT_NOT_PENDING. `req.reason` (reject only) is appended to the payer's notification
 * and kept in the activity.
 * Errors: NOT_FOUND (no such payment), FORBIDDEN (not an active member of its group; wrong party), PAYMENT_NOT_PENDING.
 */
export async function transitionPayment(
  db: Db,
  actor: Pick<Actor, 'agentId' | 'handle'>,
  batch: WriteBatch,
  req: { payment_id: string; to: PaymentResolution; reason?: string | undefined },
  services: Pick<Services, 'pool' | 'now' | 'groupReads' | 'paymentReads'>,
  opts: { dryRun?: boolean } = {},
) {
  const { payment_id: paymentId, to } = req;
  const agentId = actor.agentId;
  // A preview reads afresh: it is not sent, so no guard would catch a cached read that is out of date.
  const p = await readPaymentForWrite(services.pool, paymentId, batch, opts.dryRun ? undefined : services.paymentReads);
  const cache = opts.dryRun ? undefined : services.groupReads;
  const { group, refs, readVersion } = await readGroupIdentities(services.pool, p.groupId, agentId, batch, cache);
  const { role, verb, notifyKind } = RESOLUTIONS[to];
  const owner = role === 'payee' ? p.payeeId : p.payerId;
  if (owner !== agentId) {
    throw new ToolError('FORBIDDEN', `Only the ${role} of payment ${p.id} can ${verb} it.`, {
      details: { payment_id: p.id, required_role: role },
    });
  }
  assertPending(p, to);
  const now = services.now();
  // The group's version covers the roster: the caller was an active member in the read, and the payer and payee of a
  // pending payment cannot leave or be removed (leave.ts, remove-member.ts), so no 'active' check is needed.
  batch.guard(group.id, {
    lock: 'share',
    read_version: readVersion,
    payment: { id: p.id, from_status: 'pending', to_status: to, at: now.toISOString() },
  });
  batch.pending(p.payerId, p.payeeId, p.amountMinor, -1n);
  if (to === 'confirmed') batch.ledger(new LedgerDelta().addPayment(p.payerId, p.payeeId, p.amountMinor, 1n));
  // Only the payee holds an item to act on about a pending payment (record_payment's confirmation request).
  batch.resolve('payment', p.id, `${to} by @${actor.handle}`, p.payeeId);
  if (notifyKind) {
    const why = to === 'rejected' && req.reason ? `: ${req.reason}` : '';
    batch.notify({
      agentId: p.payerId,
      kind: notifyKind,
      text: `@${actor.handle} ${to} your payment of ${formatMinor(p.amountMinor, group.currency)} in "${group.name}"${why}`,
      entityType: 'payment',
      entityId: p.id,
      groupId: group.id,
    });
  }
  batch.activity({
    groupId: group.id,
    actorId: agentId,
    action: `payment.${to}`,
    entityType: 'payment',
    entityId: p.id,
    before: { status: 'pending' },
    after: to === 'rejected' ? { status: to, reason: req.reason ?? null } : { status: to },
  });
  batch.event({
    type: `payment.${to}`,
    groupId: group.id,
    actorId: agentId,
    recipients: [p.payerId, p.payeeId],
    data: {
      payment_id: p.id,
      amount_minor: p.amountMinor.toString(),
      currency: group.currency,
      status: to,
      ...(to === 'rejected' && req.reason ? { reason: req.reason } : {}),
    },
    link: { entityType: 'payment', entityId: p.id },
  });
  const [payment] = await toPayments(db, [{ ...p, status: to, resolvedAt: now, updatedAt: now }], group.currency, refs);
  return { group, payment: payment! };
}
