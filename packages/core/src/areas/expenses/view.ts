/**
 * The projection of stored expenses to their wire form (`expenseSchema`), with the agents they
 * name loaded in one query.
 */
import type { Db } from '../../kernel/context.ts';
import { formatMinor, toNumber } from '../../kernel/money.ts';
import { toAgentRef } from '../../access/agents.ts';
import type { ExpenseOut, RepeatUnit, StoredSplitMethod } from './wire.ts';
import { isoFromDate } from './spec.ts';
import { itemsOut, storedItemAgents, type StoredItems } from './items.ts';

export const EXPENSE_INCLUDE = { shares: true, recurrence: true } as const;

export type ExpenseRow = {
  id: string;
  groupId: string;
  description: string;
  amountMinor: bigint;
  date: Date;
  category: string | null;
  categoryId: string;
  notes: string | null;
  splitMethod: string;
  /** The stored itemized bill (jsonb), null when not itemized. */
  items: unknown;
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

export async function toExpenses(
  db: Db,
  rows: ExpenseRow[],
  currency: string,
  known?: ReadonlyMap<string, AgentRefRow>,
): Promise<ExpenseOut[]> {
  const ids = rows.flatMap((r) => [r.createdById, ...r.shares.map((s) => s.agentId), ...storedItemAgents(r.items as StoredItems | null)]);
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
    category_id: r.categoryId,
    notes: r.notes,
    split_method: r.splitMethod as StoredSplitMethod,
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
    ...itemsOut(r.items as StoredItems | null, (id) => ref(id).handle),
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
