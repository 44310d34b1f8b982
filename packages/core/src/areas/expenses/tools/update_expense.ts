import { z } from 'zod';
import { previewWriteTool } from '../../../kernel/trpc.ts';
import { previewOutput } from '../../../kernel/preview.ts';
import { WRITE } from '../../../kernel/meta.ts';
import { text, longText, isoDate, amountMinor, output, currencyCode, expenseId } from '../../../kernel/text.ts';
import { expenseSchema, payersInput, splitInput, foreignFields, itemsFields, categoryIdInput } from '../wire.ts';
import { updateExpense } from '../update.ts';

export const update_expense = previewWriteTool
  .meta({
    area: 'expenses',
    title: 'Update an expense',
    description:
      'Changes an expense; only the fields given change (same fields as add_expense). The old effect is reversed and the new one applied in one ' +
      'transaction. A new amount without payers: a single payer pays it (several → give payers); without split the same method and participants ' +
      'are re-applied (exact splits need a new split). null clears category/notes; all three foreign fields null drop the conversion; repeat null ' +
      'stops the series (existing copies stay).',
    annotations: WRITE,
    errors: {
      NOT_FOUND: 'no such expense',
      FORBIDDEN: 'not a member, or edits are restricted to admins and the creator',
      VALIDATION_ERROR: 'naming the field',
      GROUP_ARCHIVED: '',
      EXPENSE_DELETED: 'restore it first',
      MEMBER_LEFT: 'the change would alter the balance of someone who left',
      DIRECT_LEDGER_NOT_ACCEPTED: 'the other agent has not accepted this direct ledger: nothing can be booked',
    },
  })
  .input(
    z.strictObject({
      expense_id: expenseId,
      description: text(1, 200, 'description').optional().describe('What it was for.'),
      category: text(0, 50, 'category').nullable().optional().describe('null clears it; a known category name sets category_id.'),
      category_id: categoryIdInput.optional().describe('From list_categories.'),
      notes: longText(0, 1000, 'notes').nullable().optional().describe('Newlines allowed; null clears them.'),
      amount_minor: amountMinor.optional().describe('Minor units, negative = refund.'),
      date: isoDate.optional().describe('Day of the expense.'),
      payers: payersInput.optional(),
      split: splitInput.optional(),
      original_currency: currencyCode.nullable().optional().describe('ISO 4217 code it was paid in.'),
      original_amount_minor: amountMinor.nullable().optional().describe('In original_currency minor units.'),
      exchange_rate: foreignFields.exchange_rate
        .unwrap()
        .nullable()
        .optional()
        .describe('Group-currency units per original unit, e.g. "0.92".'),
      repeat: z.null().optional().describe('null stops the repeating series.'),
      items: itemsFields.items
        .nullable()
        .optional()
        .describe('New items (as in add_expense; tax and tip kept unless given); null makes it a plain expense again.'),
      tax_minor: itemsFields.tax_minor,
      tip_minor: itemsFields.tip_minor,
    }),
  )
  .output(output({ ...previewOutput, expense: expenseSchema }))
  .mutation(async ({ ctx, input }) => {
    const { expense_id, ...patch } = input;
    const { group, expense } = await updateExpense(ctx.db, ctx.auth, expense_id, patch, ctx.services.now());
    return {
      expense,
      suggested_next: [`get_balances: balances after the change in "${group.name}"`, 'suggest_settlements: updated settle-up plan'],
    };
  });
