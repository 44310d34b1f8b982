/**
 * Parsing Splitwise and Spliit CSV exports (issue 3: import_expenses).
 *
 * Both exports carry, per row, the cost and one column per person (major units).
 *  - Splitwise: Date, Description, Category, Cost, Currency, <person>… where each person's value is
 *    their net effect (paid − owed; a row's values sum to zero). Real exports have a blank line after
 *    the header, quoted descriptions with commas, rows in several currencies and, per currency, a
 *    dated "Total balance" footer row. Footer rows are skipped; rows in another currency than the
 *    group's are skipped and reported (import the same file into a group of that currency for them).
 *    Category "Payment" rows are settle-up payments.
 *  - Spliit (its "Export to CSV"): a byte-order mark, every text quoted, Date, Description, Category,
 *    Currency (code, or the symbol in older exports), Cost, [Original cost, Original currency,
 *    Conversion rate], Is Reimbursement, Split mode, <person>… where each value is the person's
 *    share of the cost, positive for the one who paid it and negative for the others (a payer with
 *    no share shows 0, so who paid is then known only in a two-person group). Shares are rounded to
 *    the cent, so they may miss the cost by a cent per person: the difference goes to the payer's
 *    own share, or to the largest share. Reimbursements are payments from the payer to the one reimbursed.
 *    A "Paid By" column (payer's name) may be added; then the values are read as nets, as in Splitwise.
 * Unknown extra standard columns are ignored; any other column is a person.
 *
 * Reconstruction of paid/owed from nets (stored as an exact split): a person with a negative
 * net owes −net. With a named payer (Spliit) the payer paid the cost and owes cost − net. Without
 * (Splitwise) the people with positive nets are the payers; the part of the cost not covered by
 * others (cost − Σ positive nets) is their own share, allocated over them in proportion to their
 * nets (largest remainder). Balance effects equal the nets exactly either way.
 */
import { createHash } from 'node:crypto';
import type { ExpenseSpec } from '../expenses/spec.ts';
import { STANDARD, decimalToMinor, clean, isGroupCurrency, fromShares, paidOwedFromNets } from './import-values.ts';

type ImportFormat = 'splitwise' | 'spliit';

export interface ImportIssue {
  line: number;
  message: string;
}

export type ImportRow =
  | {
      kind: 'expense';
      line: number;
      importKey: string;
      date: string;
      description: string;
      category: string | null;
      spec: ExpenseSpec;
      foreign: { originalCurrency: string | null; originalAmountMinor: bigint | null; exchangeRate: string | null };
    }
  | {
      kind: 'payment';
      line: number;
      importKey: string;
      date: string;
      description: string;
      payerId: string;
      payeeId: string;
      amountMinor: bigint;
    };
export interface ParseContext {
  format: ImportFormat;
  groupCurrency: string;
  exponent: number;
  /** Exponent of another currency (for Spliit's original cost), undefined if unknown. */
  exponentOf: (code: string) => number | undefined;
  /** Resolves a person column name to an active member's agent id, or an error message. */
  person: (name: string) => { agentId: string } | { error: string };
  groupId: string;
}

