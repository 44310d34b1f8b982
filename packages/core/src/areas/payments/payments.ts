/**
 * Payments (settling up; DESIGN.md §2). States: pending → confirmed | rejected | cancelled;
 * recorded by the payee → confirmed at once. Only confirmed payments move balances; pending
 * ones show in memberships.balance_pending_minor and pending_count (which block leave/archive).
 */
import { z } from 'zod';
import { payWithFor, payWithSchema } from '../account/payout.ts';
import type { Db } from '../../kernel/context.ts';
import { ToolError } from '../../kernel/errors.ts';
import { uuid, timestamp, agentRef } from '../../kernel/text.ts';
import { formatMinor, toNumber } from '../../kernel/money.ts';
import { toAgentRef } from '../../access/agents.ts';
import { agentsById } from '../expenses/view.ts';

export const PAYMENT_STATUSES = ['pending', 'confirmed', 'rejected', 'cancelled'] as const;
export type PaymentStatus = (typeof PAYMENT_STATUSES)[number];

export const paymentSchema = z.object({
  payment_id: uuid,
  group_id: uuid,
  from: agentRef.describe('Payer.'),
  to: agentRef.describe('Payee.'),
  amount_minor: z.number().int().describe('> 0.'),
  amount: z.string(),
  currency: z.string(),
  note: z.string().nullable(),
  status: z.enum(PAYMENT_STATUSES),
  recorded_by: agentRef,
  created_at: timestamp,
  updated_at: timestamp,
  resolved_at: timestamp.nullable().describe('When it left pending.'),
});
export type PaymentOut = z.infer<typeof paymentSchema>;
/** A payment as get_payment and list_payments show it: with pay_with for the payer of a pending one. */
export const paymentWithPaySchema = paymentSchema.extend({ pay_with: payWithSchema.optional() });
export type PaymentWithPay = z.infer<typeof paymentWithPaySchema>;

/** A payment as stored: ids, amount in minor units, status and times. */
export type PaymentRow = {
  id: string;
  groupId: string;
  payerId: string;
  payeeId: string;
  amountMinor: bigint;
  note: string | null;
  status: string;
  recordedById: string;
  createdAt: Date;
  updatedAt: Date;
  resolvedAt: Date | null;
};

/** The wire form of payments; the agents they name are loaded in one query unless all are `known`. */
export async function toPayments(
  db: Db,
  rows: PaymentRow[],
  currency: string,
  known?: ReadonlyMap<string, { id: string; handle: string; displayName: string }>,
): Promise<PaymentOut[]> {
  const ids = rows.flatMap((r) => [r.payerId, r.payeeId, r.recordedById]);
  const agents = known && ids.every((id) => known.has(id)) ? known : await agentsById(db, ids);
  const ref = (id: string) => toAgentRef(agents.get(id) ?? { id, handle: 'unknown', displayName: 'unknown' });
  return rows.map((r) => ({
    payment_id: r.id,
    group_id: r.groupId,
    from: ref(r.payerId),
    to: ref(r.payeeId),
    amount_minor: toNumber(r.amountMinor),
    amount: formatMinor(r.amountMinor, currency),
    currency,
    note: r.note,
    status: r.status as PaymentStatus,
    recorded_by: ref(r.recordedById),
    created_at: r.createdAt.toISOString(),
    updated_at: r.updatedAt.toISOString(),
    resolved_at: r.resolvedAt?.toISOString() ?? null,
  }));
}

/** NOT_FOUND for a payment id that names no payment. */
export function paymentNotFound(paymentId: string): ToolError {
  return new ToolError('NOT_FOUND', `No payment with payment_id ${paymentId}.`, {
    suggestedAction: 'list_payments shows the payments of a group.',
  });
}

export async function findPayment(db: Db, paymentId: string) {
  const p = await db.payment.findUnique({ where: { id: paymentId } });
  if (!p) throw paymentNotFound(paymentId);
  return p;
}

/** PAYMENT_NOT_PENDING (409) unless pending. */
export function assertPending(p: { id: string; status: string }, action: string): void {
  if (p.status !== 'pending') {
    throw new ToolError('PAYMENT_NOT_PENDING', `Payment ${p.id} is ${p.status}; only a pending payment can be ${action}.`, {
      details: { payment_id: p.id, status: p.status },
    });
  }
}

/**
 * Refuses a payment larger than what is owed (OVERPAYMENT, 409): more than the payer owes in the
 * group, or more than the payee is owed — both counting pending payments as if confirmed, so the
 * same debt is not paid twice. Balances are the members' as read (minor units); a batched write
 * guards them, so a payment decided on balances that changed meanwhile is decided again.
 * An overpayment is allowed only when the caller says so (record_payment allow_overpayment).
 */
export function assertNotOverpaying(
  group: { id: string; currency: string },
  payer: { agentId: string; handle: string; balanceMinor: bigint; balancePendingMinor: bigint },
  payee: { agentId: string; handle: string; balanceMinor: bigint; balancePendingMinor: bigint },
  amount: bigint,
): void {
  const effective = (m: typeof payer) => m.balanceMinor + m.balancePendingMinor;
  const payerOwes = effective(payer) < 0n ? -effective(payer) : 0n;
  const payeeIsOwed = effective(payee) > 0n ? effective(payee) : 0n;
  const max = payerOwes < payeeIsOwed ? payerOwes : payeeIsOwed;
  if (amount <= max) return;
  const f = (v: bigint) => `${formatMinor(v, group.currency)} (${v} minor units)`;
  throw new ToolError(
    'OVERPAYMENT',
    `${f(amount)} is more than is owed: @${payer.handle} owes ${f(payerOwes)} and @${payee.handle} is owed ${f(payeeIsOwed)} in this group ` +
      '(pending payments counted), so at most ' +
      f(max) +
      ' settles it.',
    {
      details: {
        amount_minor: toNumber(amount),
        payer_owes_minor: toNumber(payerOwes),
        payer_owes: formatMinor(payerOwes, group.currency),
        payee_is_owed_minor: toNumber(payeeIsOwed),
        payee_is_owed: formatMinor(payeeIsOwed, group.currency),
        max_minor: toNumber(max),
        max: formatMinor(max, group.currency),
      },
      suggestedAction:
        max > 0n
          ? `Record ${max} (${formatMinor(max, group.currency)}) instead, or pass allow_overpayment: true if more really changed hands.`
          : 'Nothing is owed between them; pass allow_overpayment: true if money really changed hands.',
    },
  );
}

/**
 * Adds pay_with to the pending payments the caller pays whose payee published payout methods (reference: the payment id).
 * `known`: stored payout methods by agent id, when already read (payWithFor).
 */
export async function withPayWith(
  db: Db,
  callerId: string,
  payments: PaymentOut[],
  known?: ReadonlyMap<string, unknown>,
): Promise<PaymentWithPay[]> {
  const pending = payments.filter((p) => p.status === 'pending');
  if (!pending.length) return payments;
  const ways = await payWithFor(
    db,
    callerId,
    payments[0]!.currency,
    pending.map((p) => ({ fromId: p.from.agent_id, toId: p.to.agent_id, amountMinor: p.amount_minor, reference: p.payment_id })),
    known,
  );
  return payments.map((p) => (ways.has(p.payment_id) ? { ...p, pay_with: ways.get(p.payment_id)! } : p));
}
