/**
 * Expenses on the wire (DESIGN.md §2): the zod input pieces the expense tools share (payers,
 * split, repeat, foreign currency, text fields) and the output schema of an expense.
 */
import { z } from 'zod';
import {
  uuid,
  handle,
  text,
  longText,
  isoDate,
  currencyCode,
  amountMinor,
  positiveAmountMinor,
  timestamp,
  agentRef,
} from '../../kernel/text.ts';
import { isCategoryId } from '../reference/categories.ts';

export type SplitMethod = 'equal' | 'exact' | 'percent' | 'shares' | 'adjustment';
const SPLIT_METHODS = ['equal', 'exact', 'percent', 'shares', 'adjustment'] as const;
/** What an expense's split_method may be: a split method, or "itemized" (each item has its own split). */
export type StoredSplitMethod = SplitMethod | 'itemized';
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

/** The split's shape with the given descriptions: the expense's split, and an item's (same shape, terse descriptions). */
const splitShape = (
  d: Record<'method' | 'participants' | 'handle' | 'amount_minor' | 'percent' | 'shares' | 'adjustment_minor' | 'self', string>,
) =>
  z
    .strictObject({
      method: z.enum(SPLIT_METHODS).default('equal').describe(d.method),
      participants: z
        .array(
          z.strictObject({
            handle: handle.describe(d.handle),
            amount_minor: amountMinor.optional().describe(d.amount_minor),
            percent: decimalInput.optional().describe(d.percent),
            shares: decimalInput.optional().describe(d.shares),
            adjustment_minor: amountMinor.optional().describe(d.adjustment_minor),
          }),
        )
        .min(1)
        .max(100)
        .optional()
        .describe(d.participants),
    })
    .describe(d.self);

export const splitInput = splitShape({
  method: 'Default equal. adjustment: each pays adjustment_minor plus an equal part of the rest.',
  handle: 'A member who shares this expense.',
  amount_minor: 'exact: their share, minor units; all sum to the amount.',
  percent: 'percent: their percentage (≤ 6 decimals); all sum to 100.',
  shares: 'shares: their weight, > 0 (≤ 6 decimals).',
  adjustment_minor: 'adjustment: extra they pay, minor units (may be < 0).',
  participants: 'Default every active member. equal: handles only.',
  self: 'How the amount is owed (default: equally by every active member).',
});

/** An item's split: the shape of `split`, described once there. */
const itemSplitInput = splitShape({
  method: 'As split.method.',
  handle: 'As in split.',
  amount_minor: 'As in split.',
  percent: 'As in split.',
  shares: 'As in split.',
  adjustment_minor: 'As in split.',
  participants: 'As split.participants.',
  self: "Shaped like split; default the expense's split.",
});

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
  category: z.string().nullable().describe('The free label as given.'),
  notes: z.string().nullable(),
  category_id: z.string().describe('See list_categories.'),
  split_method: z.enum([...SPLIT_METHODS, 'itemized']),
  original_currency: z.string().nullable(),
  original_amount_minor: z.number().int().nullable(),
  exchange_rate: z.string().nullable(),
  shares: z.array(shareSchema),
  items: z
    .array(
      z.object({
        description: z.string(),
        amount_minor: z.number().int(),
        split_method: z.enum(SPLIT_METHODS),
        shares: z.array(z.object({ handle: z.string(), owed_minor: z.number().int() })),
      }),
    )
    .nullable()
    .describe('Itemized: the items, each with its own shares; else null.'),
  tax_minor: z.number().int().nullable().describe('Itemized only.'),
  tip_minor: z.number().int().nullable().describe('Itemized only.'),
  created_by: agentRef,
  created_at: timestamp,
  updated_at: timestamp,
  deleted: z.boolean(),
  deleted_at: timestamp.nullable(),
  recurrence: recurrenceSchema.nullable(),
  occurrence_index: z.number().int().nullable().describe('Position in its series (0 = first).'),
});
export type ExpenseOut = z.infer<typeof expenseSchema>;

/** A category id from list_categories (checked in the schema, so the sandbox refuses it too). */
export const categoryIdInput = z
  .string()
  .max(50)
  .refine(isCategoryId, { message: 'unknown category_id: list_categories lists them', params: { code: 'unknown_category' } });

export const expenseTextFields = {
  description: text(1, 200, 'description').describe('What it was for.'),
  category: text(0, 50, 'category').optional().describe('Label, e.g. "Groceries"; one naming a known category sets category_id.'),
  category_id: categoryIdInput.optional().describe('From list_categories, e.g. "food/groceries"; default general.'),
  notes: longText(0, 1000, 'notes').optional().describe('Newlines allowed.'),
};

/** The itemized-bill arguments of add_expense and update_expense. */
export const itemsFields = {
  items: z
    .array(
      z.strictObject({
        description: text(1, 200, 'description').describe('1-200 chars.'),
        amount_minor: positiveAmountMinor.describe('> 0.'),
        split: itemSplitInput.optional(),
      }),
    )
    .min(1)
    .max(100)
    .describe(
      'Itemized bill: amount = Σ items + tax_minor + tip_minor; each member owes it pro rata to their item subtotal, rounded once.',
    ),
  tax_minor: amountMinor
    .optional()
    .describe('With items: tax, shared in proportion to item subtotals; negative for a discount. Default 0.'),
  tip_minor: amountMinor.optional().describe('With items: tip, shared like tax_minor. Default 0.'),
};
