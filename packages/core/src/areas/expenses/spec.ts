/**
 * The resolved form of an expense and the pure rules that build it (no database): handles to
 * members, the amount (or its foreign-currency conversion), payers, the split, the share lines
 * (largest remainder, seeded by the expense id), dates, the activity snapshot.
 * Errors are VALIDATION_ERROR naming the field.
 */
import type { z } from 'zod';
import { validationError } from '../../kernel/errors.ts';
import { notAMember } from '../../access/members.ts';
import { MAX_AMOUNT_MINOR } from '../../kernel/text.ts';
import { requireCurrency, currencyInfo } from '../../kernel/money.ts';
import { parseScaled, scaledToString, convertAmount, HUNDRED_PERCENT, type ShareLine } from '../ledger/split.ts';
import type { SplitMethod, StoredSplitMethod, payersInput, splitInput } from './wire.ts';
import { owedOf, idealOf, itemizedOwed, sortedParts, type Itemization } from './itemized.ts';

/** A fully resolved expense: what is stored and what a recurrence repeats. */
export interface ExpenseSpec {
  amountMinor: bigint;
  payers: Array<{ agentId: string; paidMinor: bigint }>;
  method: StoredSplitMethod;
  /** value: "1" (equal), exact amount, percent or shares as canonical decimal strings, adjustment in minor units. Empty when itemized. */
  participants: Array<{ agentId: string; value: string }>;
  /** An itemized bill (method "itemized"): the items with their splits, tax and tip. */
  itemized?: Itemization | null;
}

