/** The recurring-expense scheduler: exactly once with two runners, catch-up after downtime. */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createHarness, type Harness } from '../harness.ts';
import { groupWith, expectLedgerOk } from '../ledger-helpers.ts';
import { runRecurrences } from '../../src/index.ts';
import { occurrenceDate, MAX_OCCURRENCES_PER_RUN, MAX_REPEAT_START_AGE_DAYS } from '../../src/areas/expenses/recurrence.ts';

let h: Harness;
beforeAll(async () => {
  h = await createHarness();
});
afterAll(async () => {
  await h?.close();
});

describe('recurrence calendar', () => {
  it('keeps the day of month, clamped', () => {
    expect(occurrenceDate('2024-01-31', 'month', 1, 1)).toBe('2024-02-29');
    expect(occurrenceDate('2024-01-31', 'month', 1, 2)).toBe('2024-03-31');
    expect(occurrenceDate('2024-02-29', 'year', 1, 1)).toBe('2025-02-28');
    expect(occurrenceDate('2024-01-01', 'week', 2, 3)).toBe('2024-02-12');
  });
});

describe('runRecurrences', () => {
  it('creates each occurrence exactly once with two concurrent runners and catches up', async () => {
    const [a, b] = [await h.agent('ra'), await h.agent('rb')];
    const g = await groupWith(h, [a, b]);
    const today = new Date();
    const start = new Date(today.getTime() - 9 * 86_400_000).toISOString().slice(0, 10);
    const firsts: string[] = [];
    for (let i = 0; i < 6; i++) {
      const r = await h.call(a, 'add_expense', {
        group_id: g,
        description: `Daily ${i}`,
        amount_minor: 100 + i,
        date: start,
        repeat: { every: 1, unit: 'day' },
      });
      firsts.push(r.expense.expense_id);
    }
    const weekly = await h.call(a, 'add_expense', {
      group_id: g,
      description: 'Weekly, 2 times',
      amount_minor: 50,
      date: start,
      repeat: { unit: 'week', count: 2 },
    });
    const [r1, r2] = await Promise.all([runRecurrences(h.services, today), runRecurrences(h.services, today)]);
    expect(r1.errors).toEqual([]);
    expect(r2.errors).toEqual([]);
    // 6 daily series × 9 more days (start+1 … today) + 1 weekly copy
    expect(r1.created + r2.created).toBe(6 * 9 + 1);
    const rows = await h.services.prisma.expense.groupBy({ by: ['recurrenceId', 'occurrenceIndex'], where: { groupId: g }, _count: true });
    expect(rows.every((r) => r._count === 1)).toBe(true);
    expect(rows).toHaveLength(6 * 10 + 2);
    // Running again is a no-op
    const r3 = await runRecurrences(h.services, today);
    expect(r3.created).toBe(0);
    // Weekly series finished
    const w = await h.call(a, 'get_expense', { expense_id: weekly.expense.expense_id });
    expect(w.expense.recurrence.active).toBe(false);
    // Stopping is an update
    await h.call(b, 'update_expense', { expense_id: firsts[0], repeat: null });
    const later = new Date(today.getTime() + 3 * 86_400_000);
    const r4 = await runRecurrences(h.services, later);
    expect(r4.created).toBe(5 * 3);
    await expectLedgerOk(h);
  });

  it('stops a series whose member left, and one in an archived group', async () => {
    const [a, b] = [await h.agent('sa'), await h.agent('sb')];
    const g = await groupWith(h, [a, b]);
    const today = new Date().toISOString().slice(0, 10);
    await h.call(a, 'add_expense', {
      group_id: g,
      description: 'Solo sub',
      amount_minor: 100,
      date: today,
      repeat: { unit: 'day' },
      split: { participants: [{ handle: a.handle }] },
    });
    const r = await runRecurrences(h.services, new Date(Date.now() + 86_400_000));
    expect(r.created).toBeGreaterThanOrEqual(1);
    await h.call(a, 'archive_group', { group_id: g });
    const s = await runRecurrences(h.services, new Date(Date.now() + 5 * 86_400_000));
    expect(s.stopped).toBeGreaterThanOrEqual(1);
    await expectLedgerOk(h);
  });
});

