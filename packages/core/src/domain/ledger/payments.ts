/**
 * Payments (settling up; DESIGN.md §2). States: pending → confirmed | rejected | cancelled;
 * recorded by the payee → confirmed at once. Only confirmed payments move balances; pending
 * ones show in memberships.balance_pending_minor and pending_count (which block leave/archive).
 */
import { z } from 'zod';
import type { Db } from '../../context.ts';
import { ToolError } from '../../errors.ts';
import { uuid, timestamp, agentRef } from '../../text.ts';
import { formatMinor, toNumber } from '../money.ts';
import { toAgentRef } from '../agents.ts';
import { agentsById } from './expense-view.ts';

export const PAYMENT_STATUSES = ['pending', 'confirmed', 'rejected', 'cancelled'] as const;
export type PaymentStatus = (typeof PAYMENT_STATUSES)[number];

export const paymentSchema = z.object({
  payment_id: uuid,
  group_id: uuid,
  from: agentRef.describe('The payer: the one who sent the money.'),
  to: agentRef.describe('The payee: the one who received it.'),
  amount_minor: z.number().int().describe('Positive, group-currency minor units.'),
  amount: z.string(),
  currency: z.string(),
  note: z.string().nullable(),
  status: z.enum(PAYMENT_STATUSES),
  recorded_by: agentRef,
  created_at: timestamp,
  updated_at: timestamp,
  resolved_at: timestamp.nullable().describe('When it was confirmed, rejected or cancelled.'),
});
export type PaymentOut = z.infer<typeof paymentSchema>;

type PaymentRow = {
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

export async function toPayments(db: Db, rows: PaymentRow[], currency: string): Promise<PaymentOut[]> {
  const agents = await agentsById(
    db,
    rows.flatMap((r) => [r.payerId, r.payeeId, r.recordedById]),
  );
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

export async function findPayment(db: Db, paymentId: string) {
  const p = await db.payment.findUnique({ where: { id: paymentId } });
  if (!p)
    throw new ToolError('NOT_FOUND', `No payment with payment_id ${paymentId}.`, {
      suggestedAction: 'list_payments shows the payments of a group.',
    });
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
 * same debt is not paid twice. Call with the group row locked. Amounts in minor units.
 * An overpayment is allowed only when the caller says so (record_payment allow_overpayment).
 */
export async function assertNotOverpaying(
  db: Db,
  group: { id: string; currency: string },
  payer: { agentId: string; handle: string },
  payee: { agentId: string; handle: string },
  amount: bigint,
): Promise<void> {
  const rows = await db.membership.findMany({
    where: { groupId: group.id, agentId: { in: [payer.agentId, payee.agentId] } },
    select: { agentId: true, balanceMinor: true, balancePendingMinor: true },
  });
  const effective = (id: string) => {
    const r = rows.find((m) => m.agentId === id);
    return r ? r.balanceMinor + r.balancePendingMinor : 0n;
  };
  const payerOwes = effective(payer.agentId) < 0n ? -effective(payer.agentId) : 0n;
  const payeeIsOwed = effective(payee.agentId) > 0n ? effective(payee.agentId) : 0n;
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
