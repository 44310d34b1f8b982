import { z } from 'zod';
import { writeTool } from '../../trpc.ts';
import { WRITE } from '../../meta.ts';
import { validationError } from '../../errors.ts';
import { isoDate, amountMinor, output, groupId } from '../../text.ts';
import { requireMembership, assertNotArchived, assertLedgerAccepted } from '../../domain/groups.ts';
import { formatMinor } from '../../domain/money.ts';
import { notifyAll } from '../../domain/inbox.ts';
import { expenseSchema, expenseTextFields, payersInput, splitInput, repeatInput, foreignFields } from '../../domain/ledger/expense-wire.ts';
import { resolveAmount, resolvePayers, resolveSplit, todayUtc, dateFromIso, type ExpenseFields } from '../../domain/ledger/expense-spec.ts';
import { toExpenses, type ExpenseRow } from '../../domain/ledger/expense-view.ts';
import { activeMembersByHandle, insertExpense } from '../../domain/ledger/expense-store.ts';
import { occurrenceDate, occurrenceExists, toTemplate, earliestRepeatStart, MAX_REPEAT_START_AGE_DAYS, MAX_OCCURRENCES_PER_RUN, type RecurrenceRule } from '../../domain/ledger/recurrence.ts';
import { randomUUID } from 'node:crypto';

