/**
 * Changing an expense (update_expense): only the fields given change; the old balance effect is
 * reversed and the new one applied, with activity and inbox items, in the caller's transaction.
 */
import type { z } from 'zod';
import type { Db } from '../../kernel/context.ts';
import type { Actor } from '../../kernel/actor.ts';
import { ToolError, validationError } from '../../kernel/errors.ts';
import { appendActivity } from '../../kernel/activity.ts';
import { appendEvent, activeMemberIds } from '../../kernel/events.ts';
import { requireMembership, assertNotArchived, assertLedgerAccepted } from '../../access/groups.ts';
import { notifyAll } from '../../kernel/notify.ts';
import { assertCanEdit } from './edit-rights.ts';
import { LedgerDelta, applyDelta } from '../ledger/effects.ts';
import type { payersInput, splitInput } from './wire.ts';
import {
  resolveAmount,
  resolvePayers,
  resolveSplit,
  computeShares,
  specFromRows,
  snapshot,
  isoFromDate,
  dateFromIso,
  type ExpenseSpec,
  type MemberRef,
} from './spec.ts';
import { toExpenses } from './view.ts';
import { Prisma } from '@kitty/db';
import {
  resolveItems,
  checkItemized,
  assertNoForeign,
  toStoredItems,
  fromStoredItems,
  type ItemsInput,
  type StoredItems,
} from './items.ts';
import { itemizedTotal, idealOf, sortedParts, type Itemization } from './itemized.ts';
import { categoryFromLabel } from '../reference/categories.ts';
import { activeMembersByHandle, findExpense } from './store.ts';

/**
 * The fields update_expense may change, as validated on the wire. Absent (undefined) = unchanged;
 * null on category/notes clears them; null on all three foreign fields drops the conversion;
 * `repeat: null` stops the repeating series. Amounts are integer minor units (amount_minor in the
 * group currency, original_amount_minor in original_currency); exchange_rate is a decimal string
 * (group-currency units per original unit); date is YYYY-MM-DD.
 */
export interface ExpensePatch {
  description?: string | undefined;
  category?: string | null | undefined;
  category_id?: string | undefined;
  notes?: string | null | undefined;
  amount_minor?: number | undefined;
  date?: string | undefined;
  payers?: z.infer<typeof payersInput> | undefined;
  split?: z.input<typeof splitInput> | undefined;
  original_currency?: string | null | undefined;
  original_amount_minor?: number | null | undefined;
  exchange_rate?: string | null | undefined;
  repeat?: null | undefined;
  items?: ItemsInput['items'] | null | undefined;
  tax_minor?: number | undefined;
  tip_minor?: number | undefined;
}

/** The expense's own fields of a patch, in the order `expense.updated` lists them (not the call's idempotency_key or dry_run). */
const PATCH_FIELDS = [
  'description',
  'category',
  'category_id',
  'notes',
  'amount_minor',
  'date',
  'payers',
  'split',
  'original_currency',
  'original_amount_minor',
  'exchange_rate',
  'repeat',
  'items',
  'tax_minor',
  'tip_minor',
] as const satisfies ReadonlyArray<keyof ExpensePatch>;

/**
 * Applies `patch` to expense `expenseId` on behalf of `actor` at `now`: locks the group,
 * re-reads the expense under the lock, checks archive state, direct-ledger consent and edit rights,
 * resolves the new amount, payers and split (when the amount changes without payers, a single payer
 * pays the new amount; without split the same method and participants are re-applied), replaces the
 * shares and moves balances by (new − old), stops the series on `repeat: null`, logs
 * `expense.updated` and notifies everyone involved before or after.
 * `patch` keys other than the fields above (e.g. expense_id, idempotency_key) are ignored.
 * Returns the group and the expense as it now is (wire shape, amounts in minor units).
 * Errors: NOT_FOUND (no such expense), FORBIDDEN (not a member / edits restricted), GROUP_ARCHIVED,
 * DIRECT_LEDGER_NOT_ACCEPTED, EXPENSE_DELETED, MEMBER_LEFT (balance of someone who left would
 * change), VALIDATION_ERROR naming the field (nothing to change; payers or an exact split required
 * after an amount change; invalid amounts, members, splits).
 */
