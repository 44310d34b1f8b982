/**
 * Repeating expenses (issue 3): the occurrence calendar and the scheduler.
 *
 * Occurrence 0 is the expense created by add_expense; occurrence k falls on
 * start + k × every units (UTC calendar dates; months and years keep the start's day of the
 * month, clamped to the month's last day — computed from the start, so Jan 31 → Feb 28 → Mar 31).
 *
 * `runRecurrences(services, now)` creates the occurrences whose date is ≤ today (UTC), so it
 * catches up after downtime — at most MAX_OCCURRENCES_PER_RUN per series per call, and a series
 * starts at most MAX_REPEAT_START_AGE_DAYS ago, so no single call can flood a ledger. Exactly once, even with several instances running it at the same
 * time: each recurrence is processed in one transaction that locks the group row (the same lock
 * every balance write takes, so lock order is always group → recurrence), then takes the
 * recurrence row with FOR UPDATE SKIP LOCKED and re-checks that it is still due; expenses carry
 * a unique (recurrence_id, occurrence_index), so a duplicate can never be committed.
 */
import { Prisma } from '@kitty/db';
import { TX_OPTIONS, type Db, type Services } from '../../kernel/context.ts';
import { appendActivity } from '../../kernel/activity.ts';
import { activeMemberIds } from '../../kernel/events.ts';
import { notify, beginInboxCounters, flushInboxCounters } from '../../kernel/notify.ts';
import { type RepeatUnit } from './wire.ts';
import { todayUtc, isoFromDate, dateFromIso, type ExpenseSpec, type ExpenseFields } from './spec.ts';
import { insertExpense } from './store.ts';
import { toStoredItems, fromStoredItems, type StoredItems } from './items.ts';
import { resolveCategoryId } from '../reference/categories.ts';

/**
 * A series may start at most this many days before today (UTC). A start in year 0001 would
 * otherwise make the scheduler backfill ~740,000 copies; a year covers catching up on a real
 * subscription. add_expense refuses older starts (the sandbox too: the rule is in its schema).
 */
export const MAX_REPEAT_START_AGE_DAYS = 366;
/** One scheduler run (once a minute) creates at most this many occurrences per series; the rest follow in later runs. */
export const MAX_OCCURRENCES_PER_RUN = 50;

/** The earliest date (YYYY-MM-DD) a series may start on at `now`. */
export function earliestRepeatStart(now: Date): string {
  return isoFromDate(new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), now.getUTCDate() - MAX_REPEAT_START_AGE_DAYS)));
}

function daysInMonth(y: number, m0: number): number {
  return new Date(Date.UTC(y, m0 + 1, 0)).getUTCDate();
}

/** Date (YYYY-MM-DD) of occurrence k. */
export function occurrenceDate(start: string, unit: RepeatUnit, every: number, k: number): string {
  const d = dateFromIso(start);
  if (unit === 'day' || unit === 'week') {
    const days = k * every * (unit === 'week' ? 7 : 1);
    return isoFromDate(new Date(d.getTime() + days * 86_400_000));
  }
  const months = k * every * (unit === 'year' ? 12 : 1);
  const total = d.getUTCFullYear() * 12 + d.getUTCMonth() + months;
  const y = Math.floor(total / 12);
  const m0 = total % 12;
  const day = Math.min(d.getUTCDate(), daysInMonth(y, m0));
  return isoFromDate(new Date(Date.UTC(y, m0, day)));
}

export interface RecurrenceRule {
  startDate: string;
  unit: RepeatUnit;
  every: number;
  until: string | null;
  count: number | null;
}

/** Whether occurrence k exists under the end conditions. */
export function occurrenceExists(r: RecurrenceRule, k: number): boolean {
  if (r.count !== null && k >= r.count) return false;
  if (r.until !== null && occurrenceDate(r.startDate, r.unit, r.every, k) > r.until) return false;
  return true;
}

