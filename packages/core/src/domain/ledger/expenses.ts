/**
 * Expenses (DESIGN.md §2; issue 3): input schemas, resolution of handles to members,
 * the split computation, insertion with its balance effect, and the output projection.
 */
import { randomUUID } from 'node:crypto';
import { z } from 'zod';
import type { Db, ToolContext } from '../../context.ts';
import { ToolError, validationError } from '../../errors.ts';
import { uuid, handle, text, longText, isoDate, currencyCode, amountMinor, timestamp, agentRef, MAX_AMOUNT_MINOR } from '../../text.ts';
import { requireCurrency, currencyInfo, formatMinor, toNumber } from '../money.ts';
import { toAgentRef } from '../agents.ts';
import { appendActivity } from '../activity.ts';
import { requireMembership, assertNotArchived, assertLedgerAccepted } from '../groups.ts';
import { notifyAll } from '../inbox.ts';
import { assertCanEdit } from './access.ts';
import { allocate, parseScaled, scaledToString, convertAmount, HUNDRED_PERCENT, type ShareLine } from './split.ts';
import { LedgerDelta, applyDelta } from './effects.ts';

type SplitMethod = 'equal' | 'exact' | 'percent' | 'shares';
const SPLIT_METHODS = ['equal', 'exact', 'percent', 'shares'] as const;
export type RepeatUnit = 'day' | 'week' | 'month' | 'year';

// ───────────── input schemas ─────────────

const decimalInput = z.union([z.number().min(0), z.string().regex(/^\d{1,12}(\.\d{1,6})?$/, 'a non-negative decimal with at most 6 decimals')]);

export const payersInput = z
  .array(
    z.strictObject({
      handle: handle.describe('A member who paid.'),
      amount_minor: amountMinor.optional().describe('What this member paid, minor units. Optional only when there is a single payer (then they paid the whole amount).'),
    }),
  )
  .min(1)
  .max(100)
  .describe('Who paid: default the caller paid everything. With several payers every amount_minor is required and they must sum exactly to the amount.');

export const splitInput = z
  .strictObject({
    method: z.enum(SPLIT_METHODS).default('equal').describe('equal | exact | percent | shares (default equal).'),
    participants: z
      .array(
        z.strictObject({
          handle: handle.describe('A member who shares this expense.'),
          amount_minor: amountMinor.optional().describe('method exact: this member\'s share in minor units (all must sum exactly to the amount).'),
          percent: decimalInput.optional().describe('method percent: this member\'s percentage (up to 6 decimals; all must sum to exactly 100).'),
          shares: decimalInput.optional().describe('method shares: this member\'s weight (e.g. 2 for two people; up to 6 decimals; > 0).'),
        }),
      )
      .min(1)
      .max(100)
      .optional()
      .describe('Default: every active member, equally. For equal give handles only.'),
  })
  .describe('How the amount is shared (owed). Rounding: largest remainder; ties broken by a rotation seeded with the expense id.');

export const repeatInput = z
  .strictObject({
    every: z.number().int().min(1).max(1000).default(1).describe('Interval count, e.g. 2 with unit week = fortnightly.'),
    unit: z.enum(['day', 'week', 'month', 'year']).describe('Calendar unit of the interval (UTC dates).'),
    until: isoDate.optional().describe('Last possible date (inclusive), YYYY-MM-DD.'),
    count: z.number().int().min(2).max(1000).optional().describe('Total occurrences including this first one.'),
  })
  .describe('Repeat this expense: a copy is created on each later date (UTC) by the scheduler, exactly once each; months keep the day of the month, clamped to the month end.');

export const foreignFields = {
  original_currency: currencyCode.optional().describe('Currency the expense was paid in (ISO 4217), when not the group currency.'),
  original_amount_minor: amountMinor.optional().describe('Amount in original_currency minor units.'),
  exchange_rate: z
    .string()
    .regex(/^\d{1,12}(\.\d{1,12})?$/, 'exchange_rate must be a decimal string like "1.0845"')
    .optional()
    .describe('Group-currency units per 1 original-currency unit, decimal string. amount_minor = original_amount_minor × rate × 10^(group exponent − original exponent), rounded half away from zero.'),
};

// ───────────── output schemas ─────────────