export async function updateExpense(db: Db, actor: Pick<Actor, 'agentId' | 'handle'>, expenseId: string, patch: ExpensePatch, now: Date) {
  const agentId = actor.agentId;
  const first = await findExpense(db, expenseId);
  const { group, membership } = await requireMembership(db, first.groupId, agentId, { lock: true });
  const e = await findExpense(db, expenseId); // re-read under the group lock
  assertNotArchived(group);
  await assertLedgerAccepted(db, group);
  if (e.deletedAt) throw new ToolError('EXPENSE_DELETED', 'This expense is deleted.', { details: { expense_id: e.id } });
  assertCanEdit(group, membership, e);
  const changes = Object.keys(patch).filter((k) => k !== 'expense_id' && k !== 'idempotency_key');
  if (!changes.length) throw validationError('(root)', 'give at least one field to change', 'nothing_to_change');

  const members = await activeMembersByHandle(db, group.id);
  const stored = fromStoredItems(e.items as StoredItems | null);
  const { spec, foreign } =
    patch.items || (stored && patch.items !== null)
      ? itemizedSpec(e, stored, members, patch, agentId)
      : plainSpec(group.currency, e, members, patch, agentId);
  const lines = computeShares(spec, e.id);
  await applyDelta(db, group.id, new LedgerDelta().addLines(e.shares, -1n).addLines(lines, 1n));

  const date = patch.date ?? isoFromDate(e.date);
  await db.expense.update({
    where: { id: e.id },
    data: {
      description: patch.description ?? e.description,
      category: patch.category !== undefined ? patch.category || null : e.category,
      categoryId: patch.category_id ?? categoryFromLabel(patch.category) ?? e.categoryId,
      items: spec.itemized ? (toStoredItems(spec.itemized, e.id) as object) : Prisma.DbNull,
      notes: patch.notes !== undefined ? patch.notes || null : e.notes,
      amountMinor: spec.amountMinor,
      date: dateFromIso(date),
      splitMethod: spec.method,
      ...foreign,
      updatedAt: now,
    },
  });
  await db.expenseShare.deleteMany({ where: { expenseId: e.id } });
  await db.expenseShare.createMany({
    data: lines.map((l) => ({
      expenseId: e.id,
      agentId: l.agentId,
      paidMinor: l.paidMinor,
      owedMinor: l.owedMinor,
      splitValue: l.splitValue,
    })),
  });
  if (patch.repeat === null && e.recurrenceId) {
    await db.recurrence.update({ where: { id: e.recurrenceId }, data: { active: false } });
    await appendActivity(db, {
      groupId: group.id,
      actorId: agentId,
      action: 'recurrence.stopped',
      entityType: 'expense',
      entityId: e.id,
      after: { recurrence_id: e.recurrenceId },
    });
  }
  await appendActivity(db, {
    groupId: group.id,
    actorId: agentId,
    action: 'expense.updated',
    entityType: 'expense',
    entityId: e.id,
    before: snapshot(e.description, e.amountMinor, isoFromDate(e.date), e.shares),
    after: snapshot(patch.description ?? e.description, spec.amountMinor, date, lines),
  });
  const involved = [...new Set([...e.shares.map((s) => s.agentId), ...lines.map((l) => l.agentId)])].sort();
  await notifyAll(db, involved, agentId, {
    kind: 'expense_changed',
    text: `@${actor.handle} changed "${patch.description ?? e.description}" in "${group.name}"`,
    entityType: 'expense',
    entityId: e.id,
    groupId: group.id,
  });
  await appendEvent(db, {
    type: 'expense.updated',
    groupId: group.id,
    actorId: agentId,
    recipients: await activeMemberIds(db, group.id),
    data: {
      expense_id: e.id,
      changed: PATCH_FIELDS.filter((k) => patch[k] !== undefined),
      amount_minor: spec.amountMinor.toString(),
      currency: group.currency,
    },
    link: { entityType: 'expense', entityId: e.id },
  });
  const [expense] = await toExpenses(db, [await findExpense(db, e.id)], group.currency);
  return { group, expense: expense! };
}

type StoredExpense = Awaited<ReturnType<typeof findExpense>>;

