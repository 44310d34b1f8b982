import { z } from 'zod';
import { previewWriteTool } from '../../trpc.ts';
import { previewOutput } from '../../preview.ts';
import { WRITE } from '../../meta.ts';
import { text, longText, isoDate, amountMinor, output, currencyCode, expenseId } from '../../text.ts';
import { expenseSchema, payersInput, splitInput, foreignFields, itemsFields, categoryIdInput } from '../../domain/ledger/expense-wire.ts';
import { updateExpense } from '../../domain/ledger/expense-update.ts';

export const update_expense = previewWriteTool
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
      category: text(0, 50, 'category')
        .nullable()
        .optional()
        .describe('0-50 characters; null clears it; a known category name sets category_id.'),
      category_id: categoryIdInput.optional().describe('From list_categories.'),
      notes: longText(0, 1000, 'notes')
        .nullable()
        .optional()
        .describe('Free notes, 0-1000 characters (newlines allowed); null clears them.'),
      amount_minor: amountMinor.optional().describe("New amount in the group currency's minor units (negative = refund)."),
      date: isoDate.optional().describe('Day of the expense, YYYY-MM-DD.'),
      payers: payersInput.optional(),
      split: splitInput.optional(),
      original_currency: currencyCode
        .nullable()
        .optional()
        .describe('ISO 4217 code the expense was paid in; null (with the other two foreign fields) drops the conversion.'),
      original_amount_minor: amountMinor.nullable().optional().describe("Amount in the original currency's minor units."),
      exchange_rate: foreignFields.exchange_rate
        .unwrap()
        .nullable()
        .optional()
        .describe('Decimal string: group-currency units per original unit, e.g. "0.92".'),
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
    const { group, expense } = await updateExpense(ctx, expense_id, patch);
    return {
      expense,
      suggested_next: [`get_balances: balances after the change in "${group.name}"`, 'suggest_settlements: updated settle-up plan'],
    };
  });
