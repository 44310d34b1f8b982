/**
 * Running an import (import_expenses): parses a Splitwise or Spliit CSV export against the group's
 * active members and books every new row — expenses with an exact split, payments as confirmed —
 * with balance effects and activity, all-or-nothing in the caller's transaction. Rows already
 * imported into the group (same import key) are skipped.
 */
import type { Db } from '../../kernel/context.ts';
import type { Actor } from '../../kernel/actor.ts';
import { ToolError } from '../../kernel/errors.ts';
import { requireMembership, assertNotArchived, assertLedgerAccepted } from '../../access/groups.ts';
import { currencyInfo } from '../../kernel/money.ts';
import { appendActivity } from '../../kernel/activity.ts';
import { appendEvent, activeMemberIds } from '../../kernel/events.ts';
import { LedgerDelta, applyDelta } from '../ledger/effects.ts';
import { activeMembersByHandle, insertExpense } from '../expenses/store.ts';
import { parseImport, type ImportIssue, type ParseContext } from './import-parse.ts';
import { resolveCategoryId } from '../reference/categories.ts';
import { parseKittyExport, type KittyImportRow } from './import-kitty.ts';

/** Most rows one import may hold. */
const MAX_IMPORT_ROWS = 2000;

/**
 * An import request: csv is the export's text (splitwise, spliit), document export_group's JSON answer
 * (kitty: import-kitty.ts); mapping maps a person column name (kitty: a source handle) to a member handle.
 */
export interface ImportRequest {
  group_id: string;
  format: ParseContext['format'] | 'kitty';
  csv?: string | undefined;
  document?: Record<string, unknown> | undefined;
  mapping?: Record<string, string> | undefined;
}

/**
 * Imports `req.csv` into group `req.group_id` on behalf of `actor` at `now`, holding the group
 * lock. Person columns resolve through `mapping`, else a member's handle or display name
 * (case-insensitive). Amounts are integer minor units of the group currency.
 * Returns the group and { imported_expenses, imported_payments, already_imported,
 * skipped (rows without balance effect or in another currency, with why), expense_ids, payment_ids };
 * `would_import` counts what was booked.
 * Errors: NOT_FOUND (group), FORBIDDEN (not a member), GROUP_ARCHIVED, DIRECT_LEDGER_NOT_ACCEPTED,
 * VALIDATION_ERROR listing every bad row (details.issues, path "csv.line.N"; more than
 * MAX_IMPORT_ROWS rows is one of them) — nothing is booked then.
 */
