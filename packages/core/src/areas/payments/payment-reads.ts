/**
 * The read of a pending payment for confirm/reject/cancel_payment, optionally from a cache.
 *
 * A payment transition decides on the payment (its group, payer, payee, amount) and on its group's read
 * (access/group-reads.ts), then sends one batched write. Reading the payment is the call's only other round trip. A
 * payment this process recorded as pending is kept (`Services.paymentReads`, filled by record_payment once its write
 * committed), so a transition of it sends the write alone. Everything a transition decides on of a payment is fixed
 * when it is recorded except its status, and the write's guard moves the payment only from 'pending' (SQLSTATE KB001
 * otherwise, migration 20261126130000_write_guard_payments): a cached payment that another process confirmed,
 * rejected or cancelled meanwhile is decided again on a fresh read, which answers PAYMENT_NOT_PENDING. One that is
 * gone likewise answers NOT_FOUND. Only pending payments are kept; a transition drops the payment once it committed.
 */
import type { Pool } from 'pg';
import type { KeyedCache } from '../../kernel/context.ts';
import type { WriteBatch } from '../../kernel/write-batch.ts';
import { paymentNotFound, type PaymentRow } from './payments.ts';

/** A payment as a write decides on it: ids, amount in minor units, status and times as stored. */
export type PaymentForWrite = PaymentRow;

/** The payment as stored, minor units as text: $1 = payment id. */
const PAYMENT_FOR_WRITE_SQL = `SELECT id, group_id, payer_id, payee_id, amount_minor::text AS amount_minor, note, status, recorded_by,
    created_at, updated_at, resolved_at
  FROM payments WHERE id = $1::uuid`;

/** The payment as stored (minor units as bigint), read on the raw pool. Errors: NOT_FOUND (no such payment). */
async function readPayment(pool: Pool, paymentId: string): Promise<PaymentForWrite> {
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
 * Payment `paymentId` for a write decided into `batch`: from `cache` when it holds it (then a refusal or a failed guard
 * drops it and the call is decided again on a fresh read), else read in one statement on the raw pool. Once the
 * batch committed the payment leaves the cache: a write that decides on it changes its status. Errors (on a fresh
 * read): NOT_FOUND (no such payment).
 */
export async function readPaymentForWrite(
  pool: Pool,
  paymentId: string,
  batch: WriteBatch,
  cache: KeyedCache<object> | undefined,
): Promise<PaymentForWrite> {
  const cached = cache?.get(paymentId) as PaymentForWrite | undefined;
  if (cached) batch.decidedOnCachedRead(() => cache!.delete(paymentId), true);
  if (cache) batch.afterApplied(() => cache.delete(paymentId));
  return cached ?? (await readPayment(pool, paymentId));
}

/**
 * Keeps pending payment `payment`, just recorded by `batch`, in `cache` once the batch committed (not when it was
 * refused, stale or a replay), for its confirmation, rejection or cancellation (`readPaymentForWrite`).
 */
export function keepRecordedPayment(cache: KeyedCache<object> | undefined, batch: WriteBatch, payment: PaymentForWrite): void {
  if (cache && payment.status === 'pending') batch.afterApplied(() => cache.set(payment.id, payment));
}
