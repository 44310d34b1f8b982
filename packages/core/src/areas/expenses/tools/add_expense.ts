import { z } from 'zod';
import { previewBatchedWriteTool } from '../../../kernel/trpc.ts';
import { previewOutput } from '../../../kernel/preview.ts';
import { WRITE } from '../../../kernel/meta.ts';
import { builtOutput } from '../../../kernel/built-output.ts';
import { isoDate, amountMinor, output, groupId } from '../../../kernel/text.ts';
import { expenseSchema, expenseTextFields, payersInput, splitInput, repeatInput, foreignFields, itemsFields } from '../wire.ts';
import { addExpense } from '../add.ts';
import { earliestRepeatStart, MAX_REPEAT_START_AGE_DAYS, MAX_OCCURRENCES_PER_RUN } from '../recurrence.ts';

export const add_expense = previewBatchedWriteTool
  .meta({
    area: 'expenses',
    title: 'Add an expense',
    description:
      'Records an expense. Amounts are integers in minor units of the group currency (cents for EUR, yen for JPY); negative = refund. ' +
      'Defaults: the caller paid all, split equally among every active member, date today (UTC). Shares are rounded by largest remainder ' +
      '(ties rotate, seeded by the expense id): each within one minor unit of exact. Foreign currency: give original_currency, ' +
      'original_amount_minor and exchange_rate instead of amount_minor. repeat makes it the first of a series: copies are made on their dates ' +
      '(UTC), exactly once, at most ' +
      MAX_OCCURRENCES_PER_RUN +
      ' per series per minute when catching up; a series starts at most ' +
      MAX_REPEAT_START_AGE_DAYS +
      ' days ago.',
    annotations: WRITE,
    errors: {
      VALIDATION_ERROR: 'sums off, unknown or non-member handle, bad rate',
      FORBIDDEN: 'not a member',
      NOT_FOUND: 'no such group',
      GROUP_ARCHIVED: '',
      DIRECT_LEDGER_NOT_ACCEPTED: 'the other agent has not accepted this direct ledger: nothing can be booked',
    },
  })
  .input(
    z
      .strictObject({
        group_id: groupId,
        ...expenseTextFields,
        amount_minor: amountMinor.optional().describe('Minor units, negative = refund; omit when giving the foreign fields.'),
        date: isoDate.optional().describe('YYYY-MM-DD, default today (UTC).'),
        payers: payersInput.optional(),
        split: splitInput.optional(),
        ...foreignFields,
        repeat: repeatInput.optional(),
        items: itemsFields.items.optional(),
        tax_minor: itemsFields.tax_minor,
        tip_minor: itemsFields.tip_minor,
      })
      // In the schema, so the sandbox refuses what the tool refuses.
      .superRefine((v, ctx) => {
        if (v.repeat && v.date !== undefined && v.date < earliestRepeatStart(new Date())) {
          ctx.addIssue({
            code: 'custom',
            path: ['date'],
            message: `a repeating series may start at most ${MAX_REPEAT_START_AGE_DAYS} days before today (UTC), i.e. on ${earliestRepeatStart(new Date())} or later`,
            params: { code: 'repeat_start_too_old' },
          });
        }
      }),
  )
  .output(builtOutput(output({ ...previewOutput, expense: expenseSchema })))
  .mutation(async ({ ctx, input }) => {
    const { group, expense } = await addExpense(ctx.db, ctx.auth, ctx.batch, input, ctx.services, { dryRun: ctx.dryRun });
    return {
      expense,
      suggested_next: [
        `get_balances: see who owes whom in "${group.name}" now`,
        `suggest_settlements: the fewest payments that settle "${group.name}"`,
        `update_expense: correct expense ${expense.expense_id} if something is off`,
      ],
    };
  });
