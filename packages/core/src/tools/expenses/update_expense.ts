import { z } from 'zod';
import { writeTool } from '../../trpc.ts';
import { WRITE } from '../../meta.ts';
import { ToolError, validationError } from '../../errors.ts';
import { text, longText, isoDate, amountMinor, output, currencyCode, expenseId } from '../../text.ts';
import { requireMembership, assertNotArchived, assertLedgerAccepted } from '../../domain/groups.ts';
import { appendActivity } from '../../domain/activity.ts';
import { notifyAll } from '../../domain/inbox.ts';
import { LedgerDelta, applyDelta } from '../../domain/ledger/effects.ts';
import { assertCanEdit } from '../../domain/ledger/access.ts';
import { expenseSchema, payersInput, splitInput, foreignFields } from '../../domain/ledger/expense-wire.ts';
import { resolveAmount, resolvePayers, resolveSplit, computeShares, specFromRows, snapshot, isoFromDate, dateFromIso, type ExpenseSpec } from '../../domain/ledger/expense-spec.ts';
import { toExpenses } from '../../domain/ledger/expense-view.ts';
import { activeMembersByHandle, findExpense } from '../../domain/ledger/expense-store.ts';

export const update_expense = writeTool
  .meta({
    area: 'expenses',
    title: 'Update an expense',
    description:
      'Changes an expense; only the fields given change. The balance effect of the old version is reversed and the new one applied in one transaction. Fields ' +
      'as in add_expense (amounts in minor units). When amount_minor changes without payers: a single payer pays the new amount (several payers → give ' +
      'payers); without split: the same method and participants are re-applied (exact splits need a new split). On a foreign-currency expense change ' +
      'original_amount_minor/exchange_rate, or set all three foreign fields to null to drop them. category/notes null clears them. repeat: null stops the ' +
      'repeating series the expense belongs to (copies already created stay). Any member may edit unless the group restricts edits to admins and the creator. ' +
      'Consent (our rule): in a direct ledger the other agent has not accepted yet nothing can be booked — DIRECT_LEDGER_NOT_ACCEPTED (409); nobody can be ' +
      'put in debt in a ledger they have not agreed to share.',
    annotations: WRITE,
    errors: {
      NOT_FOUND: 'no such expense',
      FORBIDDEN: 'not a member, or edits are restricted to admins and the creator',
      VALIDATION_ERROR: 'naming the field',
      GROUP_ARCHIVED: 'the group is archived',
      EXPENSE_DELETED: 'restore it first',
      MEMBER_LEFT: 'the change would alter the balance of someone who left',
      DIRECT_LEDGER_NOT_ACCEPTED: 'a direct ledger the other agent has not accepted yet',
    },
  })
  .input(
    z.strictObject({
      expense_id: expenseId,
      description: text(1, 200, 'description').optional().describe('What the expense was for, 1-200 characters.'),
      category: text(0, 50, 'category').nullable().optional().describe('Category, 0-50 characters; null clears it.'),
      notes: longText(0, 1000, 'notes').nullable().optional().describe('Free notes, 0-1000 characters (newlines allowed); null clears them.'),
      amount_minor: amountMinor.optional().describe('New amount in the group currency\'s minor units (negative = refund).'),
      date: isoDate.optional().describe('Day of the expense, YYYY-MM-DD.'),
      payers: payersInput.optional(),
      split: splitInput.optional(),
      original_currency: currencyCode.nullable().optional().describe('ISO 4217 code the expense was paid in; null (with the other two foreign fields) drops the conversion.'),
      original_amount_minor: amountMinor.nullable().optional().describe('Amount in the original currency\'s minor units.'),
      exchange_rate: foreignFields.exchange_rate.unwrap().nullable().optional().describe('Decimal string: group-currency units per original unit, e.g. "0.92".'),
      repeat: z.null().optional().describe('null stops the repeating series.'),
    }),
  )
  .output(output({ expense: expenseSchema }))
  .mutation(async ({ ctx, input }) => {
    const agentId = ctx.auth.agentId;
    const now = ctx.services.now();
    const first = await findExpense(ctx.db, input.expense_id);
    const { group, membership } = await requireMembership(ctx.db, first.groupId, agentId, { lock: true });
    const e = await findExpense(ctx.db, input.expense_id); // re-read under the group lock
    assertNotArchived(group);
    await assertLedgerAccepted(ctx.db, group);
    if (e.deletedAt) throw new ToolError('EXPENSE_DELETED', 'This expense is deleted.', { details: { expense_id: e.id } });
    assertCanEdit(group, membership, e);
    const changes = Object.keys(input).filter((k) => k !== 'expense_id' && k !== 'idempotency_key');
    if (!changes.length) throw validationError('(root)', 'give at least one field to change', 'nothing_to_change');

    const old = specFromRows(e.amountMinor, e.splitMethod, e.shares);
    const foreignTouched = input.original_currency !== undefined || input.original_amount_minor !== undefined || input.exchange_rate !== undefined;
    let amount = e.amountMinor;
    let foreign = { originalCurrency: e.originalCurrency, originalAmountMinor: e.originalAmountMinor, exchangeRate: e.exchangeRate };
    if (input.amount_minor !== undefined || foreignTouched) {
      const merged = {
        amount_minor: input.amount_minor,
        original_currency: input.original_currency !== undefined ? input.original_currency : e.originalCurrency,
        original_amount_minor: input.original_amount_minor !== undefined ? input.original_amount_minor : e.originalAmountMinor === null ? null : Number(e.originalAmountMinor),
        exchange_rate: input.exchange_rate !== undefined ? input.exchange_rate : e.exchangeRate,
      };
      if (merged.original_currency == null && merged.original_amount_minor == null && merged.exchange_rate == null && merged.amount_minor === undefined) {
        merged.amount_minor = Number(e.amountMinor);
      }
      const r = resolveAmount(group.currency, merged);
      amount = r.amountMinor;
      foreign = r.foreign;
    }
    const amountChanged = amount !== e.amountMinor;
    const members = await activeMembersByHandle(ctx.db, group.id);

    let payers: ExpenseSpec['payers'];
    if (input.payers) payers = resolvePayers(members, amount, input.payers, agentId);
    else if (!amountChanged) payers = old.payers;
    else if (old.payers.length === 1) payers = [{ agentId: old.payers[0]!.agentId, paidMinor: amount }];
    else throw validationError('payers', 'the amount changed and there are several payers: give payers with their new amounts', 'required');

    let split: Pick<ExpenseSpec, 'method' | 'participants'>;
    if (input.split) split = resolveSplit(members, amount, input.split);
    else if (amountChanged && old.method === 'exact') throw validationError('split', 'the amount changed and the split is exact: give the new exact split', 'required');
    else split = { method: old.method, participants: old.participants };

    const spec: ExpenseSpec = { amountMinor: amount, payers, ...split };
    const lines = computeShares(spec, e.id);
    await applyDelta(ctx.db, group.id, new LedgerDelta().addLines(e.shares, -1n).addLines(lines, 1n));

    const date = input.date ?? isoFromDate(e.date);
    await ctx.db.expense.update({
      where: { id: e.id },
      data: {
        description: input.description ?? e.description,
        category: input.category !== undefined ? input.category || null : e.category,
        notes: input.notes !== undefined ? input.notes || null : e.notes,
        amountMinor: amount,
        date: dateFromIso(date),
        splitMethod: spec.method,
        ...foreign,
        updatedAt: now,
      },
    });
    await ctx.db.expenseShare.deleteMany({ where: { expenseId: e.id } });
    await ctx.db.expenseShare.createMany({
      data: lines.map((l) => ({ expenseId: e.id, agentId: l.agentId, paidMinor: l.paidMinor, owedMinor: l.owedMinor, splitValue: l.splitValue })),
    });
    if (input.repeat === null && e.recurrenceId) {
      await ctx.db.recurrence.update({ where: { id: e.recurrenceId }, data: { active: false } });
      await appendActivity(ctx.db, { groupId: group.id, actorId: agentId, action: 'recurrence.stopped', entityType: 'expense', entityId: e.id, after: { recurrence_id: e.recurrenceId } });
    }
    await appendActivity(ctx.db, {
      groupId: group.id,
      actorId: agentId,
      action: 'expense.updated',
      entityType: 'expense',
      entityId: e.id,
      before: snapshot(e.description, e.amountMinor, isoFromDate(e.date), e.shares),
      after: snapshot(input.description ?? e.description, amount, date, lines),
    });
    const involved = [...new Set([...e.shares.map((s) => s.agentId), ...lines.map((l) => l.agentId)])].sort();
    await notifyAll(ctx.db, involved, agentId, {
      kind: 'expense_changed',
      text: `@${ctx.auth.handle} changed "${input.description ?? e.description}" in "${group.name}"`,
      entityType: 'expense',
      entityId: e.id,
      groupId: group.id,
    });
    const [expense] = await toExpenses(ctx.db, [await findExpense(ctx.db, e.id)], group.currency);
    return { expense: expense!, suggested_next: [`get_balances: balances after the change in "${group.name}"`, 'suggest_settlements: updated settle-up plan'] };
  });