/** The new spec of an expense that is not (or no longer) itemized. */
function plainSpec(currency: string, e: StoredExpense, members: Map<string, MemberRef>, patch: ExpensePatch, agentId: string) {
  for (const f of ['tax_minor', 'tip_minor'] as const)
    if (patch[f] !== undefined) throw validationError(f, 'only with items', 'requires_items');
  const old = specFromRows(e.amountMinor, e.splitMethod, e.shares);
  const foreignTouched =
    patch.original_currency !== undefined || patch.original_amount_minor !== undefined || patch.exchange_rate !== undefined;
  let amount = e.amountMinor;
  let foreign = { originalCurrency: e.originalCurrency, originalAmountMinor: e.originalAmountMinor, exchangeRate: e.exchangeRate };
  if (patch.amount_minor !== undefined || foreignTouched) {
    const merged = {
      amount_minor: patch.amount_minor,
      original_currency: patch.original_currency !== undefined ? patch.original_currency : e.originalCurrency,
      original_amount_minor:
        patch.original_amount_minor !== undefined
          ? patch.original_amount_minor
          : e.originalAmountMinor === null
            ? null
            : Number(e.originalAmountMinor),
      exchange_rate: patch.exchange_rate !== undefined ? patch.exchange_rate : e.exchangeRate,
    };
    if (
      merged.original_currency == null &&
      merged.original_amount_minor == null &&
      merged.exchange_rate == null &&
      merged.amount_minor === undefined
    ) {
      merged.amount_minor = Number(e.amountMinor);
    }
    const r = resolveAmount(currency, merged);
    amount = r.amountMinor;
    foreign = r.foreign;
  }
  const amountChanged = amount !== e.amountMinor;

  let payers: ExpenseSpec['payers'];
  if (patch.payers) payers = resolvePayers(members, amount, patch.payers, agentId);
  else if (!amountChanged) payers = old.payers;
  else if (old.payers.length === 1) payers = [{ agentId: old.payers[0]!.agentId, paidMinor: amount }];
  else throw validationError('payers', 'the amount changed and there are several payers: give payers with their new amounts', 'required');

  let split: Pick<ExpenseSpec, 'method' | 'participants'>;
  if (patch.split) split = resolveSplit(members, amount, patch.split);
  else if (amountChanged && old.method === 'exact')
    throw validationError('split', 'the amount changed and the split is exact: give the new exact split', 'required');
  else if (old.method === 'itemized') split = resolveSplit(members, amount, undefined);
  else if (
    amountChanged &&
    old.method === 'adjustment' &&
    idealOf(amount, 'adjustment', sortedParts(old.participants)).nums.some((v) => (amount > 0n ? v < 0n : v > 0n))
  )
    throw validationError('split', 'the adjustments do not fit the new amount: give a new split', 'adjustment_too_big');
  else split = { method: old.method, participants: old.participants };

  return { spec: { amountMinor: amount, payers, ...split } as ExpenseSpec, foreign };
}

/**
 * The new spec of an itemized expense: new items (with tax and tip given, else the stored ones), or
 * the stored items with new tax or tip. A changed total with several payers needs payers.
 */
function itemizedSpec(e: StoredExpense, stored: Itemization | null, members: Map<string, MemberRef>, patch: ExpensePatch, agentId: string) {
  assertNoForeign(patch);
  const taxMinor = patch.tax_minor ?? Number(stored?.taxMinor ?? 0n);
  const tipMinor = patch.tip_minor ?? Number(stored?.tipMinor ?? 0n);
  let itemized: Itemization;
  if (patch.items)
    itemized = resolveItems(members, { items: patch.items, tax_minor: taxMinor, tip_minor: tipMinor }, patch.split, patch.amount_minor);
  else if (patch.split)
    throw validationError('split', 'this expense is itemized: give items with their splits, or items: null to drop them', 'itemized');
  else itemized = checkItemized({ ...stored!, taxMinor: BigInt(taxMinor), tipMinor: BigInt(tipMinor) }, patch.amount_minor);
  const amount = itemizedTotal(itemized);
  const old = specFromRows(e.amountMinor, e.splitMethod, e.shares);
  let payers: ExpenseSpec['payers'];
  if (patch.payers) payers = resolvePayers(members, amount, patch.payers, agentId);
  else if (amount === e.amountMinor) payers = old.payers;
  else if (old.payers.length === 1) payers = [{ agentId: old.payers[0]!.agentId, paidMinor: amount }];
  else throw validationError('payers', 'the amount changed and there are several payers: give payers with their new amounts', 'required');
  const spec: ExpenseSpec = { amountMinor: amount, payers, method: 'itemized', participants: [], itemized };
  return { spec, foreign: { originalCurrency: null, originalAmountMinor: null, exchangeRate: null } };
}
