/**
 * Moving a group between Kitty servers: import_expenses with format "kitty" reads what export_group
 * answers in JSON (its `data`: { group, json: { expenses, payments, … }, truncated }; anything else in
 * it, such as suggested_next or inbox, is ignored) and turns it into the same rows as a CSV import:
 * every expense with its payers, exact shares, date, category, notes and foreign-currency fields, and
 * every confirmed payment. Members are matched by handle (or `mapping`: source handle → handle here).
 * Each row's import key is derived from the source group and entity id, so importing the same
 * document twice adds nothing. Deleted expenses and payments that are not confirmed (pending,
 * rejected, cancelled) have no balance effect and are skipped and reported.
 */
import { isCategoryId } from '../reference/categories.ts';
import { createHash } from 'node:crypto';
import { z } from 'zod';
import type { ImportIssue, ImportRow } from './import-parse.ts';

/** A row with the notes of the source expense (CSV imports note their line instead). */
export type KittyImportRow = ImportRow & { notes?: string | null; categoryId?: string };

/** An issue with the path of the entry it concerns, e.g. "document.json.expenses.3". */
export type KittyImportIssue = ImportIssue & { path: string };

const person = z.object({ handle: z.string().min(1) });
const shareSchema = person.extend({ paid_minor: z.number().int(), owed_minor: z.number().int() });
const expenseSchema = z.object({
  expense_id: z.string().min(1),
  description: z.string(),
  amount_minor: z.number().int(),
  date: z.string().regex(/^\d{4}-\d{2}-\d{2}$/),
  category: z.string().nullable().optional(),
  category_id: z.string().optional(),
  notes: z.string().nullable().optional(),
  original_currency: z.string().nullable().optional(),
  original_amount_minor: z.number().int().nullable().optional(),
  exchange_rate: z.string().nullable().optional(),
  shares: z.array(shareSchema).min(1),
  deleted: z.boolean().optional(),
});
const paymentSchema = z.object({
  payment_id: z.string().min(1),
  from: person,
  to: person,
  amount_minor: z.number().int().positive(),
  note: z.string().nullable().optional(),
  status: z.string(),
  created_at: z.string(),
});
const documentSchema = z.object({
  format: z.literal('json'),
  group: z.object({ group_id: z.string().min(1), currency: z.string() }),
  json: z.object({ expenses: z.array(z.unknown()), payments: z.array(z.unknown()) }),
  truncated: z.boolean().optional(),
});

export interface KittyParseContext {
  groupCurrency: string;
  /** Resolves a source handle to an active member here, or an error message. */
  person: (handle: string) => { agentId: string } | { error: string };
}

const key = (sourceGroup: string, kind: string, id: string) =>
  createHash('sha256').update(`kitty|${sourceGroup}|${kind}|${id}`).digest('hex').slice(0, 40);

const zodMessage = (e: z.ZodError) => e.issues.map((i) => `${i.path.join('.') || '(root)'}: ${i.message}`).join('; ');

/** Parses an export_group JSON answer into import rows; every problem is an issue with its path (nothing is booked then). */
export function parseKittyExport(
  doc: unknown,
  ctx: KittyParseContext,
): { rows: KittyImportRow[]; issues: KittyImportIssue[]; skipped: ImportIssue[] } {
  const rows: KittyImportRow[] = [];
  const issues: KittyImportIssue[] = [];
  const skipped: ImportIssue[] = [];
  const top = documentSchema.safeParse(doc);
  if (!top.success)
    return {
      rows,
      issues: [{ line: 0, path: 'document', message: `not an export_group answer in JSON (its data): ${zodMessage(top.error)}` }],
      skipped,
    };
  const { group, json, truncated } = top.data;
  if (group.currency !== ctx.groupCurrency)
    issues.push({
      line: 0,
      path: 'document.group.currency',
      message: `the export is in ${group.currency}, this group in ${ctx.groupCurrency}`,
    });
  if (truncated)
    issues.push({ line: 0, path: 'document.truncated', message: 'the export was truncated; it does not hold the whole group' });
  const who = (handle: string, path: string): string | null => {
    const r = ctx.person(handle);
    if ('error' in r) {
      issues.push({ line: 0, path, message: r.error });
      return null;
    }
    return r.agentId;
  };

  json.expenses.forEach((raw, i) => {
    const path = `document.json.expenses.${i}`;
    const p = expenseSchema.safeParse(raw);
    if (!p.success) return void issues.push({ line: i + 1, path, message: zodMessage(p.error) });
    const e = p.data;
    if (e.deleted) return void skipped.push({ line: i + 1, message: `expense ${i + 1} ("${e.description}") is deleted` });
    const lines = e.shares.map((s, j) => ({
      agentId: who(s.handle, `${path}.shares.${j}.handle`),
      paid: BigInt(s.paid_minor),
      owed: BigInt(s.owed_minor),
    }));
    if (lines.some((l) => l.agentId === null)) return;
    const payers = lines.filter((l) => l.paid !== 0n).map((l) => ({ agentId: l.agentId!, paidMinor: l.paid }));
    const participants = lines.filter((l) => l.owed !== 0n).map((l) => ({ agentId: l.agentId!, value: l.owed.toString() }));
    const foreign =
      e.original_currency && e.original_amount_minor != null && e.exchange_rate
        ? { originalCurrency: e.original_currency, originalAmountMinor: BigInt(e.original_amount_minor), exchangeRate: e.exchange_rate }
        : { originalCurrency: null, originalAmountMinor: null, exchangeRate: null };
    rows.push({
      kind: 'expense',
      line: i + 1,
      importKey: key(group.group_id, 'expense', e.expense_id),
      date: e.date,
      description: e.description,
      category: e.category ?? null,
      ...(e.category_id && isCategoryId(e.category_id) ? { categoryId: e.category_id } : {}),
      notes: e.notes ?? null,
      spec: { amountMinor: BigInt(e.amount_minor), method: 'exact', payers, participants },
      foreign,
    });
  });

  json.payments.forEach((raw, i) => {
    const path = `document.json.payments.${i}`;
    const p = paymentSchema.safeParse(raw);
    if (!p.success) return void issues.push({ line: i + 1, path, message: zodMessage(p.error) });
    const pay = p.data;
    if (pay.status !== 'confirmed')
      return void skipped.push({ line: i + 1, message: `payment ${i + 1} is ${pay.status}: only confirmed payments move balances` });
    const payerId = who(pay.from.handle, `${path}.from.handle`);
    const payeeId = who(pay.to.handle, `${path}.to.handle`);
    if (!payerId || !payeeId) return;
    rows.push({
      kind: 'payment',
      line: i + 1,
      importKey: key(group.group_id, 'payment', pay.payment_id),
      date: pay.created_at.slice(0, 10),
      description: pay.note ?? 'Payment',
      payerId,
      payeeId,
      amountMinor: BigInt(pay.amount_minor),
    });
  });
  return { rows, issues, skipped };
}