export async function importLedger(db: Db, actor: Pick<Actor, 'agentId'>, req: ImportRequest, now: Date) {
  const agentId = actor.agentId;
  const { group } = await requireMembership(db, req.group_id, agentId, { lock: true });
  assertNotArchived(group);
  await assertLedgerAccepted(db, group);
  const members = await activeMembersByHandle(db, group.id);
  const byName = new Map<string, string>();
  for (const m of members.values()) {
    byName.set(m.handle.toLowerCase(), m.agentId);
    if (!byName.has(m.displayName.toLowerCase())) byName.set(m.displayName.toLowerCase(), m.agentId);
  }
  const mapping = req.mapping ?? {};
  const person = (name: string) => {
    const mapped = mapping[name];
    if (mapped !== undefined) {
      const m = members.get(mapped);
      return m ? { agentId: m.agentId } : { error: `mapping "${name}" → @${mapped}: not an active member of this group` };
    }
    const id = byName.get(name.trim().toLowerCase());
    return id ? { agentId: id } : { error: `person "${name}" is not mapped to a member: add "${name}": "<handle>" to mapping` };
  };
  const input = req.format === 'kitty' ? 'document' : 'csv';
  if ((input === 'csv' ? req.csv : req.document) === undefined || (input === 'document' && req.csv !== undefined))
    throw new ToolError('VALIDATION_ERROR', `format ${req.format} reads ${input} (and only ${input}).`, {
      details: { issues: [{ path: input, message: `required with format ${req.format}`, code: 'invalid_type' }] },
    });
  const { rows, issues, skipped } =
    req.format === 'kitty'
      ? parseKittyExport(req.document, { groupCurrency: group.currency, person })
      : await parseImport(req.csv!, {
          format: req.format,
          groupCurrency: group.currency,
          exponent: currencyInfo(group.currency)?.minor_unit_exponent ?? 2,
          exponentOf: (c) => currencyInfo(c)?.minor_unit_exponent,
          groupId: group.id,
          person,
        });
  const all: Array<ImportIssue & { path?: string }> = [...issues];
  if (rows.length > MAX_IMPORT_ROWS)
    all.push({ line: rows[MAX_IMPORT_ROWS]!.line, message: `more than ${MAX_IMPORT_ROWS} rows; split the file` });
  if (all.length) {
    const dedup = new Map<string, ImportIssue & { path?: string }>();
    for (const i of all) dedup.set(`${i.path ?? i.line}|${i.message}`, i);
    const list = [...dedup.values()].slice(0, 200);
    const where = (i: ImportIssue & { path?: string }) => i.path ?? `csv.line.${i.line}`;
    throw new ToolError(
      'VALIDATION_ERROR',
      `${input}: ${list.length} bad row(s); nothing was imported. First: ${where(list[0]!)}: ${list[0]!.message}`,
      {
        details: { issues: list.map((i) => ({ path: where(i), message: i.message, code: 'bad_row' })) },
        suggestedAction: 'Fix the listed lines (or add mapping entries) and import again.',
      },
    );
  }
  const keys = rows.map((r) => r.importKey);
  // Sequential: one transaction connection runs one query at a time.
  const doneE = await db.expense.findMany({ where: { groupId: group.id, importKey: { in: keys } }, select: { importKey: true } });
  const doneP = await db.payment.findMany({ where: { groupId: group.id, importKey: { in: keys } }, select: { importKey: true } });
  const done = new Set([...doneE, ...doneP].map((r) => r.importKey));
  const todo = rows.filter((r) => !done.has(r.importKey));
  const expense_ids: string[] = [];
  const payment_ids: string[] = [];
  const audience = await activeMemberIds(db, group.id);
  for (const r of todo) {
    if (r.kind === 'expense') {
      const { id } = await insertExpense(db, {
        groupId: group.id,
        actorId: agentId,
        createdById: agentId,
        spec: r.spec,
        date: r.date,
        now,
        importKey: r.importKey,
        action: 'expense.imported',
        event: { audience, currency: group.currency },
        fields: {
          description: r.description,
          category: r.category,
          categoryId: resolveCategoryId((r as KittyImportRow).categoryId, r.category),
          notes: (r as KittyImportRow).notes !== undefined ? (r as KittyImportRow).notes! : `imported from ${req.format} (line ${r.line})`,
          ...r.foreign,
        },
      });
      expense_ids.push(id);
    } else {
      const p = await db.payment.create({
        data: {
          groupId: group.id,
          payerId: r.payerId,
          payeeId: r.payeeId,
          amountMinor: r.amountMinor,
          note: r.description.slice(0, 200),
          status: 'confirmed',
          recordedById: agentId,
          createdAt: now,
          updatedAt: now,
          resolvedAt: now,
          importKey: r.importKey,
        },
      });
      await applyDelta(db, group.id, new LedgerDelta().addPayment(r.payerId, r.payeeId, r.amountMinor, 1n));
      await appendActivity(db, {
        groupId: group.id,
        actorId: agentId,
        action: 'payment.imported',
        entityType: 'payment',
        entityId: p.id,
        after: { from: r.payerId, to: r.payeeId, amount_minor: r.amountMinor.toString(), status: 'confirmed' },
      });
      await appendEvent(db, {
        type: 'payment.recorded',
        groupId: group.id,
        actorId: agentId,
        recipients: [...new Set([r.payerId, r.payeeId, agentId])],
        data: {
          payment_id: p.id,
          payer_id: r.payerId,
          payee_id: r.payeeId,
          amount_minor: r.amountMinor.toString(),
          currency: group.currency,
          status: 'confirmed',
        },
      });
      payment_ids.push(p.id);
    }
  }
  const imported_expenses = todo.filter((r) => r.kind === 'expense').length;
  const imported_payments = todo.length - imported_expenses;
  return {
    group,
    would_import: { expenses: imported_expenses, payments: imported_payments },
    result: {
      imported_expenses,
      imported_payments,
      already_imported: rows.length - todo.length,
      skipped,
      expense_ids,
      payment_ids,
    },
  };
}
