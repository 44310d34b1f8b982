/**
 * Recording a payment (record_payment): one member paid another outside Kitty. Recorded by the
 * payee it is confirmed at once and moves balances; recorded by the payer it waits (pending) for
 * the payee's confirmation. Activity and inbox item in the same batched write.
 */
import type { Db, Services } from '../../kernel/context.ts';
import type { Actor } from '../../kernel/actor.ts';
import { ToolError, validationError } from '../../kernel/errors.ts';
import { assertNotArchived, assertLedgerAccepted } from '../../access/groups.ts';
import { readGroupIdentities } from '../../access/group-reads.ts';
import { notAMember } from '../../access/members.ts';
import { formatMinor } from '../../kernel/money.ts';
import type { BatchGuard, WriteBatch } from '../../kernel/write-batch.ts';
import { LedgerDelta } from '../ledger/effects.ts';
import { toPayments, assertNotOverpaying } from './payments.ts';
import { keepRecordedPayment } from './payment-reads.ts';

/** A payment as validated on the wire: amount_minor > 0 in the group currency's minor units; from_handle defaults to the caller; note 0-200 characters. */
export interface PaymentRequest {
  group_id: string;
  to_handle: string;
  from_handle?: string | undefined;
  amount_minor: number;
  note?: string | undefined;
  allow_overpayment?: boolean | undefined;
}

/**
 * Records `req` in group `req.group_id` on behalf of `actor`, who must be the payer
 * or the payee: decides from one read of the group and its members — kept per group in
 * `services.groupReads` (access/group-reads.ts; a preview reads afresh) — and stages the rows in
 * `batch` (one round trip). The guard carries the group's version as read; without allow_overpayment
 * also the overpayment rule, which the database checks on the balances as they are when it writes
 * (a fresh read is checked here first, to answer OVERPAYMENT with what is owed); for a pending
 * payment the MD5 of the payee's payout methods, which the answer's pay_with shows. Payee recording → confirmed (balances move, the
 * payer is told); payer recording → pending (balance_pending moves, the payee gets an item
 * requiring action). Returns the group, the payment (wire shape), whether it is confirmed, the
 * payee's handle, and the members' stored payout methods by agent id (for pay_with).
 * Errors: NOT_FOUND (group), FORBIDDEN (not a member; neither payer nor payee), GROUP_ARCHIVED,
 * DIRECT_LEDGER_NOT_ACCEPTED, VALIDATION_ERROR (from_handle/to_handle not an active member; the
 * same member), OVERPAYMENT (more than the payer owes the payee, unless allow_overpayment).
 */
