/**
 * Expenses in the database: the active members of a group, inserting an expense with its shares
 * and balance effect, loading one, and soft-deleting or restoring it. Every write runs in the
 * caller's transaction with its activity and inbox items.
 */
import { randomUUID } from 'node:crypto';
import type { Db, ToolContext } from '../../context.ts';
import { ToolError } from '../../errors.ts';
import { appendActivity } from '../activity.ts';
import { requireMembership, assertNotArchived, assertLedgerAccepted } from '../groups.ts';
import { notifyAll } from '../inbox.ts';
import { assertCanEdit } from './access.ts';
import { LedgerDelta, applyDelta } from './effects.ts';
import type { ShareLine } from './split.ts';
import { computeShares, dateFromIso, isoFromDate, snapshot, type ExpenseSpec, type ExpenseFields, type MemberRef } from './expense-spec.ts';
import { EXPENSE_INCLUDE, toExpenses, type ExpenseRow } from './expense-view.ts';

/** Active members of a group keyed by handle. */
export async function activeMembersByHandle(db: Db, groupId: string): Promise<Map<string, MemberRef>> {
  const rows = await db.$queryRaw<Array<{ id: string; handle: string; display_name: string }>>`
    SELECT a.id, a.handle, a.display_name FROM memberships m JOIN agents a ON a.id = m.agent_id
    WHERE m.group_id = ${groupId}::uuid AND m.left_at IS NULL ORDER BY m.joined_at`;
  return new Map(rows.map((r) => [r.handle, { agentId: r.id, handle: r.handle, displayName: r.display_name }]));
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
    data: lines.map((l) => ({
      expenseId: id,
      agentId: l.agentId,
      paidMinor: l.paidMinor,
      owedMinor: l.owedMinor,
      splitValue: l.splitValue,
    })),
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