export async function parseImport(
  text: string,
  ctx: ParseContext,
): Promise<{ rows: ImportRow[]; issues: ImportIssue[]; skipped: ImportIssue[] }> {
  // The CSV parser is loaded by the first import, not at start-up.
  const { parse } = await import('csv-parse/sync');
  const issues: ImportIssue[] = [];
  const skipped: ImportIssue[] = [];
  const rows: ImportRow[] = [];
  let records: Array<{ record: string[]; info: { lines: number } }>;
  try {
    records = parse(text, { bom: true, info: true, relax_column_count: true, skip_empty_lines: true, trim: false }) as never;
  } catch (e) {
    const err = e as { lines?: number; message?: string };
    return { rows, issues: [{ line: err.lines ?? 1, message: `not valid CSV: ${err.message ?? 'parse error'}` }], skipped };
  }
  if (!records.length) return { rows, issues: [{ line: 1, message: 'empty file' }], skipped };
  const header = records[0]!.record.map((h) => h.trim());
  const col = (name: string) => header.findIndex((h) => h.toLowerCase() === name);
  const iDate = col('date');
  const iDesc = col('description') >= 0 ? col('description') : col('title');
  const iCat = col('category');
  const iCost = col('cost') >= 0 ? col('cost') : col('amount');
  const iCur = col('currency');
  const iPaidBy = col('paid by');
  const iReimb = col('is reimbursement');
  const iOrigCost = col('original cost');
  const iOrigCur = col('original currency');
  const iRate = col('conversion rate');
  for (const [name, i] of [
    ['Date', iDate],
    ['Description', iDesc],
    ['Cost', iCost],
  ] as const) {
    if (i < 0) issues.push({ line: 1, message: `missing column "${name}" (expected a ${ctx.format} export)` });
  }
  const personCols = header.map((h, i) => ({ h, i })).filter(({ h }) => h !== '' && !STANDARD.has(h.toLowerCase()));
  if (!personCols.length) issues.push({ line: 1, message: 'no person columns found (one column per person with their net amount)' });
  if (issues.length) return { rows, issues, skipped };

  // Resolve person columns lazily: only columns used by some row must map to a member.
  const resolved = new Map<number, { agentId: string } | { error: string }>();
  const personOf = (i: number, h: string) => {
    let r = resolved.get(i);
    if (!r) {
      r = ctx.person(h);
      resolved.set(i, r);
    }
    return r;
  };
  const seenKeys = new Map<string, number>();
  // Spliit's own export: per-person shares (payer positive), not nets.
  const shareFormat = ctx.format === 'spliit' && iPaidBy < 0;

  for (const { record, info } of records.slice(1)) {
    const line = info.lines;
    const cell = (i: number) => (i >= 0 ? (record[i] ?? '').trim() : '');
    const desc = cell(iDesc);
    if (/^total balance$/i.test(desc)) continue; // Splitwise footer, one per currency, dated or not
    if (record.every((c) => c.trim() === '')) continue;
    const rowIssues: string[] = [];
    const date = cell(iDate).slice(0, 10);
    if (!/^\d{4}-\d{2}-\d{2}$/.test(date) || Number.isNaN(Date.parse(`${date}T00:00:00Z`)))
      rowIssues.push(`Date "${cell(iDate)}" is not YYYY-MM-DD`);
    const cur = cell(iCur);
    if (cur && !isGroupCurrency(cur, ctx.groupCurrency)) {
      if (/^[A-Za-z]{3}$/.test(cur) && ctx.exponentOf(cur.toUpperCase()) !== undefined) {
        skipped.push({
          line,
          message: `in ${cur.toUpperCase()}, not the group currency ${ctx.groupCurrency}: not imported here (import the file into a ${cur.toUpperCase()} group for these rows)`,
        });
        continue;
      }
      rowIssues.push(`Currency "${cur}" is not the group currency ${ctx.groupCurrency}`);
    }
    const cost = decimalToMinor(cell(iCost) || '0', ctx.exponent);
    if (cost === null) rowIssues.push(`Cost "${cell(iCost)}" is not a decimal amount in ${ctx.groupCurrency}`);
    const nets = new Map<string, bigint>();
    for (const { h, i } of personCols) {
      const raw = cell(i);
      if (raw === '') continue;
      const v = decimalToMinor(raw, ctx.exponent);
      if (v === null) {
        rowIssues.push(`"${h}" value "${raw}" is not a decimal amount`);
        continue;
      }
      if (v === 0n) continue;
      const p = personOf(i, h);
      if ('error' in p) {
        rowIssues.push(p.error);
        continue;
      }
      nets.set(p.agentId, (nets.get(p.agentId) ?? 0n) + v);
    }
    let sum = 0n;
    for (const v of nets.values()) sum += v;
    if (!rowIssues.length && !shareFormat && sum !== 0n) rowIssues.push(`the person amounts sum to ${sum} minor units, not 0`);
    if (rowIssues.length) {
      issues.push({ line, message: rowIssues.join('; ') });
      continue;
    }
    const description = clean(desc, 200) || '(no description)';
    const category = clean(cell(iCat), 50) || null;
    const content = `${ctx.format}|${ctx.groupId}|${record.map((c) => c.trim()).join('\u001f')}`;
    const n = (seenKeys.get(content) ?? 0) + 1;
    seenKeys.set(content, n);
    const importKey = createHash('sha256').update(`${content}|${n}`).digest('hex').slice(0, 40);
    const reimbursed = /^(true|yes|1)$/i.test(cell(iReimb));
    const isPayment = shareFormat ? reimbursed : /^payment$/i.test(cell(iCat)) || reimbursed;
    if (shareFormat) {
      // In a two-person group a payer without a share is the other column.
      const zeroCols = personCols.filter(({ i }) => cell(i) === '' || decimalToMinor(cell(i), ctx.exponent) === 0n);
      const other = personCols.length === 2 && zeroCols.length === 1 ? personOf(zeroCols[0]!.i, zeroCols[0]!.h) : undefined;
      if (other && 'error' in other) {
        issues.push({ line, message: other.error });
        continue;
      }
      const r = fromShares(nets, cost!, isPayment, other?.agentId);
      if ('error' in r) {
        issues.push({ line, message: r.error });
        continue;
      }
      if (r.kind === 'payment') {
        rows.push({ kind: 'payment', line, importKey, date, description, payerId: r.payerId, payeeId: r.payeeId, amountMinor: r.amount });
        continue;
      }
      for (const [id, net] of r.nets) nets.set(id, net);
      for (const id of [...nets.keys()]) if (!r.nets.has(id)) nets.delete(id);
    }
    const positives = [...nets].filter(([, v]) => v > 0n).sort(([a], [b]) => (a < b ? -1 : 1));
    const negatives = [...nets].filter(([, v]) => v < 0n).sort(([a], [b]) => (a < b ? -1 : 1));
    if (isPayment) {
      if (positives.length !== 1 || negatives.length !== 1) {
        issues.push({ line, message: 'a payment row needs exactly one person with a positive and one with a negative amount' });
        continue;
      }
      rows.push({
        kind: 'payment',
        line,
        importKey,
        date,
        description,
        payerId: positives[0]![0],
        payeeId: negatives[0]![0],
        amountMinor: positives[0]![1],
      });
      continue;
    }
    if (!nets.size) {
      skipped.push({ line, message: 'no one owes anyone on this row (no balance effect); skipped' });
      continue;
    }
    const paidByName = cell(iPaidBy);
    let payer: { agentId: string } | { error: string } | undefined;
    if (paidByName) {
      const colIdx = personCols.find(({ h }) => h === paidByName)?.i;
      payer = colIdx !== undefined ? personOf(colIdx, paidByName) : ctx.person(paidByName);
    }
    const split = paidOwedFromNets(nets, cost!, payer, importKey);
    if ('error' in split) {
      issues.push({ line, message: split.error });
      continue;
    }
    const { all, amount } = split;
    if (amount === 0n) {
      skipped.push({ line, message: 'cost is zero; skipped' });
      continue;
    }
    let foreign: Extract<ImportRow, { kind: 'expense' }>['foreign'] = {
      originalCurrency: null,
      originalAmountMinor: null,
      exchangeRate: null,
    };
    const oc = cell(iOrigCur).toUpperCase();
    const oe = oc ? ctx.exponentOf(oc) : undefined;
    if (oc && oe !== undefined && oc !== ctx.groupCurrency) {
      const oa = decimalToMinor(cell(iOrigCost), oe);
      const rate = cell(iRate);
      if (oa !== null && /^\d{1,12}(\.\d{1,12})?$/.test(rate))
        foreign = { originalCurrency: oc, originalAmountMinor: oa, exchangeRate: rate };
    }
    rows.push({
      kind: 'expense',
      line,
      importKey,
      date,
      description,
      category,
      spec: {
        amountMinor: amount,
        method: 'exact',
        payers: all.filter((l) => l.paidMinor !== 0n).map((l) => ({ agentId: l.agentId, paidMinor: l.paidMinor })),
        participants: all.filter((l) => l.owedMinor !== 0n).map((l) => ({ agentId: l.agentId, value: l.owedMinor.toString() })),
      },
      foreign,
    });
  }
  return { rows, issues, skipped };
}
