/**
 * Shared body of confirm/reject/cancel_payment: read the payment and its group, check role and
 * state, then resolve it (release the pending amounts; a confirmation also moves balances),
 * resolve the payee's confirmation request, notify the payer and log the activity — one batched
 * write whose guard is "the payment is still pending".
 */
import type { Pool } from 'pg';
import type { Db, Services } from '../../kernel/context.ts';
import type { Actor } from '../../kernel/actor.ts';
import { ToolError } from '../../kernel/errors.ts';
import { readGroupIdentities } from '../../access/group-reads.ts';
import { formatMinor } from '../../kernel/money.ts';
import type { WriteBatch } from '../../kernel/write-batch.ts';
import { LedgerDelta } from '../ledger/effects.ts';
import { assertPending, paymentNotFound, toPayments, type PaymentStatus } from './payments.ts';

export type PaymentResolution = Exclude<PaymentStatus, 'pending'>;

/** Who may move a pending payment to each final state, the verb in errors, and what the payer is told. */
const RESOLUTIONS: Record<PaymentResolution, { role: 'payer' | 'payee'; verb: string; notifyKind: string | null }> = {
  confirmed: { role: 'payee', verb: 'confirm', notifyKind: 'payment_confirmed' },
  rejected: { role: 'payee', verb: 'reject', notifyKind: 'payment_rejected' },
  cancelled: { role: 'payer', verb: 'cancel', notifyKind: null },
};

/** The payment as stored, minor units as text: $1 = payment id. */
const PAYMENT_FOR_WRITE_SQL = `SELECT id, group_id, payer_id, payee_id, amount_minor::text AS amount_minor, note, status, recorded_by,
    created_at, updated_at, resolved_at
  FROM payments WHERE id = $1::uuid`;

/** The payment as stored (minor units as bigint), read on the raw pool. Errors: NOT_FOUND (no such payment). */
async function readPaymentForWrite(pool: Pool, paymentId: string) {
  const { rows } = await pool.query<{
    id: string;
    group_id: string;
    payer_id: string;
    payee_id: string;
    amount_minor: string;
    note: string | null;
    status: string;
    recorded_by: string;
    created_at: Date;
    updated_at: Date;
    resolved_at: Date | null;
  }>({ name: 'kitty_read_payment', text: PAYMENT_FOR_WRITE_SQL, values: [paymentId] });
  const r = rows[0];
  if (!r) throw paymentNotFound(paymentId);
  return {
    id: r.id,
    groupId: r.group_id,
    payerId: r.payer_id,
    payeeId: r.payee_id,
    amountMinor: BigInt(r.amount_minor),
    note: r.note,
    status: r.status,
    recordedById: r.recorded_by,
    createdAt: r.created_at,
    updatedAt: r.updated_at,
    resolvedAt: r.resolved_at,
  };
}

/**
 * Moves pending payment `req.payment_id` to `req.to` (confirmed | rejected | cancelled) on behalf of `actor`:
 * decides from a read of the payment and the read of its group that add_expense and record_payment use — kept per
 * group in `services.groupReads` (access/group-reads.ts; a preview reads afresh), so into a busy group the payment is
 * the only row read — and stages the change in `batch` (one round trip). The guard carries the group's version as read;
 * the payment must still be pending when it is written, else the call is decided again and answers
 * PAYMENT_NOT_PENDING. `req.reason` (reject only) is appended to the payer's notification and kept in the activity.
 * Errors: NOT_FOUND (no such payment), FORBIDDEN (not an active member of its group; wrong party), PAYMENT_NOT_PENDING.
 */
export async function transitionPayment(
  db: Db,
  actor: Pick<Actor, 'agentId' | 'handle'>,
  batch: WriteBatch,
  req: { payment_id: string; to: PaymentResolution; reason?: string | undefined },
  services: Pick<Services, 'pool' | 'now' | 'groupReads'>,
  opts: { dryRun?: boolean } = {},
) {
  const { payment_id: paymentId, to } = req;
  const agentId = actor.agentId;
  const p = await readPaymentForWrite(services.pool, paymentId);
  // A preview reads afresh: it is not sent, so no guard would catch a cached read that is out of date.
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