describe('bounds against amplification', () => {
  const daysAgo = (n: number) => new Date(Date.now() - n * 86_400_000).toISOString().slice(0, 10);

  it(`a series may start at most ${MAX_REPEAT_START_AGE_DAYS} days ago; the tool and the sandbox refuse older starts naming date`, async () => {
    const [a, b] = [await h.agent('ba'), await h.agent('bb')];
    const g = await groupWith(h, [a, b]);
    for (const date of ['0001-01-01', daysAgo(MAX_REPEAT_START_AGE_DAYS + 1), '1999-12-31']) {
      const args = {
        group_id: g,
        description: 'Ancient daily',
        amount_minor: 100,
        date,
        repeat: { unit: 'day' },
        idempotency_key: `old-${date}`,
      };
      const e = await h.fail(a, 'add_expense', args);
      expect(e.kittyCode).toBe('VALIDATION_ERROR');
      expect(e.details?.issues).toEqual([expect.objectContaining({ path: 'date', code: 'repeat_start_too_old' })]);
      const sandbox = h.registry.validateArgs('add_expense', args);
      expect(sandbox).toEqual({ ok: false, issues: [expect.objectContaining({ path: 'date', code: 'repeat_start_too_old' })] });
    }
    // Nothing was written by the refusals.
    expect(await h.services.prisma.recurrence.count({ where: { groupId: g } })).toBe(0);
    expect(await h.services.prisma.expense.count({ where: { groupId: g } })).toBe(0);
    // An old one-off expense is still fine, and so is a series starting exactly at the bound.
    await h.call(a, 'add_expense', { group_id: g, description: 'Old one-off', amount_minor: 100, date: '2001-02-03' });
    const edge = {
      group_id: g,
      description: 'Year-old daily',
      amount_minor: 100,
      date: daysAgo(MAX_REPEAT_START_AGE_DAYS),
      repeat: { unit: 'month' },
    };
    expect(h.registry.validateArgs('add_expense', { ...edge, idempotency_key: 'edge-key-1' })).toEqual({ ok: true });
    await h.call(a, 'add_expense', edge);
    // The rule is in the description an agent reads.
    expect(h.registry.tools.get('add_expense')!.description).toContain(`${MAX_REPEAT_START_AGE_DAYS} days`);
  });

  it(`one run creates at most ${MAX_OCCURRENCES_PER_RUN} occurrences per series; later runs create the rest, exactly once`, async () => {
    const [a, b] = [await h.agent('ca'), await h.agent('cb')];
    const g = await groupWith(h, [a, b]);
    const backlog = 2 * MAX_OCCURRENCES_PER_RUN + 17; // occurrences 1..backlog are due today
    const first = await h.call(a, 'add_expense', {
      group_id: g,
      description: 'Backlog daily',
      amount_minor: 100,
      date: daysAgo(backlog),
      repeat: { unit: 'day' },
    });
    const second = await h.call(a, 'add_expense', {
      group_id: g,
      description: 'Backlog daily 2',
      amount_minor: 100,
      date: daysAgo(backlog),
      repeat: { unit: 'day' },
    });
    const today = new Date();
    // Every expense of the series the given first expense started (the first included).
    const copies = (id: string) => h.services.prisma.expense.count({ where: { groupId: g, recurrence: { expenses: { some: { id } } } } });
    // Other tests' series share the database: count this group's expenses after each run.
    const inGroup = () => h.services.prisma.expense.count({ where: { groupId: g } });
    const runs: number[] = [];
    for (let i = 0; i < 4; i++) {
      const before = await inGroup();
      const r = await runRecurrences(h.services, today);
      expect(r.errors).toEqual([]);
      runs.push((await inGroup()) - before);
    }
    expect(runs).toEqual([2 * MAX_OCCURRENCES_PER_RUN, 2 * MAX_OCCURRENCES_PER_RUN, 2 * 17, 0]);
    for (const e of [first, second]) expect(await copies(e.expense.expense_id)).toBe(backlog + 1);
    await expectLedgerOk(h);
  });
});