export async function recordPayment(
  db: Db,
  actor: Pick<Actor, 'agentId' | 'handle'>,
  batch: WriteBatch,
  req: PaymentRequest,
  services: Pick<Services, 'pool' | 'now' | 'groupReads' | 'paymentReads'>,
  opts: { dryRun?: boolean } = {},
) {
  const agentId = actor.agentId;
  // A preview reads afresh: it is not sent, so no guard would catch a cached read that is out of date.
  const cache = opts.dryRun ? undefined : services.groupReads;
  const { group, members, refs, readVersion, balances } = await readGroupIdentities(services.pool, req.group_id, agentId, batch, cache);
  assertNotArchived(group);
  await assertLedgerAccepted(db, group);
  const fromHandle = req.from_handle ?? actor.handle;
  const payer = members.get(fromHandle);
  if (!payer) throw notAMember('from_handle', fromHandle, members.keys());
  const payee = members.get(req.to_handle);
  if (!payee) throw notAMember('to_handle', req.to_handle, members.keys());
  if (payer.agentId === payee.agentId) throw validationError('to_handle', 'payer and payee must differ', 'same_member');
  if (agentId !== payer.agentId && agentId !== payee.agentId) {
    throw new ToolError('FORBIDDEN', 'You can record only payments you made or received.', {
      suggestedAction: 'Ask the payer or the payee to record it.',
    });
  }
  const amount = BigInt(req.amount_minor);
  const confirmed = agentId === payee.agentId;
  // The group's version covers the roster: payer and payee are still active members when it matches.
  const guard: BatchGuard = { lock: 'share', read_version: readVersion };
  // A pending payment's answer shows the payee's payout methods (pay_with): they must be the ones stored now.
  if (!confirmed) guard.payout_methods = [{ agent_id: payee.agentId, md5: payee.payoutMethodsMd5 }];
  if (!req.allow_overpayment) {
    // A fresh read has the balances: refused here with what is owed. The database checks the same rule on the balances
    // as they are when it writes (a cached read has none); when that fails the call is decided again on a fresh read.
    if (balances) {
      const withBalance = (m: typeof payer) => ({ ...m, ...balances.get(m.agentId)! });
      assertNotOverpaying(group, withBalance(payer), withBalance(payee), amount);
    }
    guard.max_payment = { payer_id: payer.agentId, payee_id: payee.agentId, amount_minor: amount.toString() };
  }
  batch.guard(group.id, guard);
  const now = services.now();
  const p = {
    id: batch.entityId,
    groupId: group.id,
    payerId: payer.agentId,
    payeeId: payee.agentId,
    amountMinor: amount,
    note: req.note || null,
    status: confirmed ? 'confirmed' : 'pending',
    recordedById: agentId,
    createdAt: now,
    updatedAt: now,
    resolvedAt: confirmed ? now : null,
  };
  batch.insert('payments', {
    id: p.id,
    group_id: p.groupId,
    payer_id: p.payerId,
    payee_id: p.payeeId,
    amount_minor: amount.toString(),
    note: p.note,
    status: p.status,
    recorded_by: agentId,
    created_at: now.toISOString(),
    updated_at: now.toISOString(),
    resolved_at: p.resolvedAt?.toISOString() ?? null,
  });
  // Kept for its confirmation, rejection or cancellation once written (a preview is never written).
  if (!opts.dryRun) keepRecordedPayment(services.paymentReads, batch, p);
  const money = formatMinor(amount, group.currency);
  if (confirmed) {
    batch.ledger(new LedgerDelta().addPayment(payer.agentId, payee.agentId, amount, 1n));
    batch.notify({
      agentId: payer.agentId,
      kind: 'payment_confirmed',
      text: `@${payee.handle} confirmed receiving ${money} from you in "${group.name}"`,
      entityType: 'payment',
      entityId: p.id,
      groupId: group.id,
    });
  } else {
    batch.pending(payer.agentId, payee.agentId, amount, 1n);
    batch.notify({
      agentId: payee.agentId,
      kind: 'payment_to_confirm',
      text: `Payment awaiting your confirmation: @${payer.handle} says they paid you ${money} in "${group.name}"`,
      requiresAction: true,
      entityType: 'payment',
      entityId: p.id,
      groupId: group.id,
    });
  }
  batch.activity({
    groupId: group.id,
    actorId: agentId,
    action: 'payment.recorded',
    entityType: 'payment',
    entityId: p.id,
    after: { from: payer.agentId, to: payee.agentId, amount_minor: amount.toString(), status: p.status },
  });
  batch.event({
    type: 'payment.recorded',
    groupId: group.id,
    actorId: agentId,
    recipients: [payer.agentId, payee.agentId, agentId],
    data: {
      payment_id: p.id,
      payer_id: payer.agentId,
      payee_id: payee.agentId,
      amount_minor: amount.toString(),
      currency: group.currency,
      status: p.status,
    },
    link: { entityType: 'payment', entityId: p.id },
  });
  const [payment] = await toPayments(db, [p], group.currency, refs);
  // The members' payout methods came with the group read: pay_with needs no second read.
  const payoutMethods = new Map([...members.values()].map((m) => [m.agentId, m.payoutMethods]));
  return { group, payment: payment!, confirmed, payeeHandle: payee.handle, payoutMethods };
}
