/**
 * Expenses on the wire (DESIGN.md §2): the zod input pieces the expense tools share (payers,
 * split, repeat, foreign currency, text fields) and the output schema of an expense.
 */
import { z } from 'zod';
import { uuid, handle, text, longText, isoDate, currencyCode, amountMinor, timestamp, agentRef } from '../../text.ts';

export type SplitMethod = 'equal' | 'exact' | 'percent' | 'shares';
const SPLIT_METHODS = ['equal', 'exact', 'percent', 'shares'] as const;
export type RepeatUnit = 'day' | 'week' | 'month' | 'year';

// ───────────── input schemas ─────────────

const decimalInput = z.union([
  z.number().min(0),
  z.string().regex(/^\d{1,12}(\.\d{1,6})?$/, 'a non-negative decimal with at most 6 decimals'),
]);

export const payersInput = z
  .array(
    z.strictObject({
      handle: handle.describe('A member who paid.'),
      amount_minor: amountMinor.optional().describe('What they paid, minor units (optional for a single payer).'),
    }),
  )
  .min(1)
  .max(100)
  .describe('Who paid (default: you, everything). Several payers: each amount_minor, summing to the amount.');

export const splitInput = z
  .strictObject({
    method: z.enum(SPLIT_METHODS).default('equal').describe('Default equal.'),
    participants: z
      .array(
        z.strictObject({
          handle: handle.describe('A member who shares this expense.'),
          amount_minor: amountMinor.optional().describe('exact: their share, minor units; all sum to the amount.'),
          percent: decimalInput.optional().describe('percent: their percentage (≤ 6 decimals); all sum to 100.'),
          shares: decimalInput.optional().describe('shares: their weight, > 0 (≤ 6 decimals).'),
        }),
      )
      .min(1)
      .max(100)
      .optional()
      .describe('Default every active member. equal: handles only.'),
  })
  .describe('How the amount is owed (default: equally by every active member).');

export const repeatInput = z
  .strictObject({
    every: z.number().int().min(1).max(1000).default(1).describe('e.g. 2 with week = fortnightly.'),
    unit: z.enum(['day', 'week', 'month', 'year']).describe('Calendar unit (UTC).'),
    until: isoDate.optional().describe('Last date (inclusive).'),
    count: z.number().int().min(2).max(1000).optional().describe('Occurrences, this one included.'),
  })
  .describe('Repeat on later dates (UTC); months keep the day, clamped to the month end.');

export const foreignFields = {
  original_currency: currencyCode.optional().describe("ISO 4217 code it was paid in, when not the group's."),
  original_amount_minor: amountMinor.optional().describe('In original_currency minor units.'),
  exchange_rate: z
    .string()
    .regex(/^\d{1,12}(\.\d{1,12})?$/, 'exchange_rate must be a decimal string like "1.0845"')
    .optional()
    .describe('Group-currency units per original unit, decimal string; amount_minor is converted, rounded half away from zero.'),
};

// ───────────── output schemas ─────────────

const shareSchema = z.object({
  agent_id: uuid,
  handle: z.string(),
  display_name: z.string(),
  paid_minor: z.number().int().describe('What they paid.'),
  owed_minor: z.number().int().describe('Their share.'),
  net_minor: z.number().int().describe('paid − owed.'),
  split_value: z.string().nullable().describe('Split input (1, amount, percent or shares); null: payer only.'),
});

const recurrenceSchema = z.object({
  recurrence_id: uuid,
  every: z.number().int(),
  unit: z.enum(['day', 'week', 'month', 'year']),
  start_date: z.string(),
  until: z.string().nullable(),
  count: z.number().int().nullable(),
  active: z.boolean(),
  next_date: z.string().nullable().describe('Null when stopped or finished.'),
});

export const expenseSchema = z.object({
  expense_id: uuid,
  group_id: uuid,
  description: z.string(),
  amount_minor: z.number().int().describe('Negative = refund.'),
  amount: z.string().describe('Formatted.'),
  currency: z.string(),
  date: z.string().describe('YYYY-MM-DD'),
  category: z.string().nullable(),
  notes: z.string().nullable(),
  split_method: z.enum(SPLIT_METHODS),
  original_currency: z.string().nullable(),
  original_amount_minor: z.number().int().nullable(),
  exchange_rate: z.string().nullable(),
  shares: z.array(shareSchema),
  created_by: agentRef,
  created_at: timestamp,
  updated_at: timestamp,
  deleted: z.boolean(),
  deleted_at: timestamp.nullable(),
  recurrence: recurrenceSchema.nullable(),
  occurrence_index: z.number().int().nullable().describe('Position in its series (0 = first).'),
});
export type ExpenseOut = z.infer<typeof expenseSchema>;

export const expenseTextFields = {
  description: text(1, 200, 'description').describe('What it was for.'),
  category: text(0, 50, 'category').optional().describe('Label, e.g. "food".'),
  notes: longText(0, 1000, 'notes').optional().describe('Newlines allowed.'),
};