const shareSchema = z.object({
  agent_id: uuid,
  handle: z.string(),
  display_name: z.string(),
  paid_minor: z.number().int().describe('What this member paid.'),
  owed_minor: z.number().int().describe('This member\'s share of the cost.'),
  net_minor: z.number().int().describe('paid − owed: the effect on their balance.'),
  split_value: z.string().nullable().describe('The split input: "1" (equal), the exact amount, the percent or the shares; null for a payer who does not share.'),
});

const recurrenceSchema = z.object({
  recurrence_id: uuid,
  every: z.number().int(),
  unit: z.enum(['day', 'week', 'month', 'year']),
  start_date: z.string(),
  until: z.string().nullable(),
  count: z.number().int().nullable(),
  active: z.boolean(),
  next_date: z.string().nullable().describe('Date of the next occurrence, null when stopped or finished.'),
});

export const expenseSchema = z.object({
  expense_id: uuid,
  group_id: uuid,
  description: z.string(),
  amount_minor: z.number().int().describe('Group-currency amount, minor units; negative for a refund.'),
  amount: z.string().describe('Formatted amount.'),
  currency: z.string(),
  date: z.string().describe('YYYY-MM-DD'),
  category: z.string().nullable(),
  notes: z.string().nullable(),
  split_method: z.enum(SPLIT_METHODS),
  original_currency: z.string().nullable(),
  original_amount_minor: z.number().int().nullable(),
  exchange_rate: z.string().nullable(),
  shares: z.array(shareSchema),
  created_by: agentRef,
  created_at: timestamp,
  updated_at: timestamp,
  deleted: z.boolean(),
  deleted_at: timestamp.nullable(),
  recurrence: recurrenceSchema.nullable(),
  occurrence_index: z.number().int().nullable().describe('0 for the first of a repeating series, then 1, 2, …'),
});
export type ExpenseOut = z.infer<typeof expenseSchema>;

// ───────────── spec ─────────────

/** A fully resolved expense: what is stored and what a recurrence repeats. */
export interface ExpenseSpec {
  amountMinor: bigint;
  payers: Array<{ agentId: string; paidMinor: bigint }>;
  method: SplitMethod;
  /** value: "1" (equal), exact amount, percent or shares as canonical decimal strings. */
  participants: Array<{ agentId: string; value: string }>;
}

export interface ExpenseFields {
  description: string;
  category: string | null;
  notes: string | null;
  originalCurrency: string | null;
  originalAmountMinor: bigint | null;
  exchangeRate: string | null;
}

export interface MemberRef {
  agentId: string;
  handle: string;
  displayName: string;
}

/** Active members of a group keyed by handle. */
export async function activeMembersByHandle(db: Db, groupId: string): Promise<Map<string, MemberRef>> {
  const rows = await db.$queryRaw<Array<{ id: string; handle: string; display_name: string }>>`
    SELECT a.id, a.handle, a.display_name FROM memberships m JOIN agents a ON a.id = m.agent_id
    WHERE m.group_id = ${groupId}::uuid AND m.left_at IS NULL ORDER BY m.joined_at`;
  return new Map(rows.map((r) => [r.handle, { agentId: r.id, handle: r.handle, displayName: r.display_name }]));
}

function memberAt(members: Map<string, MemberRef>, h: string, path: string): MemberRef {
  const m = members.get(h);
  if (!m) throw validationError(path, `@${h} is not an active member of this group`, 'not_a_member');
  return m;
}

/**
 * Resolves the amount from amount_minor or the foreign-currency fields.
 * Errors name the field (VALIDATION_ERROR).
 */