/** What a recurrence stores as its template (JSON; bigints as strings). */
export interface RecurrenceTemplate {
  description: string;
  category: string | null;
  /** Absent in templates stored before categories: then the label's category, else general. */
  category_id?: string;
  notes: string | null;
  original_currency: string | null;
  original_amount_minor: string | null;
  exchange_rate: string | null;
  amount_minor: string;
  method: ExpenseSpec['method'];
  payers: Array<{ agent_id: string; paid_minor: string }>;
  participants: Array<{ agent_id: string; value: string }>;
  /** An itemized bill's items, splits, tax and tip (their shares are recomputed for each copy). */
  items?: StoredItems | null;
}

export function toTemplate(spec: ExpenseSpec, f: ExpenseFields): RecurrenceTemplate {
  return {
    description: f.description,
    category: f.category,
    category_id: f.categoryId,
    notes: f.notes,
    original_currency: f.originalCurrency,
    original_amount_minor: f.originalAmountMinor?.toString() ?? null,
    exchange_rate: f.exchangeRate,
    amount_minor: spec.amountMinor.toString(),
    method: spec.method,
    payers: spec.payers.map((p) => ({ agent_id: p.agentId, paid_minor: p.paidMinor.toString() })),
    participants: spec.participants.map((p) => ({ agent_id: p.agentId, value: p.value })),
    items: spec.itemized ? toStoredItems(spec.itemized, 'template') : null,
  };
}

function fromTemplate(t: RecurrenceTemplate): { spec: ExpenseSpec; fields: ExpenseFields } {
  return {
    spec: {
      amountMinor: BigInt(t.amount_minor),
      method: t.method,
      payers: t.payers.map((p) => ({ agentId: p.agent_id, paidMinor: BigInt(p.paid_minor) })),
      participants: t.participants.map((p) => ({ agentId: p.agent_id, value: p.value })),
      itemized: fromStoredItems(t.items ?? null),
    },
    fields: {
      description: t.description,
      category: t.category,
      categoryId: t.category_id ?? resolveCategoryId(undefined, t.category),
      notes: t.notes,
      originalCurrency: t.original_currency,
      originalAmountMinor: t.original_amount_minor === null ? null : BigInt(t.original_amount_minor),
      exchangeRate: t.exchange_rate,
    },
  };
}

export interface RecurrenceRunResult {
  /** Occurrences created by this call. */
  created: number;
  /** Recurrences stopped because their group was archived or a member involved left. */
  stopped: number;
}

interface RecRow {
  id: string;
  group_id: string;
  template: RecurrenceTemplate;
  unit: RepeatUnit;
  every: number;
  start_date: Date;
  end_date: Date | null;
  max_count: number | null;
  next_index: number;
  created_by: string;
}

/** Processes one recurrence in its own transaction: at most MAX_OCCURRENCES_PER_RUN due occurrences. */
async function processOne(
  services: Services,
  id: string,
  groupId: string,
  today: string,
  now: Date,
): Promise<{ created: number; stopped: boolean }> {
  return services.prisma.$transaction(async (tx: Db) => {
    beginInboxCounters(tx);
    const r = await processLocked(tx, id, groupId, today, now);
    await flushInboxCounters(tx); // agent-row locks last, in id order (kernel/notify.ts)
    return r;
  }, TX_OPTIONS);
}

