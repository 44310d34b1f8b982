/**
 * Expenses in the database: the active members of a group, inserting an expense with its shares
 * and balance effect, loading one, and soft-deleting or restoring it. Every write runs in the
 * caller's transaction with its activity and inbox items.
 */
import { randomUUID } from 'node:crypto';
import type { Db, Services } from '../../kernel/context.ts';
import type { Actor } from '../../kernel/actor.ts';
import { ToolError } from '../../kernel/errors.ts';
import { appendActivity } from '../../kernel/activity.ts';
import { requireMembership, assertNotArchived, assertLedgerAccepted } from '../../access/groups.ts';
import { notifyAll, resolveAction } from '../../kernel/notify.ts';
import { appendEvent, activeMemberIds } from '../../kernel/events.ts';
import { assertCanEdit } from './edit-rights.ts';
import { LedgerDelta, applyDelta, assertBalancesMayChange } from '../ledger/effects.ts';
import { WriteBatch, applyBatchIn } from '../../kernel/write-batch.ts';
import type { ShareLine } from '../ledger/split.ts';
import { computeShares, dateFromIso, isoFromDate, snapshot, type ExpenseSpec, type ExpenseFields, type MemberRef } from './spec.ts';
import { EXPENSE_INCLUDE, toExpenses, type ExpenseRow } from './view.ts';
import { toStoredItems } from './items.ts';

/** Active members of a group keyed by handle. */
export async function activeMembersByHandle(db: Db, groupId: string): Promise<Map<string, MemberRef>> {
  const rows = await db.$queryRaw<Array<{ id: string; handle: string; display_name: string }>>`
    SELECT a.id, a.handle, a.display_name FROM memberships m JOIN agents a ON a.id = m.agent_id
    WHERE m.group_id = ${groupId}::uuid AND m.left_at IS NULL ORDER BY m.joined_at`;
  return new Map(rows.map((r) => [r.handle, { agentId: r.id, handle: r.handle, displayName: r.display_name }]));
}

/** A new expense as stored: who adds it, its resolved spec and fields, its date (YYYY-MM-DD) and time of creation. */
export interface ExpenseInsert {
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
  /** Appends expense.created for these agents (the group's active members) with the group's currency. */
  event?: { audience: readonly string[]; currency: string };
}

/**
 * Stages an expense in `batch`: the expense row, its share lines (rounding seeded by the id), its
 * balance and pair-debt effect and the activity entry. Writes nothing itself. Returns the id, the
 * lines, the row as it will be stored (so callers answer without a read-back; recurrence: the
 * caller's) and the ledger delta (for the MEMBER_LEFT check of callers holding the group lock).
 */
export function stageExpense(batch: WriteBatch, a: ExpenseInsert) {
  const id = a.id ?? randomUUID();
  const lines = computeShares(a.spec, id);
  batch.forGroup(a.groupId);
  const row: ExpenseRow = {
    id,
    groupId: a.groupId,
    description: a.fields.description,
    amountMinor: a.spec.amountMinor,
    date: dateFromIso(a.date),
    category: a.fields.category,
    categoryId: a.fields.categoryId,
    notes: a.fields.notes,
    splitMethod: a.spec.method,
    items: a.spec.itemized ? toStoredItems(a.spec.itemized, id) : null,
    originalCurrency: a.fields.originalCurrency,
    originalAmountMinor: a.fields.originalAmountMinor,
    exchangeRate: a.fields.exchangeRate,
    createdById: a.createdById,
    createdAt: a.now,
    updatedAt: a.now,
    deletedAt: null,
    occurrenceIndex: a.occurrenceIndex ?? null,
    shares: lines,
    recurrence: null,
  };
  batch.insert('expenses', {
    id,
    group_id: a.groupId,
    description: row.description,
    amount_minor: row.amountMinor.toString(),
    date: a.date,
    category: row.category,
    category_id: row.categoryId,
    items: row.items,
    notes: row.notes,
    split_method: row.splitMethod,
    original_currency: row.originalCurrency,
    original_amount_minor: row.originalAmountMinor?.toString() ?? null,
    exchange_rate: row.exchangeRate,
    created_by: a.createdById,
    created_at: a.now.toISOString(),
    updated_at: a.now.toISOString(),
    recurrence_id: a.recurrenceId ?? null,
    occurrence_index: row.occurrenceIndex,
    import_key: a.importKey ?? null,
  });
  for (const l of lines)
    batch.insert('expense_shares', {
      expense_id: id,
      agent_id: l.agentId,
      paid_minor: l.paidMinor.toString(),
      owed_minor: l.owedMinor.toString(),
      split_value: l.splitValue,
    });
  const delta = new LedgerDelta().addLines(lines, 1n);
  batch.ledger(delta);
  batch.activity({
    groupId: a.groupId,
    actorId: a.actorId,
    action: a.action ?? 'expense.added',
    entityType: 'expense',
    entityId: id,
    after: snapshot(a.fields.description, a.spec.amountMinor, a.date, lines),
  });
  if (a.event)
    batch.event({
      type: 'expense.created',
      groupId: a.groupId,
      actorId: a.actorId,
      recipients: a.event.audience,
      data: {
        expense_id: id,
        description: a.fields.description,
        amount_minor: a.spec.amountMinor.toString(),
        currency: a.event.currency,
        date: a.date,
        ...(a.recurrenceId ? { recurrence_id: a.recurrenceId, occurrence_index: row.occurrenceIndex } : {}),
      },
      link: { entityType: 'expense', entityId: id },
    });
  return { id, lines, row, delta };
}