export function resolveAmount(
  groupCurrency: string,
  input: { amount_minor?: number | undefined; original_currency?: string | null | undefined; original_amount_minor?: number | null | undefined; exchange_rate?: string | null | undefined },
): { amountMinor: bigint; foreign: Pick<ExpenseFields, 'originalCurrency' | 'originalAmountMinor' | 'exchangeRate'> } {
  const anyForeign = input.original_currency != null || input.original_amount_minor != null || input.exchange_rate != null;
  let amount: bigint;
  let foreign: Pick<ExpenseFields, 'originalCurrency' | 'originalAmountMinor' | 'exchangeRate'> = { originalCurrency: null, originalAmountMinor: null, exchangeRate: null };
  if (anyForeign) {
    for (const f of ['original_currency', 'original_amount_minor', 'exchange_rate'] as const) {
      if (input[f] == null) throw validationError(f, 'required together with the other foreign-currency fields (original_currency, original_amount_minor, exchange_rate)', 'required');
    }
    const oc = requireCurrency(input.original_currency!, 'original_currency');
    const gc = currencyInfo(groupCurrency)!;
    const converted = convertAmount(BigInt(input.original_amount_minor!), input.exchange_rate!, oc.minor_unit_exponent, gc.minor_unit_exponent);
    if (converted === null) throw validationError('exchange_rate', 'must be a positive decimal string like "1.0845"', 'invalid_rate');
    if (input.amount_minor !== undefined && BigInt(input.amount_minor) !== converted) {
      throw validationError('amount_minor', `does not match original_amount_minor × exchange_rate = ${converted} (rounded half away from zero); omit amount_minor or send ${converted}`, 'amount_mismatch');
    }
    amount = converted;
    foreign = { originalCurrency: oc.code, originalAmountMinor: BigInt(input.original_amount_minor!), exchangeRate: input.exchange_rate! };
  } else {
    if (input.amount_minor === undefined) throw validationError('amount_minor', 'required (or give original_currency, original_amount_minor and exchange_rate)', 'required');
    amount = BigInt(input.amount_minor);
  }
  if (amount === 0n) throw validationError('amount_minor', 'must not be zero', 'zero');
  if (amount > BigInt(MAX_AMOUNT_MINOR) || amount < -BigInt(MAX_AMOUNT_MINOR)) throw validationError('amount_minor', `must be within ±${MAX_AMOUNT_MINOR}`, 'too_big');
  return { amountMinor: amount, foreign };
}

export function resolvePayers(members: Map<string, MemberRef>, amount: bigint, payers: z.infer<typeof payersInput> | undefined, callerId: string): ExpenseSpec['payers'] {
  if (!payers) return [{ agentId: callerId, paidMinor: amount }];
  const seen = new Set<string>();
  const out: ExpenseSpec['payers'] = [];
  payers.forEach((p, i) => {
    const m = memberAt(members, p.handle, `payers.${i}.handle`);
    if (seen.has(m.agentId)) throw validationError(`payers.${i}.handle`, `@${p.handle} is listed twice`, 'duplicate');
    seen.add(m.agentId);
    if (p.amount_minor === undefined && payers.length > 1) throw validationError(`payers.${i}.amount_minor`, 'required when there are several payers', 'required');
    out.push({ agentId: m.agentId, paidMinor: p.amount_minor === undefined ? amount : BigInt(p.amount_minor) });
  });
  const sum = out.reduce((s, p) => s + p.paidMinor, 0n);
  if (sum !== amount) throw validationError('payers', `payer amounts sum to ${sum} but the amount is ${amount}`, 'sum_mismatch');
  return out.filter((p) => p.paidMinor !== 0n);
}