async function processLocked(
  tx: Db,
  id: string,
  groupId: string,
  today: string,
  now: Date,
): Promise<{ created: number; stopped: boolean }> {
  await tx.$executeRaw`SELECT 1 FROM groups WHERE id = ${groupId}::uuid FOR NO KEY UPDATE`;
  const rows = await tx.$queryRaw<RecRow[]>`
    SELECT id, group_id, template, unit, every, start_date, end_date, max_count, next_index, created_by
    FROM recurrences WHERE id = ${id}::uuid AND active AND next_date <= ${today}::date
    FOR NO KEY UPDATE SKIP LOCKED`;
  const rec = rows[0];
  if (!rec) return { created: 0, stopped: false };
  const rule: RecurrenceRule = {
    startDate: isoFromDate(rec.start_date),
    unit: rec.unit,
    every: rec.every,
    until: rec.end_date ? isoFromDate(rec.end_date) : null,
    count: rec.max_count,
  };
  const { spec, fields } = fromTemplate(rec.template);
  const group = await tx.group.findUniqueOrThrow({ where: { id: groupId }, select: { archivedAt: true, name: true, currency: true } });
  const involved = [
    ...new Set([
      ...spec.payers.map((p) => p.agentId),
      ...spec.participants.map((p) => p.agentId),
      ...(spec.itemized?.items.flatMap((i) => i.participants.map((p) => p.agentId)) ?? []),
    ]),
  ];
  const active = await tx.membership.count({ where: { groupId, agentId: { in: involved }, leftAt: null } });
  if (group.archivedAt || active !== involved.length) {
    const reason = group.archivedAt ? 'the group is archived' : 'a member it involves has left';
    await tx.recurrence.update({ where: { id }, data: { active: false } });
    await appendActivity(tx, {
      groupId,
      actorId: rec.created_by,
      action: 'recurrence.stopped',
      entityType: 'expense',
      entityId: id,
      after: { reason },
    });
    if (!group.archivedAt) {
      await notify(tx, {
        agentId: rec.created_by,
        kind: 'expense_changed',
        text: `Repeating "${fields.description}" stopped: ${reason}`,
        entityType: 'recurrence',
        entityId: id,
        groupId,
      });
    }
    return { created: 0, stopped: true };
  }
  let k = rec.next_index;
  let created = 0;
  const audience = await activeMemberIds(tx, groupId);
  while (created < MAX_OCCURRENCES_PER_RUN && occurrenceExists(rule, k)) {
    const date = occurrenceDate(rule.startDate, rule.unit, rule.every, k);
    if (date > today) break;
    await insertExpense(tx, {
      groupId,
      actorId: rec.created_by,
      createdById: rec.created_by,
      spec,
      fields,
      date,
      now,
      recurrenceId: id,
      occurrenceIndex: k,
      action: 'expense.recurred',
      event: { audience, currency: group.currency },
    });
    created++;
    k++;
  }
  const exists = occurrenceExists(rule, k);
  await tx.$executeRaw`
    UPDATE recurrences SET next_index = ${k}, next_date = ${occurrenceDate(rule.startDate, rule.unit, rule.every, k)}::date, active = ${exists}
    WHERE id = ${id}::uuid`;
  return { created, stopped: false };
}

/**
 * Creates the due occurrences of all active recurrences (date ≤ today in UTC at `now`): each
 * series is visited once per call and gets at most MAX_OCCURRENCES_PER_RUN new occurrences, so a
 * backlog is worked off over several calls instead of in one burst.
 * Safe to call concurrently from several instances and at any interval; wire it to a timer
 * (e.g. every minute) in the server. Errors on one recurrence do not stop the others; they are
 * reported in `errors` and retried on the next call.
 */
export async function runRecurrences(
  services: Services,
  now: Date = services.now(),
): Promise<RecurrenceRunResult & { errors: Array<{ recurrence_id: string; error: string }> }> {
  const today = todayUtc(now);
  const result = { created: 0, stopped: 0, errors: [] as Array<{ recurrence_id: string; error: string }> };
  // Series visited in this call (processed, failed or held by another instance): not visited again.
  const visited: string[] = [];
  for (;;) {
    const due = await services.prisma.$queryRaw<Array<{ id: string; group_id: string }>>(Prisma.sql`
      SELECT id, group_id FROM recurrences
      WHERE active AND next_date <= ${today}::date AND NOT (id = ANY(${visited}::uuid[]))
      ORDER BY next_date, id LIMIT 200`);
    if (!due.length) break;
    for (const d of due) {
      visited.push(d.id);
      try {
        const r = await processOne(services, d.id, d.group_id, today, now);
        result.created += r.created;
        if (r.stopped) result.stopped++;
      } catch (e) {
        result.errors.push({ recurrence_id: d.id, error: e instanceof Error ? e.message : String(e) });
      }
    }
  }
  return result;
}