/**
 * Inserts an expense with its shares, applies its balance effect and appends the activity, in
 * the caller's transaction (which holds the group lock): two statements — the MEMBER_LEFT check,
 * then the staged rows through kitty_apply_batch. Returns the new id, the lines and the row.
 */
export async function insertExpense(
  db: Db,
  a: ExpenseInsert,
): Promise<{ id: string; lines: Array<ShareLine & { splitValue: string | null }>; row: ExpenseRow }> {
  const batch = new WriteBatch();
  const { id, lines, row, delta } = stageExpense(batch, a);
  await assertBalancesMayChange(db, a.groupId, delta);
  await applyBatchIn(db, batch);
  return { id, lines, row };
}

/** Loads an expense of a group the caller is a member of (NOT_FOUND otherwise; membership checked by the caller). */
export async function findExpense(db: Db, expenseId: string) {
  const e = await db.expense.findUnique({ where: { id: expenseId }, include: EXPENSE_INCLUDE });
  if (!e)
    throw new ToolError('NOT_FOUND', `No expense with expense_id ${expenseId}.`, {
      suggestedAction: 'list_expenses shows the expenses of a group.',
    });
  return e;
}

/**
 * delete_expense (deleted: true) and restore_expense (deleted: false): locks the group, checks
 * archive and edit rights, and — unless the expense is already in that state — flips the
 * soft-delete flag, removes (or re-applies) its balance effect, logs the activity and notifies
 * everyone it involves. Returns the group and the expense as it now is.
 */
export async function setExpenseDeleted(
  db: Db,
  actor: Pick<Actor, 'agentId' | 'handle'>,
  input: { expense_id: string; deleted: boolean },
  services: Pick<Services, 'now'>,
) {
  const { expense_id: expenseId, deleted } = input;
  const agentId = actor.agentId;
  const first = await findExpense(db, expenseId);
  const { group, membership } = await requireMembership(db, first.groupId, agentId, { lock: true });
  const e = await findExpense(db, expenseId);
  assertNotArchived(group);
  await assertLedgerAccepted(db, group);
  assertCanEdit(group, membership, e);
  if ((e.deletedAt !== null) !== deleted) {
    await applyDelta(db, group.id, new LedgerDelta().addLines(e.shares, deleted ? -1n : 1n));
    const now = services.now();
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
    // The unread news about it is moot once it is deleted: those items say so and count as read (before the new item).
    if (deleted)
      await resolveAction(db, { entityType: 'expense', entityId: e.id, resolution: `deleted by @${actor.handle}`, unreadToo: true });
    await notifyAll(db, e.shares.map((s) => s.agentId).sort(), agentId, {
      kind: 'expense_changed',
      text: `@${actor.handle} ${deleted ? 'deleted' : 'restored'} "${e.description}" in "${group.name}"`,
      entityType: 'expense',
      entityId: e.id,
      groupId: group.id,
    });
    await appendEvent(db, {
      type: deleted ? 'expense.deleted' : 'expense.restored',
      groupId: group.id,
      actorId: agentId,
      recipients: await activeMemberIds(db, group.id),
      data: { expense_id: e.id, amount_minor: e.amountMinor.toString(), currency: group.currency },
      link: { entityType: 'expense', entityId: e.id },
    });
  }
  const [expense] = await toExpenses(db, [await findExpense(db, e.id)], group.currency);
  return { group, expense: expense! };
}