export function resolveSplit(members: Map<string, MemberRef>, amount: bigint, split: z.input<typeof splitInput> | undefined): Pick<ExpenseSpec, 'method' | 'participants'> {
  const method: SplitMethod = split?.method ?? 'equal';
  const list = split?.participants;
  if (!list) {
    if (method !== 'equal') throw validationError('split.participants', `required for method ${method}`, 'required');
    return { method, participants: [...members.values()].map((m) => ({ agentId: m.agentId, value: '1' })) };
  }
  const seen = new Set<string>();
  const participants: ExpenseSpec['participants'] = [];
  let total = 0n;
  list.forEach((p, i) => {
    const base = `split.participants.${i}`;
    const m = memberAt(members, p.handle, `${base}.handle`);
    if (seen.has(m.agentId)) throw validationError(`${base}.handle`, `@${p.handle} is listed twice`, 'duplicate');
    seen.add(m.agentId);
    const extra = (['amount_minor', 'percent', 'shares'] as const).filter((f) => p[f] !== undefined && f !== ({ equal: '', exact: 'amount_minor', percent: 'percent', shares: 'shares' } as const)[method]);
    if (extra.length) throw validationError(`${base}.${extra[0]}`, `not used by method ${method}`, 'unexpected');
    if (method === 'equal') {
      participants.push({ agentId: m.agentId, value: '1' });
    } else if (method === 'exact') {
      if (p.amount_minor === undefined) throw validationError(`${base}.amount_minor`, 'required for method exact', 'required');
      total += BigInt(p.amount_minor);
      participants.push({ agentId: m.agentId, value: String(p.amount_minor) });
    } else {
      const raw = method === 'percent' ? p.percent : p.shares;
      if (raw === undefined) throw validationError(`${base}.${method}`, `required for method ${method}`, 'required');
      const v = parseScaled(raw);
      if (v === null) throw validationError(`${base}.${method}`, 'must be a non-negative decimal with at most 6 decimals', 'invalid');
      total += v;
      participants.push({ agentId: m.agentId, value: scaledToString(v) });
    }
  });
  if (method === 'exact' && total !== amount) throw validationError('split.participants', `exact amounts sum to ${total} but the amount is ${amount}`, 'sum_mismatch');
  if (method === 'percent' && total !== HUNDRED_PERCENT) throw validationError('split.participants', `percentages sum to ${scaledToString(total)}, not 100`, 'sum_mismatch');
  if (method === 'shares' && total === 0n) throw validationError('split.participants', 'shares must not all be zero', 'zero_shares');
  return { method, participants };
}

/** The share lines of an expense (rounding seeded by its id). Exact: both sides sum to the amount. */
export function computeShares(spec: ExpenseSpec, expenseId: string): Array<ShareLine & { splitValue: string | null }> {
  const parts = [...spec.participants].sort((a, b) => (a.agentId < b.agentId ? -1 : a.agentId > b.agentId ? 1 : 0));
  let owed: bigint[];
  if (spec.method === 'exact') owed = parts.map((p) => BigInt(p.value));
  else if (spec.method === 'equal') owed = allocate(spec.amountMinor, parts.map(() => 1n), expenseId);
  else owed = allocate(spec.amountMinor, parts.map((p) => parseScaled(p.value)!), expenseId);
  const lines = new Map<string, ShareLine & { splitValue: string | null }>();
  parts.forEach((p, i) => lines.set(p.agentId, { agentId: p.agentId, paidMinor: 0n, owedMinor: owed[i]!, splitValue: p.value }));
  for (const p of spec.payers) {
    const l = lines.get(p.agentId) ?? { agentId: p.agentId, paidMinor: 0n, owedMinor: 0n, splitValue: null };
    l.paidMinor += p.paidMinor;
    lines.set(p.agentId, l);
  }
  return [...lines.values()].sort((a, b) => (a.agentId < b.agentId ? -1 : 1));
}

/** Reconstructs the spec of a stored expense from its share rows. */
export function specFromRows(amountMinor: bigint, method: string, shares: Array<{ agentId: string; paidMinor: bigint; splitValue: string | null }>): ExpenseSpec {
  return {
    amountMinor,
    method: method as SplitMethod,
    payers: shares.filter((s) => s.paidMinor !== 0n).map((s) => ({ agentId: s.agentId, paidMinor: s.paidMinor })),
    participants: shares.filter((s) => s.splitValue !== null).map((s) => ({ agentId: s.agentId, value: s.splitValue! })),
  };
}

export function dateFromIso(d: string): Date {
  return new Date(`${d}T00:00:00.000Z`);
}
export function isoFromDate(d: Date): string {
  return d.toISOString().slice(0, 10);
}
export function todayUtc(now: Date): string {
  return now.toISOString().slice(0, 10);
}

/**
 * Inserts an expense with its shares, applies its balance effect and appends the activity.
 * The caller has locked the group. Returns the new id.
 */
