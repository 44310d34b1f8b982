/** Shared body of confirm/reject/cancel: lock the group, re-read the payment, check role and state. */
import type { Db } from '../../context.ts';
import { ToolError } from '../../errors.ts';
import { requireMembership } from '../groups.ts';
import { findPayment, assertPending } from './payments.ts';

export async function lockPendingPayment(db: Db, paymentId: string, agentId: string, role: 'payer' | 'payee', action: string) {
  const first = await findPayment(db, paymentId);
  const { group } = await requireMembership(db, first.groupId, agentId, { lock: true });
  const p = await findPayment(db, paymentId); // re-read under the group lock: serialises confirm vs cancel
  const owner = role === 'payee' ? p.payeeId : p.payerId;
  if (owner !== agentId) {
    throw new ToolError('FORBIDDEN', `Only the ${role} of payment ${p.id} can ${action} it.`, { details: { payment_id: p.id, required_role: role } });
  }
  assertPending(p, action === 'cancel' ? 'cancelled' : `${action}ed`);
  return { group, p };
}
