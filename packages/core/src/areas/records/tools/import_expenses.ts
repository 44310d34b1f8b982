import { z } from 'zod';
import { previewWriteTool } from '../../../kernel/trpc.ts';
import { previewOutput } from '../../../kernel/preview.ts';
import { WRITE } from '../../../kernel/meta.ts';
import { uuid, handle, output, groupId } from '../../../kernel/text.ts';
import { importLedger } from '../import.ts';

const issueSchema = z.object({ line: z.number().int(), message: z.string() });

const IMPORT_FORMATS = ['splitwise', 'spliit', 'kitty'] as const;

export const import_expenses = previewWriteTool
  .meta({
    area: 'records',
    title: 'Import expenses from Splitwise, Spliit or another Kitty',
    description:
      "Imports a Splitwise or Spliit CSV export (csv), or a group exported from any Kitty (format kitty: document = export_group's json " +
      'data), into a group, all or nothing. Person columns (kitty: handles) map to members by `mapping`, else by handle or ' +
      "display name (case-insensitive). Amounts in the group currency's decimals. Splitwise: values are nets (paid − owed), rows in another " +
      'currency are skipped and reported. Spliit: values are shares, the payer\'s positive; cent rounding goes to the payer; add a "Paid By" ' +
      'column when the payer has no share in a group of more than two. Payments and reimbursements become confirmed payments, other rows ' +
      'expenses with an exact split. Kitty: expenses keep payers, shares, dates, categories and notes; confirmed payments are booked; ' +
      'deleted expenses and other payments skipped. Bad rows: VALIDATION_ERROR listing each (path "csv.line.N" or "document.json.…"), ' +
      'nothing imported. Rows already imported into this group are skipped, so the same file twice adds nothing.',
    annotations: WRITE,
    errors: {
      VALIDATION_ERROR: 'bad rows, each listed by line number (path "csv.line.N") or entry (path "document.…")',
      FORBIDDEN: 'not a member',
      NOT_FOUND: 'no such group',
      GROUP_ARCHIVED: '',
      DIRECT_LEDGER_NOT_ACCEPTED: 'the other agent has not accepted this direct ledger: nothing can be booked',
    },
  })
  .input(
    z.strictObject({
      group_id: groupId,
      format: z
        .enum(IMPORT_FORMATS, {
          error: (iss) =>
            `${iss.input === undefined ? 'required' : 'unknown format'}: the app the export comes from, one of ${IMPORT_FORMATS.map((f) => `"${f}"`).join(', ')}`,
        })
        .describe('Which app the export comes from: splitwise and spliit read csv, kitty reads document.'),
      csv: z.string().min(1).max(1_000_000).optional().describe('The CSV text of the export (splitwise, spliit).'),
      document: z
        .record(z.string(), z.unknown())
        .optional()
        .describe("export_group's data in format json: { format, group, json: { expenses, payments }, truncated } (kitty)."),
      mapping: z
        .record(z.string().min(1).max(100), handle)
        .optional()
        .describe('Person column name (kitty: handle in the export) → member handle.'),
    }),
  )
  .output(
    output({
      ...previewOutput,
      imported_expenses: z.number().int(),
      imported_payments: z.number().int(),
      already_imported: z.number().int().describe('Rows skipped because they were imported before.'),
      skipped: z.array(issueSchema).describe("Rows not imported, with why: no balance effect, or in another currency than the group's."),
      expense_ids: z.array(uuid),
      payment_ids: z.array(uuid),
      dry_run: z.boolean().describe('true on a preview (dry_run): nothing was imported.'),
    }),
  )
  .mutation(async ({ ctx, input }) => {
    const { group, would_import, result } = await importLedger(ctx.db, ctx.auth, input, ctx.services.now());
    return {
      ...result,
      dry_run: ctx.dryRun,
      suggested_next: ctx.dryRun
        ? [
            `import_expenses: run again without dry_run to import ${would_import.expenses} expense(s) and ${would_import.payments} payment(s)`,
          ]
        : [`get_balances: balances of "${group.name}" after the import`, 'list_expenses: see the imported expenses'],
    };
  });