export async function insertExpense(
  db: Db,
  a: {
    groupId: string;
    actorId: string;
    createdById: string;
    spec: ExpenseSpec;
    fields: ExpenseFields;
    date: string;
    now: Date;
    id?: string;
    recurrenceId?: string | null;
    occurrenceIndex?: number | null;
    importKey?: string | null;
    action?: string;
  },
): Promise<{ id: string; lines: Array<ShareLine & { splitValue: string | null }>; row: ExpenseRow }> {
  const id = a.id ?? randomUUID();
  const lines = computeShares(a.spec, id);
  const created = await db.expense.create({
    data: {
      id,
      groupId: a.groupId,
      description: a.fields.description,
      amountMinor: a.spec.amountMinor,
      date: dateFromIso(a.date),
      category: a.fields.category,
      notes: a.fields.notes,
      splitMethod: a.spec.method,
      originalCurrency: a.fields.originalCurrency,
      originalAmountMinor: a.fields.originalAmountMinor,
      exchangeRate: a.fields.exchangeRate,
      createdById: a.createdById,
      createdAt: a.now,
      updatedAt: a.now,
      recurrenceId: a.recurrenceId ?? null,
      occurrenceIndex: a.occurrenceIndex ?? null,
      importKey: a.importKey ?? null,
    },
  });
  await db.expenseShare.createMany({
    data: lines.map((l) => ({ expenseId: id, agentId: l.agentId, paidMinor: l.paidMinor, owedMinor: l.owedMinor, splitValue: l.splitValue })),
  });
  await applyDelta(db, a.groupId, new LedgerDelta().addLines(lines, 1n));
  await appendActivity(db, {
    groupId: a.groupId,
    actorId: a.actorId,
    action: a.action ?? 'expense.added',
    entityType: 'expense',
    entityId: id,
    after: snapshot(a.fields.description, a.spec.amountMinor, a.date, lines),
  });
  // The row as written, so callers can answer without reading it back (recurrence: the caller's).
  return { id, lines, row: { ...created, shares: lines, recurrence: null } };
}

/** Compact before/after form for the activity log. */
export function snapshot(description: string, amount: bigint, date: string, lines: ReadonlyArray<ShareLine>) {
  return {
    description,
    amount_minor: amount.toString(),
    date,
    shares: lines.map((l) => ({ agent_id: l.agentId, paid_minor: l.paidMinor.toString(), owed_minor: l.owedMinor.toString() })),
  };
}

// ───────────── projection ─────────────

export const EXPENSE_INCLUDE = { shares: true, recurrence: true } as const;

export type ExpenseRow = {
  id: string;
  groupId: string;
  description: string;
  amountMinor: bigint;
  date: Date;
  category: string | null;
  notes: string | null;
  splitMethod: string;
  originalCurrency: string | null;
  originalAmountMinor: bigint | null;
  exchangeRate: string | null;
  createdById: string;
  createdAt: Date;
  updatedAt: Date;
  deletedAt: Date | null;
  occurrenceIndex: number | null;
  shares: Array<{ agentId: string; paidMinor: bigint; owedMinor: bigint; splitValue: string | null }>;
  recurrence: {
    id: string;
    every: number;
    unit: string;
    startDate: Date;
    endDate: Date | null;
    maxCount: number | null;
    active: boolean;
    nextDate: Date;
  } | null;
};

type AgentRefRow = { id: string; handle: string; displayName: string };

export async function agentsById(db: Db, ids: Iterable<string>): Promise<Map<string, AgentRefRow>> {
  const list = [...new Set(ids)];
  if (!list.length) return new Map();
  const rows = await db.agent.findMany({ where: { id: { in: list } }, select: { id: true, handle: true, displayName: true } });
  return new Map(rows.map((r) => [r.id, r]));
}

