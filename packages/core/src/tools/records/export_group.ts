import { z } from 'zod';
import { readTool } from '../../trpc.ts';
import { READ } from '../../meta.ts';
import { output, groupId, uuid } from '../../text.ts';
import { receiptSchema } from '../../domain/receipts/receipt-wire.ts';
import { expenseSchema } from '../../domain/ledger/expense-wire.ts';
import { paymentSchema } from '../../domain/ledger/payments.ts';
import { memberBalanceSchema, debtSchema } from '../../domain/ledger/balances.ts';
import { exportGroup } from '../../domain/ledger/export.ts';

export const export_group = readTool
  .meta({
    area: 'records',
    title: 'Export a group',
    description:
      "Exports a group's expenses (with shares), payments and balances, at most 20000 expenses and payments each (truncated says so). json: " +
      'the objects other tools return, plus receipt metadata; csv: five RFC 4180 documents with amounts in minor units and as decimals.',
    annotations: READ,
    errors: {
      NOT_FOUND: 'no such group',
      FORBIDDEN: 'not a member',
    },
  })
  .input(
    z.strictObject({
      group_id: groupId,
      format: z.enum(['json', 'csv']).optional().describe('Default json.'),
      include_deleted: z.boolean().optional().describe('Also export deleted expenses, flagged (default false).'),
    }),
  )
  .output(
    output({
      format: z.enum(['json', 'csv']),
      group: z.object({
        group_id: groupId,
        name: z.string(),
        currency: z.string(),
        minor_unit_exponent: z.number().int(),
        exported_at: z.string(),
      }),
      json: z
        .object({
          expenses: z.array(expenseSchema),
          payments: z.array(paymentSchema),
          balances: z.array(memberBalanceSchema),
          debts: z.array(debtSchema),
          receipts: z.array(receiptSchema.extend({ expense_id: uuid, sha256: z.string().describe('Hex SHA-256 of the file.') })),
        })
        .optional(),
      csv: z
        .object({ expenses: z.string(), shares: z.string(), payments: z.string(), balances: z.string(), receipts: z.string() })
        .optional(),
      truncated: z.boolean(),
    }),
  )
  .query(async ({ ctx, input }) => {
    const result = await exportGroup(ctx, input);
    return { ...result, suggested_next: [`get_balances: live balances of "${result.group.name}"`] };
  });
