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
import { GROUP_FOR_WRITE_COLUMNS, GROUP_FOR_WRITE_JOINS, groupForWrite, type GroupForWriteRow } from '../../access/groups.ts';
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

/** The payment with its group, the caller's membership and the group's members (access/groups.ts): $1 = payment id, $2 = agent id. */
const PAYMENT_FOR_WRITE_SQL = `SELECT p.id AS p_id, p.payer_id AS p_payer_id, p.payee_id AS p_payee_id, p.amount_minor::text AS p_amount_minor,
    p.note AS p_note, p.status AS p_status, p.recorded_by AS p_recorded_by, p.created_at AS p_created_at,
    p.updated_at AS p_updated_at, p.resolved_at AS p_resolved_at, ${GROUP_FOR_WRITE_COLUMNS}
  FROM payments p JOIN groups g ON g.id = p.group_id ${GROUP_FOR_WRITE_JOINS}
  WHERE p.id = $1::uuid`;

/**
 * The payment as stored (minor units as bigint) and, from the same statement on the raw pool, what
 * readGroupForWrite answers for its group. NOT_FOUND when there is no such payment; then NOT_FOUND /
 * FORBIDDEN as readGroupForWrite (the caller is not an active member of the payment's group).
 */
async function readPaymentForWrite(pool: Pool, paymentId: string, agentId: string) {
  const { rows } = await pool.query<
    GroupForWriteRow & {
      p_id: string;
      p_payer_id: string;
      p_payee_id: string;
      p_amount_minor: string;
      p_note: string | null;
      p_status: string;
      p_recorded_by: string;
      p_created_at: Date;
      p_updated_at: Date;
      p_resolved_at: Date | null;
    }
  >({ name: 'kitty_read_payment_for_write', text: PAYMENT_FOR_WRITE_SQL, values: [paymentId, agentId] });
  const r = rows[0];
  if (!r) throw paymentNotFound(paymentId);
  const payment = {
    id: r.p_id,
    groupId: r.id,
    payerId: r.p_payer_id,
    payeeId: r.p_payee_id,
    amountMinor: BigInt(r.p_amount_minor),
    note: r.p_note,
    status: r.p_status,
    recordedById: r.p_recorded_by,
    createdAt: r.p_created_at,
    updatedAt: r.p_updated_at,
    resolvedAt: r.p_resolved_at,
  };
  return { payment, ...groupForWrite(r, r.id, agentId) };
}

/**
 * Moves pending payment `req.payment_id` to `req.to` (confirmed | rejected | cancelled) on behalf of `actor`:
 * decides from one read of the payment with its group, and stages the change in `batch`
 * (one round trip; the payment must still be pending when it is written, else the call is
 * decided again and answers PAYMENT_NOT_PENDING). `req.reason` (reject only) is appended to the
 * payer's notification and kept in the activity.
 * Errors: NOT_FOUND, FORBIDDEN (not a member; wrong party), PAYMENT_NOT_PENDING.
 */
export async function transitionPayment(
  db: Db,
  actor: Pick<Actor, 'agentId' | 'handle'>,
  batch: WriteBatch,
  req: { payment_id: string; to: PaymentResolution; reason?: string | undefined },
  services: Pick<Services, 'pool' | 'now'>,
) {
  const { payment_id: paymentId, to } = req;
  const agentId = actor.agentId;
  const { payment: p, group, refs } = await readPaymentForWrite(services.pool, paymentId, agentId);
  const { role, verb, notifyKind } = RESOLUTIONS[to];
  const owner = role === 'payee' ? p.payeeId : p.payerId;
  if (owner !== agentId) {
    throw new ToolError('FORBIDDEN', `Only the ${role} of payment ${p.id} can ${verb} it.`, {
      details: { payment_id: p.id, required_role: role },
    });
  }
  assertPending(p, to);
  const now = services.now();
  batch.guard(group.id, {
    lock: 'share',
    active: to === 'confirmed' ? [p.payerId, p.payeeId] : [agentId],
    payment: { id: p.id, from_status: 'pending', to_status: to, at: now.toISOString() },
  });
  batch.pending(p.payerId, p.payeeId, p.amountMinor, -1n);
  if (to === 'confirmed') batch.ledger(new LedgerDelta().addPayment(p.payerId, p.payeeId, p.amountMinor, 1n));
  batch.resolve('payment', p.id, `${to} by @${actor.handle}`);
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
