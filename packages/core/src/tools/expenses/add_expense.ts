import { z } from 'zod';
import { previewBatchedWriteTool } from '../../trpc.ts';
import { previewOutput } from '../../preview.ts';
import { WRITE } from '../../meta.ts';
import { isoDate, amountMinor, output, groupId } from '../../text.ts';
import {
  expenseSchema,
  expenseTextFields,
  payersInput,
  splitInput,
  repeatInput,
  foreignFields,
  itemsFields,
} from '../../domain/ledger/expense-wire.ts';
import { addExpense } from '../../domain/ledger/expense-add.ts';
import { earliestRepeatStart, MAX_REPEAT_START_AGE_DAYS, MAX_OCCURRENCES_PER_RUN } from '../../domain/ledger/recurrence.ts';

export const add_expense = previewBatchedWriteTool
  .meta({
    area: 'expenses',
    title: 'Add an expense',
    description:
      "Records an expense in a group. Amounts are integers in the group currency's minor unit (EUR cents, JPY yen); amount_minor may be negative for a " +
      'refund; |amount| ≤ 10^12. payers: [{handle, amount_minor}] — default the caller paid everything; several payers must sum exactly to the amount. split: ' +
      '{method: equal|exact|percent|shares, participants: [{handle, amount_minor|percent|shares}]} — default every active member equally; exact amounts must ' +
      'sum to the amount, percentages to exactly 100. Rounding: largest remainder — everyone gets the floor of their ideal share and the leftover minor units ' +
      'go to the largest remainders, ties broken by a rotation of the members (ordered by agent id) seeded by the expense id, so no one always gets the extra ' +
      'cent; each share is within one minor unit of its ideal. Foreign currency: give original_currency, original_amount_minor and exchange_rate (decimal ' +
      'string, group units per original unit); amount_minor = original × rate × 10^(group exponent − original exponent), rounded to the nearest minor unit, ' +
      'halves away from zero (amount_minor may be omitted; if given it must match). repeat: {every, unit: day|week|month|year, until?, count?} makes this the ' +
      'first of a series; later copies are created on their dates (UTC) by the scheduler, exactly once each, catching up after downtime; stop it with ' +
      'update_expense repeat:null. A series may start (date) at most ' +
      MAX_REPEAT_START_AGE_DAYS +
      ' days before today (UTC), else VALIDATION_ERROR on date; copies already due are ' +
      'caught up at most ' +
      MAX_OCCURRENCES_PER_RUN +
      " per series per scheduler run (one run a minute). date defaults to today (UTC). Output: the expense with each member's paid_minor, " +
      'owed_minor and net_minor. Consent (our rule): in a direct ledger the other agent has not accepted yet nothing can be booked — ' +
      'DIRECT_LEDGER_NOT_ACCEPTED (409); nobody can be put in debt in a ledger they have not agreed to share.',
    annotations: WRITE,
    errors: {
      VALIDATION_ERROR: 'naming the field: sums off, unknown or non-member handle, bad rate',
      FORBIDDEN: 'not a member',
      NOT_FOUND: 'no such group',
      GROUP_ARCHIVED: 'the group is archived',
      DIRECT_LEDGER_NOT_ACCEPTED: 'a direct ledger the other agent has not accepted yet',
    },
  })
  .input(
    z
      .strictObject({
        group_id: groupId,
        ...expenseTextFields,
        amount_minor: amountMinor
          .optional()
          .describe('Group-currency amount in minor units (negative = refund). Required unless the foreign-currency fields are given.'),
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
  .output(output({ ...previewOutput, expense: expenseSchema }))
  .mutation(async ({ ctx, input }) => {
    const { group, expense } = await addExpense(ctx, ctx.batch, input);
    return {
      expense,
      suggested_next: [
        `get_balances: see who owes whom in "${group.name}" now`,
        `suggest_settlements: the fewest payments that settle "${group.name}"`,
        `update_expense: correct expense ${expense.expense_id} if something is off`,
      ],
    };
  });
