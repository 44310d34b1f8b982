/**
 * A group's full record (export_group): every expense with its shares, every payment, the balances
 * and pairwise debts, as JSON or as CSV tables (RFC 4180: CRLF line ends, fields with quotes,
 * commas or line breaks quoted, via csv-stringify).
 */
import type { Db } from '../../kernel/context.ts';
import type { GroupAccess } from '../../access/groups.ts';
import { currencyInfo, minorToDecimal } from '../../kernel/money.ts';
import { toExpenses, EXPENSE_INCLUDE } from '../expenses/view.ts';
import { toPayments } from '../payments/payments.ts';
import { groupBalances, pairwiseDebts, toMemberBalances } from '../balances/balances.ts';
import { toReceipt } from '../expenses/receipts.ts';

/** At most this many expenses and payments each in one export. */
const EXPORT_LIMIT = 20_000;

/**
 * Exports the group (`access`: the caller is a member) as of `now` (exported_at). Expenses ordered by date, then
 * creation; payments by creation; at most EXPORT_LIMIT of each (truncated says whether more exist);
 * deleted expenses only with include_deleted (flagged). Amounts are integer minor units, the CSV
 * also carries them as exact decimal strings in the group currency's exponent.
 * Returns { format, group: { group_id, name, currency, minor_unit_exponent, exported_at }, json |
 * csv: { expenses, shares, payments, balances, receipts }, truncated } (json also holds debts); receipts are metadata only.
 */
export async function exportGroup(
  db: Db,
  { group }: GroupAccess,
  req: { format?: 'json' | 'csv' | undefined; include_deleted?: boolean | undefined },
  now: Date,
) {
  const exp = currencyInfo(group.currency)?.minor_unit_exponent ?? 2;
  const rows = await db.expense.findMany({
    where: { groupId: group.id, ...(req.include_deleted ? {} : { deletedAt: null }) },
    include: EXPENSE_INCLUDE,
    orderBy: [{ date: 'asc' }, { createdAt: 'asc' }, { id: 'asc' }],
    take: EXPORT_LIMIT + 1,
  });
  const pays = await db.payment.findMany({
    where: { groupId: group.id },
    orderBy: [{ createdAt: 'asc' }, { id: 'asc' }],
    take: EXPORT_LIMIT + 1,
  });
  const truncated = rows.length > EXPORT_LIMIT || pays.length > EXPORT_LIMIT;
  const expenses = await toExpenses(db, rows.slice(0, EXPORT_LIMIT), group.currency);
  const payments = await toPayments(db, pays.slice(0, EXPORT_LIMIT), group.currency);
  const balances = toMemberBalances(await groupBalances(db, group.id), group.currency);
  // Receipt metadata (not the files) of the exported expenses.
  const receiptRows = await db.receipt.findMany({
    where: { expenseId: { in: expenses.map((e) => e.expense_id) } },
    orderBy: [{ createdAt: 'asc' }, { id: 'asc' }],
  });
  const receipts = receiptRows.map((r) => ({ expense_id: r.expenseId, ...toReceipt(r), sha256: r.sha256 }));
  const format = req.format ?? 'json';
  const head = {
    group_id: group.id,
    name: group.name,
    currency: group.currency,
    minor_unit_exponent: exp,
    exported_at: now.toISOString(),
  };
  if (format === 'json') {
    return {
      format,
      group: head,
      json: { expenses, payments, balances, debts: await pairwiseDebts(db, group.id, group.currency), receipts },
      truncated,
    };
  }
  // The CSV writer is loaded by the first CSV export, not at start-up.
  const { stringify } = await import('csv-stringify/sync');
  const csv = (header: string[], rows: unknown[][]) => stringify([header, ...rows], { record_delimiter: '\r\n', quoted_match: /[",\r\n]/ });
  const d = (m: number) => minorToDecimal(m, group.currency);
  return {
    format,
    group: head,
    csv: {
      expenses: csv(
        [
          'expense_id',
          'date',
          'description',
          'category',
          'category_id',
          'notes',
          'currency',
          'amount_minor',
          'amount',
          'split_method',
          'original_currency',
          'original_amount_minor',
          'exchange_rate',
          'created_by',
          'created_at',
          'deleted',
        ],
        expenses.map((e) => [
          e.expense_id,
          e.date,
          e.description,
          e.category ?? '',
          e.category_id,
          e.notes ?? '',
          e.currency,
          e.amount_minor,
          d(e.amount_minor),
          e.split_method,
          e.original_currency ?? '',
          e.original_amount_minor ?? '',
          e.exchange_rate ?? '',
          e.created_by.handle,
          e.created_at,
          e.deleted ? 'true' : 'false',
        ]),
      ),
      shares: csv(
        ['expense_id', 'handle', 'paid_minor', 'owed_minor', 'net_minor', 'paid', 'owed', 'split_value'],
        expenses.flatMap((e) =>
          e.shares.map((s) => [
            e.expense_id,
            s.handle,
            s.paid_minor,
            s.owed_minor,
            s.net_minor,
            d(s.paid_minor),
            d(s.owed_minor),
            s.split_value ?? '',
          ]),
        ),
      ),
      payments: csv(
        ['payment_id', 'from', 'to', 'amount_minor', 'amount', 'currency', 'status', 'note', 'created_at', 'resolved_at'],
        payments.map((p) => [
          p.payment_id,
          p.from.handle,
          p.to.handle,
          p.amount_minor,
          d(p.amount_minor),
          p.currency,
          p.status,
          p.note ?? '',
          p.created_at,
          p.resolved_at ?? '',
        ]),
      ),
      balances: csv(
        ['handle', 'display_name', 'balance_minor', 'balance', 'balance_pending_minor', 'pending_payments'],
        balances.map((b) => [b.handle, b.display_name, b.balance_minor, d(b.balance_minor), b.balance_pending_minor, b.pending_payments]),
      ),
      receipts: csv(
        ['receipt_id', 'expense_id', 'filename', 'content_type', 'size_bytes', 'sha256', 'created_at'],
        receipts.map((r) => [r.receipt_id, r.expense_id, r.filename, r.content_type, r.size_bytes, r.sha256, r.created_at]),
      ),
    },
    truncated,
  };
}