export const add_expense = writeTool
  .meta({
    area: 'expenses',
    title: 'Add an expense',
    description:
      'Records an expense in a group. Amounts are integers in the group currency\'s minor unit (EUR cents, JPY yen); amount_minor may be negative for a ' +
      'refund; |amount| ≤ 10^12. payers: [{handle, amount_minor}] — default the caller paid everything; several payers must sum exactly to the amount. split: ' +
      '{method: equal|exact|percent|shares, participants: [{handle, amount_minor|percent|shares}]} — default every active member equally; exact amounts must ' +
      'sum to the amount, percentages to exactly 100. Rounding: largest remainder — everyone gets the floor of their ideal share and the leftover minor units ' +
      'go to the largest remainders, ties broken by a rotation of the members (ordered by agent id) seeded by the expense id, so no one always gets the extra ' +
      'cent; each share is within one minor unit of its ideal. Foreign currency: give original_currency, original_amount_minor and exchange_rate (decimal ' +
      'string, group units per original unit); amount_minor = original × rate × 10^(group exponent − original exponent), rounded to the nearest minor unit, ' +
      'halves away from zero (amount_minor may be omitted; if given it must match). repeat: {every, unit: day|week|month|year, until?, count?} makes this the ' +
      'first of a series; later copies are created on their dates (UTC) by the scheduler, exactly once each, catching up after downtime; stop it with ' +
      'update_expense repeat:null. A series may start (date) at most ' + MAX_REPEAT_START_AGE_DAYS + ' days before today (UTC), else VALIDATION_ERROR on date; copies already due are ' +
      'caught up at most ' + MAX_OCCURRENCES_PER_RUN + ' per series per scheduler run (one run a minute). date defaults to today (UTC). Output: the expense with each member\'s paid_minor, ' +
      'owed_minor and net_minor. Consent (our rule): in a direct ledger the other agent has not accepted yet nothing can be booked — ' +
      'DIRECT_LEDGER_NOT_ACCEPTED (409); nobody can be put in debt in a ledger they have not agreed to share.',
    annotations: WRITE,
    errors: {
      VALIDATION_ERROR: 'naming the field: sums off, unknown or non-member handle, bad rate',
      FORBIDDEN: 'not a member',
      NOT_FOUND: 'no such group',
      GROUP_ARCHIVED: 'the group is archived',
      DIRECT_LEDGER_NOT_ACCEPTED: 'a direct ledger the other agent has not accepted yet',
    },
  })
  .input(
    z.strictObject({
      group_id: groupId,
      ...expenseTextFields,
      amount_minor: amountMinor.optional().describe('Group-currency amount in minor units (negative = refund). Required unless the foreign-currency fields are given.'),
      date: isoDate.optional().describe('YYYY-MM-DD, default today (UTC).'),
      payers: payersInput.optional(),
      split: splitInput.optional(),
      ...foreignFields,
      repeat: repeatInput.optional(),
    })
    // In the schema, so the sandbox refuses what the tool refuses.
    .superRefine((v, ctx) => {
      if (v.repeat && v.date !== undefined && v.date < earliestRepeatStart(new Date())) {
        ctx.addIssue({
          code: 'custom',
          path: ['date'],
          message: `a repeating series may start at most ${MAX_REPEAT_START_AGE_DAYS} days before today (UTC), i.e. on ${earliestRepeatStart(new Date())} or later`,
          params: { code: 'repeat_start_too_old' },
        });
      }
    }),
  )
  .output(output({ expense: expenseSchema }))
  .mutation(async ({ ctx, input }) => {
    const agentId = ctx.auth.agentId;
    const now = ctx.services.now();
    const { group } = await requireMembership(ctx.db, input.group_id, agentId, { lock: true });
    assertNotArchived(group);
    await assertLedgerAccepted(ctx.db, group);
    const { amountMinor, foreign } = resolveAmount(group.currency, input);
    const members = await activeMembersByHandle(ctx.db, group.id);
    const payers = resolvePayers(members, amountMinor, input.payers, agentId);
    const split = resolveSplit(members, amountMinor, input.split);
    const spec = { amountMinor, payers, ...split };
    const fields: ExpenseFields = { description: input.description, category: input.category || null, notes: input.notes || null, ...foreign };
    const date = input.date ?? todayUtc(now);

    let recurrenceId: string | null = null;
    let recurrence: ExpenseRow['recurrence'] = null;
    if (input.repeat) {
      const r = input.repeat;
      if (r.until && r.until < date) throw validationError('repeat.until', 'must not be before date', 'before_start');
      const rule: RecurrenceRule = { startDate: date, unit: r.unit, every: r.every ?? 1, until: r.until ?? null, count: r.count ?? null };
      recurrenceId = randomUUID();
      recurrence = await ctx.db.recurrence.create({
        data: {
          id: recurrenceId,
          groupId: group.id,
          template: toTemplate(spec, fields) as object,
          unit: rule.unit,
          every: rule.every,
          startDate: dateFromIso(date),
          endDate: rule.until ? dateFromIso(rule.until) : null,
          maxCount: rule.count,
          nextIndex: 1,
          nextDate: dateFromIso(occurrenceDate(date, rule.unit, rule.every, 1)),
          active: occurrenceExists(rule, 1),
          createdById: agentId,
          createdAt: now,
        },
      });
    }
    const { id, lines, row } = await insertExpense(ctx.db, {
      groupId: group.id, actorId: agentId, createdById: agentId, spec, fields, date, now,
      recurrenceId, occurrenceIndex: recurrenceId ? 0 : null,
    });
    const involved = lines.map((l) => l.agentId).sort();
    await notifyAll(ctx.db, involved, agentId, {
      kind: 'expense_added',
      text: `@${ctx.auth.handle} added "${input.description}" (${formatMinor(amountMinor, group.currency)}) in "${group.name}"`,
      entityType: 'expense',
      entityId: id,
      groupId: group.id,
    });
    // Answer from what was written (no read-back): members are known, the recurrence was just created.
    const known = new Map([...members.values()].map((m) => [m.agentId, { id: m.agentId, handle: m.handle, displayName: m.displayName }]));
    const [expense] = await toExpenses(ctx.db, [{ ...row, recurrence }], group.currency, known);
    return {
      expense: expense!,
      suggested_next: [
        `get_balances: see who owes whom in "${group.name}" now`,
        `suggest_settlements: the fewest payments that settle "${group.name}"`,
        `update_expense: correct expense ${id} if something is off`,
      ],
    };
  });
