import { z } from 'zod';
import { writeTool } from '../../trpc.ts';
import { WRITE } from '../../meta.ts';
import { uuid, handle, output, groupId } from '../../text.ts';
import { importLedger } from '../../domain/ledger/import-run.ts';

const issueSchema = z.object({ line: z.number().int(), message: z.string() });

export const import_expenses = writeTool
  .meta({
    area: 'records',
    title: 'Import expenses from Splitwise, Spliit or another Kitty',
    description:
      "Imports a Splitwise or Spliit CSV export (csv: the file's text, up to 1,000,000 chars and 2000 rows) into a group. Person columns are mapped to " +
      'members by mapping {"column name": "handle"}; unmapped names match a member\'s handle or display name (case-insensitive). Amounts are read in the group ' +
      "currency's decimals. Splitwise: each person's value is their net (paid − owed) and a row's values sum to zero; blank lines and the \"Total balance\" " +
      'footers are skipped, and rows in another currency are skipped and reported in skipped (import the same file into a group of that currency for ' +
      "them). Spliit (its own CSV export): each value is the person's share, positive for the payer; shares rounded to the cent may miss the cost by a cent " +
      'per person, which the payer\'s share absorbs; a payer without a share is known only in a two-person group (otherwise add a "Paid By" column, then ' +
      'values are read as nets). Payment and reimbursement rows become confirmed payments; other rows become expenses with an exact split. All-or-nothing: ' +
      'if any row is bad nothing is imported and VALIDATION_ERROR lists every bad row by line number (details.issues, path "csv.line.N"). Kitty: document is ' +
      'export_group\'s data in format json, from any Kitty (other fields ignored); members match by handle or mapping {"source handle": "handle"}; ' +
      'expenses keep payers, shares, dates, categories and notes, confirmed payments are booked, deleted expenses and other payments skipped; ' +
      'bad entries are listed by path ("document.json.expenses.N"). Idempotent: a retry ' +
      'with the same key replays; rows already imported into this group (same content) are skipped, so importing the same file twice adds nothing. dry_run ' +
      'checks everything and imports nothing. Consent (our rule): in a direct ledger the other agent has not accepted yet nothing can be booked — ' +
      'DIRECT_LEDGER_NOT_ACCEPTED (409); nobody can be put in debt in a ledger they have not agreed to share.',
    annotations: WRITE,
    errors: {
      VALIDATION_ERROR: 'bad rows, each listed by line number (path "csv.line.N") or entry (path "document.…")',
      FORBIDDEN: 'not a member',
      NOT_FOUND: 'no such group',
      GROUP_ARCHIVED: 'the group is archived',
      DIRECT_LEDGER_NOT_ACCEPTED: 'a direct ledger the other agent has not accepted yet',
    },
  })
  .input(
    z.strictObject({
      group_id: groupId,
      format: z
        .enum(['splitwise', 'spliit', 'kitty'])
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
      dry_run: z.boolean().optional().describe('Check every row and report what would be imported, importing nothing (default false).'),
    }),
  )
  .output(
    output({
      imported_expenses: z.number().int(),
      imported_payments: z.number().int(),
      already_imported: z.number().int().describe('Rows skipped because they were imported before.'),
      skipped: z.array(issueSchema).describe("Rows not imported, with why: no balance effect, or in another currency than the group's."),
      expense_ids: z.array(uuid),
      payment_ids: z.array(uuid),
      dry_run: z.boolean(),
    }),
  )
  .mutation(async ({ ctx, input }) => {
    const { group, would_import, result } = await importLedger(ctx, input);
    return {
      ...result,
      suggested_next: input.dry_run
        ? [
            `import_expenses: run again without dry_run to import ${would_import.expenses} expense(s) and ${would_import.payments} payment(s)`,
          ]
        : [`get_balances: balances of "${group.name}" after the import`, 'list_expenses: see the imported expenses'],
    };
  });
