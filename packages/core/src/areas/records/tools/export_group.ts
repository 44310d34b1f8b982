import { z } from 'zod';
import { READ } from '../../../kernel/meta.ts';
import { groupMemberTool } from '../../../access/tools/group_tools.ts';
import { output, groupId, uuid } from '../../../kernel/text.ts';
import { receiptSchema } from '../../expenses/receipt-wire.ts';
import { expenseSchema } from '../../expenses/wire.ts';
import { paymentSchema } from '../../payments/payments.ts';
import { memberBalanceSchema, debtSchema } from '../../balances/balances.ts';
import { exportGroup } from '../export.ts';

export const export_group = groupMemberTool
  .meta({
    area: 'records',
    title: 'Export a group',
    description:
      "Exports a group's expenses (with shares), payments and balances, at most 20000 expenses and payments each (truncated says so). json: " +
      'the objects other tools return, plus receipt metadata; csv: five RFC 4180 documents with amounts in minor units and as decimals.',
    annotations: READ,
    errors: {},
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
    const result = await exportGroup(ctx.db, ctx, input, ctx.services.now());
    return { ...result, suggested_next: [`get_balances: live balances of "${result.group.name}"`] };
  });
