/**
 * Adding an expense (add_expense): resolves amount, payers and split against the group's active
 * members, optionally starts a repeating series, inserts the expense with its shares and balance
 * effect, and notifies everyone involved, in the caller's transaction.
 */
import { randomUUID } from 'node:crypto';
import type { z } from 'zod';
import type { Db, Services } from '../../kernel/context.ts';
import type { Actor } from '../../kernel/actor.ts';
import { validationError } from '../../kernel/errors.ts';
import { assertNotArchived, assertLedgerAccepted } from '../../access/groups.ts';
import { readGroupIdentities } from '../../access/group-reads.ts';
import { formatMinor } from '../../kernel/money.ts';
import type { WriteBatch } from '../../kernel/write-batch.ts';
import type { payersInput, splitInput, repeatInput } from './wire.ts';
import { resolveAmount, resolvePayers, resolveSplit, todayUtc, dateFromIso, type ExpenseFields, type ExpenseSpec } from './spec.ts';
import { resolveItems, assertNoForeign, type ItemsInput } from './items.ts';
import { itemizedTotal } from './itemized.ts';
import { resolveCategoryId } from '../reference/categories.ts';
import { toExpenses, type ExpenseRow } from './view.ts';
import { stageExpense } from './store.ts';
import { occurrenceDate, occurrenceExists, toTemplate, type RecurrenceRule } from './recurrence.ts';

/**
 * A new expense as validated on the wire. amount_minor is in the group currency's minor units
 * (negative = refund), required unless the three foreign fields are given (original_amount_minor in
 * original_currency's minor units, exchange_rate a decimal string of group units per original unit).
 * date is YYYY-MM-DD (default today, UTC). payers default to the caller paying everything; split
 * defaults to every active member equally; repeat starts a series from date.
 */
export interface NewExpense {
  group_id: string;
  description: string;
  category?: string | undefined;
  category_id?: string | undefined;
  notes?: string | undefined;
  amount_minor?: number | undefined;
  date?: string | undefined;
  payers?: z.infer<typeof payersInput> | undefined;
  split?: z.input<typeof splitInput> | undefined;
  original_currency?: string | undefined;
  original_amount_minor?: number | undefined;
  exchange_rate?: string | undefined;
  repeat?: z.infer<typeof repeatInput> | undefined;
  items?: ItemsInput['items'] | undefined;
  tax_minor?: number | undefined;
  tip_minor?: number | undefined;
}

/**
 * Adds `req` to group `req.group_id` on behalf of `actor`: decides from one read of
 * the group and its members (from `services.groupReads` when it holds them, except for a preview:
 * `opts.dryRun`) and stages every row in `batch` (written in one round trip by the write middleware,
 * guarded by the version of the group it decided on: access/group-reads.ts). With repeat, a recurrence row is staged
 * first (the first copy is index 1; this expense is index 0). Returns the group and the expense
 * (wire shape, amounts in minor units), answered from what will be written.
 * Errors: NOT_FOUND (group), FORBIDDEN (not a member), GROUP_ARCHIVED, DIRECT_LEDGER_NOT_ACCEPTED,
 * VALIDATION_ERROR naming the field (amount/foreign fields, payers, split, members who are not
 * active, repeat.until before date).
 */
export async function addExpense(
  db: Db,
  actor: Pick<Actor, 'agentId' | 'handle'>,
  batch: WriteBatch,
  req: NewExpense,
  services: Pick<Services, 'pool' | 'now' | 'groupReads'>,
  opts: { dryRun?: boolean } = {},
) {
  const agentId = actor.agentId;
  const now = services.now();
  // A preview reads afresh: it is not sent, so no guard would catch a cached read that is out of date.
  const cache = opts.dryRun ? undefined : services.groupReads;
  const { group, members, refs, readVersion } = await readGroupIdentities(services.pool, req.group_id, agentId, batch, cache);
  assertNotArchived(group);
  await assertLedgerAccepted(db, group);
  let spec: ExpenseSpec;
  let foreign: Pick<ExpenseFields, 'originalCurrency' | 'originalAmountMinor' | 'exchangeRate'>;
  if (req.items) {
    assertNoForeign(req);
    const itemized = resolveItems(
      members,
      { items: req.items, tax_minor: req.tax_minor, tip_minor: req.tip_minor },
      req.split,
      req.amount_minor,
    );
    const amountMinor = itemizedTotal(itemized);
    const payers = resolvePayers(members, amountMinor, req.payers, agentId);
    spec = { amountMinor, payers, method: 'itemized', participants: [], itemized };
    foreign = { originalCurrency: null, originalAmountMinor: null, exchangeRate: null };
  } else {
    for (const f of ['tax_minor', 'tip_minor'] as const)
      if (req[f] !== undefined) throw validationError(f, 'only with items', 'requires_items');
    const r = resolveAmount(group.currency, req);
    foreign = r.foreign;
    const payers = resolvePayers(members, r.amountMinor, req.payers, agentId);
    spec = { amountMinor: r.amountMinor, payers, ...resolveSplit(members, r.amountMinor, req.split) };
  }
  const amountMinor = spec.amountMinor;
  const fields: ExpenseFields = {
    description: req.description,
    category: req.category || null,
    categoryId: resolveCategoryId(req.category_id, req.category),
    notes: req.notes || null,
    ...foreign,
  };
  const date = req.date ?? todayUtc(now);
  batch.guard(group.id, { lock: 'share', read_version: readVersion });

  let recurrenceId: string | null = null;
  let recurrence: ExpenseRow['recurrence'] = null;
  if (req.repeat) {
    const r = req.repeat;
    if (r.until && r.until < date) throw validationError('repeat.until', 'must not be before date', 'before_start');
    const rule: RecurrenceRule = { startDate: date, unit: r.unit, every: r.every ?? 1, until: r.until ?? null, count: r.count ?? null };
    recurrenceId = randomUUID();
    const nextDate = occurrenceDate(date, rule.unit, rule.every, 1);
    recurrence = {
      id: recurrenceId,
      every: rule.every,
      unit: rule.unit,
      startDate: dateFromIso(date),
      endDate: rule.until ? dateFromIso(rule.until) : null,
      maxCount: rule.count,
      active: occurrenceExists(rule, 1),
      nextDate: dateFromIso(nextDate),
    };
    batch.insert('recurrences', {
      id: recurrenceId,
      group_id: group.id,
      template: toTemplate(spec, fields),
      unit: rule.unit,
      every: rule.every,
      start_date: date,
      end_date: rule.until,
      max_count: rule.count,
      next_index: 1,
      next_date: nextDate,
      active: recurrence.active,
      created_by: agentId,
      created_at: now.toISOString(),
    });
  }
  const { id, lines, row } = stageExpense(batch, {
    id: batch.entityId,
    event: { audience: [...members.values()].map((m) => m.agentId), currency: group.currency },
    groupId: group.id,
    actorId: agentId,
    createdById: agentId,
    spec,
    fields,
    date,
    now,
    recurrenceId,
    occurrenceIndex: recurrenceId ? 0 : null,
  });
  batch.notifyAll(
    lines.map((l) => l.agentId),
    agentId,
    {
      kind: 'expense_added',
      text: `@${actor.handle} added "${req.description}" (${formatMinor(amountMinor, group.currency)}) in "${group.name}"`,
      entityType: 'expense',
      entityId: id,
      groupId: group.id,
    },
  );
  // Answer from what will be written (no read-back): members are known, the recurrence is staged.
  const [expense] = await toExpenses(db, [{ ...row, recurrence }], group.currency, refs);
  return { group, expense: expense! };
}
