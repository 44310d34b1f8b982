import { z } from 'zod';
import { READ } from '../../../kernel/meta.ts';
import { groupMemberTool } from '../../../access/tools/group_tools.ts';
import { agentRef, output, groupId } from '../../../kernel/text.ts';
import { EXACT_LIMIT } from '../settle.ts';
import { settlementPlan } from '../settle-plan.ts';
import { payWithFor, payWithSchema } from '../../account/payout.ts';

export const suggest_settlements = groupMemberTool
  .meta({
    area: 'balances',
    title: 'Suggest settlement payments',
    description:
      'The fewest transfers that settle the group: equal and opposite balances pay each other directly; exact minimum up to ' +
      EXACT_LIMIT +
      ' other ' +
      'non-zero balances, greedy (≤ n−1 transfers) beyond; deterministic. Pending payments count as confirmed by default (include_pending), ' +
      'so nothing sent is suggested twice. Each transfer has ready record_payment arguments, pass them as they are: the idempotency_key ' +
      "derives from the ledger state, so recording the same suggestion twice records it once. Transfers you pay carry pay_with (the payee's payout methods).",
    annotations: READ,
    errors: {},
  })
  .input(
    z.strictObject({
      group_id: groupId,
      include_pending: z.boolean().optional().describe('Count pending payments as done (default true).'),
    }),
  )
  .output(
    output({
      group_id: groupId,
      currency: z.string(),
      transfers: z.array(
        z.object({
          from: agentRef.describe('Who pays.'),
          to: agentRef.describe('Who receives.'),
          amount_minor: z.number().int(),
          amount: z.string(),
          record_payment: z
            .object({
              group_id: groupId,
              from_handle: z.string(),
              to_handle: z.string(),
              amount_minor: z.number().int(),
              idempotency_key: z.string(),
            })
            .describe(
              'Ready arguments for record_payment, idempotency_key included (the same for the same ledger state and transfer, so a retry is safe).',
            ),
          pay_with: payWithSchema.optional(),
        }),
      ),
      method: z.enum(['exact', 'greedy']).describe('exact: proven minimum number of transfers; greedy: at most n − 1.'),
      settled: z.boolean(),
    }),
  )
  .query(async ({ ctx, input }) => {
    const agentId = ctx.auth.agentId;
    const { group, plan, pendingPayments } = await settlementPlan(ctx.db, ctx, input);
    const ways = await payWithFor(
      ctx.db,
      agentId,
      group.currency,
      plan.transfers.map((t) => ({
        fromId: t.from.agent_id,
        toId: t.to.agent_id,
        amountMinor: t.amount_minor,
        reference: t.record_payment.idempotency_key,
      })),
    );
    const transfers = plan.transfers.map((t) => {
      const pay = ways.get(t.record_payment.idempotency_key);
      return pay ? { ...t, pay_with: pay } : t;
    });
    const suggested_next: string[] = [];
    for (const t of transfers) {
      if (t.from.agent_id === agentId)
        suggested_next.push(
          `record_payment: after paying @${t.to.handle} ${t.amount}, record it (from_handle ${t.from.handle}, to_handle ${t.to.handle}, amount_minor ${t.amount_minor})`,
        );
      else if (t.to.agent_id === agentId)
        suggested_next.push(`record_payment: when @${t.from.handle} has paid you ${t.amount}, record it as received (confirmed at once)`);
    }
    if (pendingPayments) suggested_next.push('list_payments: status pending shows payments awaiting confirmation');
    if (!transfers.length && !pendingPayments && !group.archivedAt)
      suggested_next.push(`archive_group: everyone is settled in "${group.name}"`);
    if (!suggested_next.length) suggested_next.push('get_balances: pairwise debts and pending amounts');
    return { ...plan, transfers, suggested_next };
  });
