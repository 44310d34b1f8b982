import { z } from 'zod';
import { stringify } from 'csv-stringify/sync';
import { readTool } from '../../trpc.ts';
import { READ } from '../../meta.ts';
import { output, groupId } from '../../text.ts';
import { requireMembership } from '../../domain/groups.ts';
import { currencyInfo } from '../../domain/money.ts';
import { expenseSchema } from '../../domain/ledger/expense-wire.ts';
import { toExpenses, EXPENSE_INCLUDE } from '../../domain/ledger/expense-view.ts';
import { paymentSchema, toPayments } from '../../domain/ledger/payments.ts';
import { memberBalanceSchema, debtSchema, groupBalances, pairwiseDebts, toMemberBalances } from '../../domain/ledger/balances.ts';

/** At most this many expenses and payments each in one export. */
const EXPORT_LIMIT = 20_000;

/** Minor units → plain decimal string ("-12.34"), exact. */
function minorToDecimal(minor: number, exponent: number): string {
  const neg = minor < 0;
  const s = Math.abs(minor).toString().padStart(exponent + 1, '0');
  const out = exponent === 0 ? s : `${s.slice(0, -exponent)}.${s.slice(-exponent)}`;
  return neg ? `-${out}` : out;
}

const csv = (header: string[], rows: unknown[][]) => stringify([header, ...rows], { record_delimiter: '\r\n', quoted_match: /[",\r\n]/ });

export const export_group = readTool
  .meta({
    area: 'records',
    title: 'Export a group',
    description:
      'Exports a group\'s expenses (with every member\'s paid/owed share), payments and balances. format json (default): the same objects the other tools ' +
      'return. format csv: four RFC 4180 documents (CRLF line ends, quotes doubled) made by a CSV library — expenses, shares (one row per expense and ' +
      'member), payments, balances — with amounts both in minor units (*_minor) and as plain decimals. include_deleted adds deleted expenses (flagged). At ' +
      'most 20000 expenses and payments each (truncated says so).',
    annotations: READ,
    errors: {
      NOT_FOUND: 'no such group',
      FORBIDDEN: 'not a member',
    },
  })
  .input(z.strictObject({ group_id: groupId, format: z.enum(['json', 'csv']).optional().describe('Default json.'), include_deleted: z.boolean().optional().describe('Also export deleted expenses, flagged (default false).') }))
  .output(
    output({
      format: z.enum(['json', 'csv']),
      group: z.object({ group_id: groupId, name: z.string(), currency: z.string(), minor_unit_exponent: z.number().int(), exported_at: z.string() }),
      json: z.object({ expenses: z.array(expenseSchema), payments: z.array(paymentSchema), balances: z.array(memberBalanceSchema), debts: z.array(debtSchema) }).optional(),
      csv: z.object({ expenses: z.string(), shares: z.string(), payments: z.string(), balances: z.string() }).optional(),
      truncated: z.boolean(),
    }),
  )
  .query(async ({ ctx, input }) => {
    const { group } = await requireMembership(ctx.db, input.group_id, ctx.auth.agentId);
    const exp = currencyInfo(group.currency)?.minor_unit_exponent ?? 2;
    const rows = await ctx.db.expense.findMany({
      where: { groupId: group.id, ...(input.include_deleted ? {} : { deletedAt: null }) },
      include: EXPENSE_INCLUDE,
      orderBy: [{ date: 'asc' }, { createdAt: 'asc' }, { id: 'asc' }],
      take: EXPORT_LIMIT + 1,
    });
    const pays = await ctx.db.payment.findMany({ where: { groupId: group.id }, orderBy: [{ createdAt: 'asc' }, { id: 'asc' }], take: EXPORT_LIMIT + 1 });
    const truncated = rows.length > EXPORT_LIMIT || pays.length > EXPORT_LIMIT;
    const expenses = await toExpenses(ctx.db, rows.slice(0, EXPORT_LIMIT), group.currency);
    const payments = await toPayments(ctx.db, pays.slice(0, EXPORT_LIMIT), group.currency);
    const balances = toMemberBalances(await groupBalances(ctx.db, group.id), group.currency);
    const format = input.format ?? 'json';
    const head = { group_id: group.id, name: group.name, currency: group.currency, minor_unit_exponent: exp, exported_at: ctx.services.now().toISOString() };
    const suggested_next = [`get_balances: live balances of "${group.name}"`];
    if (format === 'json') {
      return { format, group: head, json: { expenses, payments, balances, debts: await pairwiseDebts(ctx.db, group.id, group.currency) }, truncated, suggested_next };
    }
    const d = (m: number) => minorToDecimal(m, exp);
    return {
      format,
      group: head,
      csv: {
        expenses: csv(
          ['expense_id', 'date', 'description', 'category', 'notes', 'currency', 'amount_minor', 'amount', 'split_method', 'original_currency', 'original_amount_minor', 'exchange_rate', 'created_by', 'created_at', 'deleted'],
          expenses.map((e) => [e.expense_id, e.date, e.description, e.category ?? '', e.notes ?? '', e.currency, e.amount_minor, d(e.amount_minor), e.split_method, e.original_currency ?? '', e.original_amount_minor ?? '', e.exchange_rate ?? '', e.created_by.handle, e.created_at, e.deleted ? 'true' : 'false']),
        ),
        shares: csv(
          ['expense_id', 'handle', 'paid_minor', 'owed_minor', 'net_minor', 'paid', 'owed', 'split_value'],
          expenses.flatMap((e) => e.shares.map((s) => [e.expense_id, s.handle, s.paid_minor, s.owed_minor, s.net_minor, d(s.paid_minor), d(s.owed_minor), s.split_value ?? ''])),
        ),
        payments: csv(
          ['payment_id', 'from', 'to', 'amount_minor', 'amount', 'currency', 'status', 'note', 'created_at', 'resolved_at'],
          payments.map((p) => [p.payment_id, p.from.handle, p.to.handle, p.amount_minor, d(p.amount_minor), p.currency, p.status, p.note ?? '', p.created_at, p.resolved_at ?? '']),
        ),
        balances: csv(
          ['handle', 'display_name', 'balance_minor', 'balance', 'balance_pending_minor', 'pending_payments'],
          balances.map((b) => [b.handle, b.display_name, b.balance_minor, d(b.balance_minor), b.balance_pending_minor, b.pending_payments]),
        ),
      },
      truncated,
      suggested_next,
    };
  });