export async function toExpenses(db: Db, rows: ExpenseRow[], currency: string, known?: ReadonlyMap<string, AgentRefRow>): Promise<ExpenseOut[]> {
  const ids = rows.flatMap((r) => [r.createdById, ...r.shares.map((s) => s.agentId)]);
  const agents = known && ids.every((id) => known.has(id)) ? known : await agentsById(db, ids);
  const ref = (id: string) => toAgentRef(agents.get(id) ?? { id, handle: 'unknown', displayName: 'unknown' });
  return rows.map((r) => ({
    expense_id: r.id,
    group_id: r.groupId,
    description: r.description,
    amount_minor: toNumber(r.amountMinor),
    amount: formatMinor(r.amountMinor, currency),
    currency,
    date: isoFromDate(r.date),
    category: r.category,
    notes: r.notes,
    split_method: r.splitMethod as SplitMethod,
    original_currency: r.originalCurrency,
    original_amount_minor: r.originalAmountMinor === null ? null : toNumber(r.originalAmountMinor),
    exchange_rate: r.exchangeRate,
    shares: [...r.shares]
      .sort((a, b) => (a.agentId < b.agentId ? -1 : 1))
      .map((s) => {
        const a = ref(s.agentId);
        return {
          ...a,
          paid_minor: toNumber(s.paidMinor),
          owed_minor: toNumber(s.owedMinor),
          net_minor: toNumber(s.paidMinor - s.owedMinor),
          split_value: s.splitValue,
        };
      }),
    created_by: ref(r.createdById),
    created_at: r.createdAt.toISOString(),
    updated_at: r.updatedAt.toISOString(),
    deleted: r.deletedAt !== null,
    deleted_at: r.deletedAt?.toISOString() ?? null,
    recurrence: r.recurrence
      ? {
          recurrence_id: r.recurrence.id,
          every: r.recurrence.every,
          unit: r.recurrence.unit as RepeatUnit,
          start_date: isoFromDate(r.recurrence.startDate),
          until: r.recurrence.endDate ? isoFromDate(r.recurrence.endDate) : null,
          count: r.recurrence.maxCount,
          active: r.recurrence.active,
          next_date: r.recurrence.active ? isoFromDate(r.recurrence.nextDate) : null,
        }
      : null,
    occurrence_index: r.occurrenceIndex,
  }));
}

/** Loads an expense of a group the caller is a member of (NOT_FOUND otherwise; membership checked by the caller). */
export async function findExpense(db: Db, expenseId: string) {
  const e = await db.expense.findUnique({ where: { id: expenseId }, include: EXPENSE_INCLUDE });
  if (!e) throw new ToolError('NOT_FOUND', `No expense with expense_id ${expenseId}.`, { suggestedAction: 'list_expenses shows the expenses of a group.' });
  return e;
}

export const expenseTextFields = {
  description: text(1, 200, 'description').describe('What it was for, 1-200 chars.'),
  category: text(0, 50, 'category').optional().describe('Free category label, e.g. "food", 0-50 chars.'),
  notes: longText(0, 1000, 'notes').optional().describe('Notes, 0-1000 chars (newlines allowed).'),
};

/**
 * delete_expense (deleted: true) and restore_expense (deleted: false): locks the group, checks
 * archive and edit rights, and — unless the expense is already in that state — flips the
 * soft-delete flag, removes (or re-applies) its balance effect, logs the activity and notifies
 * everyone it involves. Returns the group and the expense as it now is.
 */
export async function setExpenseDeleted(ctx: Pick<ToolContext, 'db' | 'services' | 'auth'>, expenseId: string, deleted: boolean) {
  const { db } = ctx;
  const agentId = ctx.auth!.agentId;
  const first = await findExpense(db, expenseId);
  const { group, membership } = await requireMembership(db, first.groupId, agentId, { lock: true });
  const e = await findExpense(db, expenseId);
  assertNotArchived(group);
  await assertLedgerAccepted(db, group);
  assertCanEdit(group, membership, e);
  if ((e.deletedAt !== null) !== deleted) {
    await applyDelta(db, group.id, new LedgerDelta().addLines(e.shares, deleted ? -1n : 1n));
    const now = ctx.services.now();
    await db.expense.update({ where: { id: e.id }, data: { deletedAt: deleted ? now : null, updatedAt: now } });
    const live = snapshot(e.description, e.amountMinor, isoFromDate(e.date), e.shares);
    await appendActivity(db, {
      groupId: group.id,
      actorId: agentId,
      action: deleted ? 'expense.deleted' : 'expense.restored',
      entityType: 'expense',
      entityId: e.id,
      before: deleted ? live : { deleted: true },
      after: deleted ? { deleted: true } : live,
    });
    await notifyAll(db, e.shares.map((s) => s.agentId).sort(), agentId, {
      kind: 'expense_changed',
      text: `@${ctx.auth!.handle} ${deleted ? 'deleted' : 'restored'} "${e.description}" in "${group.name}"`,
      entityType: 'expense',
      entityId: e.id,
      groupId: group.id,
    });
  }
  const [expense] = await toExpenses(db, [await findExpense(db, e.id)], group.currency);
  return { group, expense: expense! };
}
