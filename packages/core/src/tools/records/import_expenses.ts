import { z } from 'zod';
import { writeTool } from '../../trpc.ts';
import { WRITE } from '../../meta.ts';
import { ToolError } from '../../errors.ts';
import { uuid, handle, output, groupId } from '../../text.ts';
import { requireMembership, assertNotArchived, assertLedgerAccepted } from '../../domain/groups.ts';
import { currencyInfo } from '../../domain/money.ts';
import { appendActivity } from '../../domain/activity.ts';
import { LedgerDelta, applyDelta } from '../../domain/ledger/effects.ts';
import { activeMembersByHandle, insertExpense } from '../../domain/ledger/expense-store.ts';
import { parseImport, type ImportIssue } from '../../domain/ledger/import.ts';

const MAX_IMPORT_ROWS = 2000;

const issueSchema = z.object({ line: z.number().int(), message: z.string() });

export const import_expenses = writeTool
  .meta({
    area: 'records',
    title: 'Import expenses from Splitwise or Spliit',
    description:
      'Imports a Splitwise or Spliit CSV export (csv: the file\'s text, up to 1,000,000 chars and 2000 rows) into a group. Person columns are mapped to ' +
      'members by mapping {"column name": "handle"}; unmapped names match a member\'s handle or display name (case-insensitive). Amounts are read in the group ' +
      'currency\'s decimals. Splitwise: each person\'s value is their net (paid − owed) and a row\'s values sum to zero; blank lines and the "Total balance" ' +
      'footers are skipped, and rows in another currency are skipped and reported in skipped (import the same file into a group of that currency for ' +
      'them). Spliit (its own CSV export): each value is the person\'s share, positive for the payer; shares rounded to the cent may miss the cost by a cent ' +
      'per person, which the payer\'s share absorbs; a payer without a share is known only in a two-person group (otherwise add a "Paid By" column, then ' +
      'values are read as nets). Payment and reimbursement rows become confirmed payments; other rows become expenses with an exact split. All-or-nothing: ' +
      'if any row is bad nothing is imported and VALIDATION_ERROR lists every bad row by line number (details.issues, path "csv.line.N"). Idempotent: a retry ' +
      'with the same key replays; rows already imported into this group (same content) are skipped, so importing the same file twice adds nothing. dry_run ' +
      'checks everything and imports nothing. Consent (our rule): in a direct ledger the other agent has not accepted yet nothing can be booked — ' +
      'DIRECT_LEDGER_NOT_ACCEPTED (409); nobody can be put in debt in a ledger they have not agreed to share.',
    annotations: WRITE,
    errors: {
      VALIDATION_ERROR: 'bad rows, each listed by line number (path "csv.line.N")',
      FORBIDDEN: 'not a member',
      NOT_FOUND: 'no such group',
      GROUP_ARCHIVED: 'the group is archived',
      DIRECT_LEDGER_NOT_ACCEPTED: 'a direct ledger the other agent has not accepted yet',
    },
  })
  .input(
    z.strictObject({
      group_id: groupId,
      format: z.enum(['splitwise', 'spliit']).describe('Which app the CSV export comes from.'),
      csv: z.string().min(1).max(1_000_000).describe('The CSV text of the export.'),
      mapping: z.record(z.string().min(1).max(100), handle).optional().describe('Person column name → member handle.'),
      dry_run: z.boolean().optional().describe('Check every row and report what would be imported, importing nothing (default false).'),
    }),
  )
  .output(
    output({
      imported_expenses: z.number().int(),
      imported_payments: z.number().int(),
      already_imported: z.number().int().describe('Rows skipped because they were imported before.'),
      skipped: z.array(issueSchema).describe('Rows not imported, with why: no balance effect, or in another currency than the group\'s.'),
      expense_ids: z.array(uuid),
      payment_ids: z.array(uuid),
      dry_run: z.boolean(),
    }),
  )
  .mutation(async ({ ctx, input }) => {
    const agentId = ctx.auth.agentId;
    const now = ctx.services.now();
    const { group } = await requireMembership(ctx.db, input.group_id, agentId, { lock: true });
    assertNotArchived(group);
    await assertLedgerAccepted(ctx.db, group);
    const members = await activeMembersByHandle(ctx.db, group.id);
    const byName = new Map<string, string>();
    for (const m of members.values()) {
      byName.set(m.handle.toLowerCase(), m.agentId);
      if (!byName.has(m.displayName.toLowerCase())) byName.set(m.displayName.toLowerCase(), m.agentId);
    }
    const mapping = input.mapping ?? {};
    const { rows, issues, skipped } = parseImport(input.csv, {
      format: input.format,
      groupCurrency: group.currency,
      exponent: currencyInfo(group.currency)?.minor_unit_exponent ?? 2,
      exponentOf: (c) => currencyInfo(c)?.minor_unit_exponent,
      groupId: group.id,
      person: (name) => {
        const mapped = mapping[name];
        if (mapped !== undefined) {
          const m = members.get(mapped);
          return m ? { agentId: m.agentId } : { error: `mapping "${name}" → @${mapped}: not an active member of this group` };
        }
        const id = byName.get(name.trim().toLowerCase());
        return id ? { agentId: id } : { error: `person "${name}" is not mapped to a member: add "${name}": "<handle>" to mapping` };
      },
    });
    const all: ImportIssue[] = [...issues];
    if (rows.length > MAX_IMPORT_ROWS) all.push({ line: rows[MAX_IMPORT_ROWS]!.line, message: `more than ${MAX_IMPORT_ROWS} rows; split the file` });
    if (all.length) {
      const dedup = new Map<string, ImportIssue>();
      for (const i of all) dedup.set(`${i.line}|${i.message}`, i);
      const list = [...dedup.values()].slice(0, 200);
      throw new ToolError('VALIDATION_ERROR', `csv: ${list.length} bad row(s); nothing was imported. First: line ${list[0]!.line}: ${list[0]!.message}`, {
        details: { issues: list.map((i) => ({ path: `csv.line.${i.line}`, message: i.message, code: 'bad_row' })) },
        suggestedAction: 'Fix the listed lines (or add mapping entries) and import again.',
      });
    }
    const keys = rows.map((r) => r.importKey);
    // Sequential: one transaction connection runs one query at a time.
    const doneE = await ctx.db.expense.findMany({ where: { groupId: group.id, importKey: { in: keys } }, select: { importKey: true } });
    const doneP = await ctx.db.payment.findMany({ where: { groupId: group.id, importKey: { in: keys } }, select: { importKey: true } });
    const done = new Set([...doneE, ...doneP].map((r) => r.importKey));
    const todo = rows.filter((r) => !done.has(r.importKey));
    const expense_ids: string[] = [];
    const payment_ids: string[] = [];
    if (!input.dry_run) {
      for (const r of todo) {
        if (r.kind === 'expense') {
          const { id } = await insertExpense(ctx.db, {
            groupId: group.id, actorId: agentId, createdById: agentId, spec: r.spec, date: r.date, now, importKey: r.importKey, action: 'expense.imported',
            fields: { description: r.description, category: r.category, notes: `imported from ${input.format} (line ${r.line})`, ...r.foreign },
          });
          expense_ids.push(id);
        } else {
          const p = await ctx.db.payment.create({
            data: {
              groupId: group.id, payerId: r.payerId, payeeId: r.payeeId, amountMinor: r.amountMinor, note: r.description.slice(0, 200),
              status: 'confirmed', recordedById: agentId, createdAt: now, updatedAt: now, resolvedAt: now, importKey: r.importKey,
            },
          });
          await applyDelta(ctx.db, group.id, new LedgerDelta().addPayment(r.payerId, r.payeeId, r.amountMinor, 1n));
          await appendActivity(ctx.db, { groupId: group.id, actorId: agentId, action: 'payment.imported', entityType: 'payment', entityId: p.id, after: { from: r.payerId, to: r.payeeId, amount_minor: r.amountMinor.toString(), status: 'confirmed' } });
          payment_ids.push(p.id);
        }
      }
    }
    const imported_expenses = todo.filter((r) => r.kind === 'expense').length;
    const imported_payments = todo.length - imported_expenses;
    return {
      imported_expenses: input.dry_run ? 0 : imported_expenses,
      imported_payments: input.dry_run ? 0 : imported_payments,
      already_imported: rows.length - todo.length,
      skipped,
      expense_ids,
      payment_ids,
      dry_run: input.dry_run ?? false,
      suggested_next: input.dry_run
        ? [`import_expenses: run again without dry_run to import ${imported_expenses} expense(s) and ${imported_payments} payment(s)`]
        : [`get_balances: balances of "${group.name}" after the import`, 'list_expenses: see the imported expenses'],
    };
  });