export interface ExpenseFields {
  description: string;
  category: string | null;
  categoryId: string;
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

function memberAt(members: ReadonlyMap<string, MemberRef>, h: string, path: string): MemberRef {
  const m = members.get(h);
  if (!m) throw notAMember(path, h, members.keys());
  return m;
}

/**
 * Resolves the amount from amount_minor or the foreign-currency fields.
 * Errors name the field (VALIDATION_ERROR).
 */
export function resolveAmount(
  groupCurrency: string,
  input: {
    amount_minor?: number | undefined;
    original_currency?: string | null | undefined;
    original_amount_minor?: number | null | undefined;
    exchange_rate?: string | null | undefined;
  },
): { amountMinor: bigint; foreign: Pick<ExpenseFields, 'originalCurrency' | 'originalAmountMinor' | 'exchangeRate'> } {
  const anyForeign = input.original_currency != null || input.original_amount_minor != null || input.exchange_rate != null;
  let amount: bigint;
  let foreign: Pick<ExpenseFields, 'originalCurrency' | 'originalAmountMinor' | 'exchangeRate'> = {
    originalCurrency: null,
    originalAmountMinor: null,
    exchangeRate: null,
  };
  if (anyForeign) {
    for (const f of ['original_currency', 'original_amount_minor', 'exchange_rate'] as const) {
      if (input[f] == null)
        throw validationError(
          f,
          'required together with the other foreign-currency fields (original_currency, original_amount_minor, exchange_rate)',
          'required',
        );
    }
    const oc = requireCurrency(input.original_currency!, 'original_currency');
    const gc = currencyInfo(groupCurrency)!;
    const converted = convertAmount(
      BigInt(input.original_amount_minor!),
      input.exchange_rate!,
      oc.minor_unit_exponent,
      gc.minor_unit_exponent,
    );
    if (converted === null) throw validationError('exchange_rate', 'must be a positive decimal string like "1.0845"', 'invalid_rate');
    if (input.amount_minor !== undefined && BigInt(input.amount_minor) !== converted) {
      throw validationError(
        'amount_minor',
        `does not match original_amount_minor × exchange_rate = ${converted} (rounded half away from zero); omit amount_minor or send ${converted}`,
        'amount_mismatch',
      );
    }
    amount = converted;
    foreign = { originalCurrency: oc.code, originalAmountMinor: BigInt(input.original_amount_minor!), exchangeRate: input.exchange_rate! };
  } else {
    if (input.amount_minor === undefined)
      throw validationError('amount_minor', 'required (or give original_currency, original_amount_minor and exchange_rate)', 'required');
    amount = BigInt(input.amount_minor);
  }
  if (amount === 0n) throw validationError('amount_minor', 'must not be zero', 'zero');
  if (amount > BigInt(MAX_AMOUNT_MINOR) || amount < -BigInt(MAX_AMOUNT_MINOR))
    throw validationError('amount_minor', `must be within ±${MAX_AMOUNT_MINOR}`, 'too_big');
  return { amountMinor: amount, foreign };
}

export function resolvePayers(
  members: ReadonlyMap<string, MemberRef>,
  amount: bigint,
  payers: z.infer<typeof payersInput> | undefined,
  callerId: string,
): ExpenseSpec['payers'] {
  if (!payers) return [{ agentId: callerId, paidMinor: amount }];
  const seen = new Set<string>();
  const out: ExpenseSpec['payers'] = [];
  payers.forEach((p, i) => {
    const m = memberAt(members, p.handle, `payers.${i}.handle`);
    if (seen.has(m.agentId)) throw validationError(`payers.${i}.handle`, `@${p.handle} is listed twice`, 'duplicate');
    seen.add(m.agentId);
    if (p.amount_minor === undefined && payers.length > 1)
      throw validationError(`payers.${i}.amount_minor`, 'required when there are several payers', 'required');
    out.push({ agentId: m.agentId, paidMinor: p.amount_minor === undefined ? amount : BigInt(p.amount_minor) });
  });
  const sum = out.reduce((s, p) => s + p.paidMinor, 0n);
  if (sum !== amount) throw validationError('payers', `payer amounts sum to ${sum} but the amount is ${amount}`, 'sum_mismatch');
  return out.filter((p) => p.paidMinor !== 0n);
}

export function resolveSplit(
  members: ReadonlyMap<string, MemberRef>,
  amount: bigint,
  split: z.input<typeof splitInput> | undefined,
  path = 'split',
): { method: SplitMethod; participants: ExpenseSpec['participants'] } {
  const method: SplitMethod = split?.method ?? 'equal';
  const list = split?.participants;
  if (!list) {
    if (method !== 'equal') throw validationError(`${path}.participants`, `required for method ${method}`, 'required');
    return { method, participants: [...members.values()].map((m) => ({ agentId: m.agentId, value: '1' })) };
  }
  const seen = new Set<string>();
  const participants: ExpenseSpec['participants'] = [];
  let total = 0n;
  list.forEach((p, i) => {
    const base = `${path}.participants.${i}`;
    const m = memberAt(members, p.handle, `${base}.handle`);
    if (seen.has(m.agentId)) throw validationError(`${base}.handle`, `@${p.handle} is listed twice`, 'duplicate');
    seen.add(m.agentId);
    const own = ({ equal: '', exact: 'amount_minor', percent: 'percent', shares: 'shares', adjustment: 'adjustment_minor' } as const)[
      method
    ];
    const extra = (['amount_minor', 'percent', 'shares', 'adjustment_minor'] as const).filter((f) => p[f] !== undefined && f !== own);
    if (extra.length) throw validationError(`${base}.${extra[0]}`, `not used by method ${method}`, 'unexpected');
    if (method === 'equal') {
      participants.push({ agentId: m.agentId, value: '1' });
    } else if (method === 'exact') {
      if (p.amount_minor === undefined) throw validationError(`${base}.amount_minor`, 'required for method exact', 'required');
      total += BigInt(p.amount_minor);
      participants.push({ agentId: m.agentId, value: String(p.amount_minor) });
    } else if (method === 'adjustment') {
      if (p.adjustment_minor === undefined) throw validationError(`${base}.adjustment_minor`, 'required for method adjustment', 'required');
      participants.push({ agentId: m.agentId, value: String(p.adjustment_minor) });
    } else {
      const raw = method === 'percent' ? p.percent : p.shares;
      if (raw === undefined) throw validationError(`${base}.${method}`, `required for method ${method}`, 'required');
      const v = parseScaled(raw);
      if (v === null) throw validationError(`${base}.${method}`, 'must be a non-negative decimal with at most 6 decimals', 'invalid');
      total += v;
      participants.push({ agentId: m.agentId, value: scaledToString(v) });
    }
  });
  if (method === 'exact' && total !== amount)
    throw validationError(`${path}.participants`, `exact amounts sum to ${total} but the amount is ${amount}`, 'sum_mismatch');
  if (method === 'percent' && total !== HUNDRED_PERCENT)
    throw validationError(`${path}.participants`, `percentages sum to ${scaledToString(total)}, not 100`, 'sum_mismatch');
  if (method === 'shares' && total === 0n) throw validationError(`${path}.participants`, 'shares must not all be zero', 'zero_shares');
  if (method === 'adjustment') {
    // Nobody's ideal share may have the opposite sign of the amount (adjustments larger than the amount).
    const parts = sortedParts(participants);
    const { nums } = idealOf(amount, method, parts);
    const k = nums.findIndex((v) => (amount > 0n ? v < 0n : v > 0n));
    if (k >= 0) {
      const i = list.findIndex((p) => members.get(p.handle)!.agentId === parts[k]!.agentId);
      throw validationError(
        `${base(path, i)}.adjustment_minor`,
        'the adjustments leave this member a share of the opposite sign to the amount',
        'adjustment_too_big',
      );
    }
  }
  return { method, participants };
}

function base(path: string, i: number): string {
  return `${path}.participants.${i}`;
}

/** The share lines of an expense (rounding seeded by its id). Exact: both sides sum to the amount. */
export function computeShares(spec: ExpenseSpec, expenseId: string): Array<ShareLine & { splitValue: string | null }> {
  const lines = new Map<string, ShareLine & { splitValue: string | null }>();
  if (spec.itemized) {
    for (const [agentId, owedMinor] of itemizedOwed(spec.itemized, expenseId).owed)
      lines.set(agentId, { agentId, paidMinor: 0n, owedMinor, splitValue: null });
  } else {
    const parts = sortedParts(spec.participants);
    const owed = owedOf(spec.amountMinor, spec.method as SplitMethod, parts, expenseId);
    parts.forEach((p, i) => lines.set(p.agentId, { agentId: p.agentId, paidMinor: 0n, owedMinor: owed[i]!, splitValue: p.value }));
  }
  for (const p of spec.payers) {
    const l = lines.get(p.agentId) ?? { agentId: p.agentId, paidMinor: 0n, owedMinor: 0n, splitValue: null };
    l.paidMinor += p.paidMinor;
    lines.set(p.agentId, l);
  }
  return [...lines.values()].sort((a, b) => (a.agentId < b.agentId ? -1 : 1));
}

/** Reconstructs the spec of a stored expense from its share rows. */
export function specFromRows(
  amountMinor: bigint,
  method: string,
  shares: Array<{ agentId: string; paidMinor: bigint; splitValue: string | null }>,
  itemized: Itemization | null = null,
): ExpenseSpec {
  return {
    amountMinor,
    itemized,
    method: method as StoredSplitMethod,
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

/** Compact before/after form for the activity log. */
export function snapshot(description: string, amount: bigint, date: string, lines: ReadonlyArray<ShareLine>) {
  return {
    description,
    amount_minor: amount.toString(),
    date,
    shares: lines.map((l) => ({ agent_id: l.agentId, paid_minor: l.paidMinor.toString(), owed_minor: l.owedMinor.toString() })),
  };
}
