import { z } from 'zod';
import { writeTool } from '../../trpc.ts';
import { DESTRUCTIVE } from '../../meta.ts';
import { uuid, idempotencyKey, output } from '../../text.ts';
import { requireMembership, assertNotArchived } from '../../domain/groups.ts';
import { appendActivity } from '../../domain/activity.ts';
import { notifyAll } from '../../domain/inbox.ts';
import { LedgerDelta, applyDelta } from '../../domain/ledger/effects.ts';
import { assertCanEdit } from '../../domain/ledger/access.ts';
import { expenseSchema, findExpense, toExpenses, snapshot, isoFromDate } from '../../domain/ledger/expenses.ts';

export const delete_expense = writeTool
  .meta({
    area: 'expenses',
    title: 'Delete an expense',
    description:
      'Soft-deletes an expense: its balance effect is reversed in the same transaction and it disappears from list_expenses (unless include_deleted); restore_expense undoes it. ' +
      'Deleting a deleted expense returns it unchanged. Deleting one copy of a repeating series does not stop the series (update_expense repeat:null does). ' +
      'Errors: NOT_FOUND, FORBIDDEN, GROUP_ARCHIVED, MEMBER_LEFT (would alter the balance of someone who left).',
    kind: 'write',
    annotations: DESTRUCTIVE,
    errors: ['NOT_FOUND', 'GROUP_ARCHIVED', 'MEMBER_LEFT'],
  })
  .input(z.strictObject({ expense_id: uuid, idempotency_key: idempotencyKey }))
  .output(output({ expense: expenseSchema }))
  .mutation(async ({ ctx, input }) => {
    const agentId = ctx.auth!.agentId;
    const first = await findExpense(ctx.db, input.expense_id);
    const { group, membership } = await requireMembership(ctx.db, first.groupId, agentId, { lock: true });
    const e = await findExpense(ctx.db, input.expense_id);
    assertNotArchived(group);
    assertCanEdit(group, membership, e);
    if (!e.deletedAt) {
      await applyDelta(ctx.db, group.id, new LedgerDelta().addLines(e.shares, -1n));
      const now = ctx.services.now();
      await ctx.db.expense.update({ where: { id: e.id }, data: { deletedAt: now, updatedAt: now } });
      await appendActivity(ctx.db, { groupId: group.id, actorId: agentId, action: 'expense.deleted', entityType: 'expense', entityId: e.id, before: snapshot(e.description, e.amountMinor, isoFromDate(e.date), e.shares), after: { deleted: true } });
      await notifyAll(ctx.db, e.shares.map((s) => s.agentId).sort(), agentId, {
        kind: 'expense_changed',
        text: `@${ctx.auth!.handle} deleted "${e.description}" in "${group.name}"`,
        entityType: 'expense',
        entityId: e.id,
        groupId: group.id,
      });
    }
    const [expense] = await toExpenses(ctx.db, [await findExpense(ctx.db, e.id)], group.currency);
    return { expense: expense!, suggested_next: [`restore_expense: undo the deletion of ${e.id}`, 'get_balances: balances without it'] };
  });
