/**
 * Itemized bills: resolving `items`, `tax_minor` and `tip_minor` against the group's members, the
 * stored form (the `expenses.items` jsonb column: items with their splits and shares, tax and tip;
 * bigints as strings) and its wire projection.
 */
import type { z } from 'zod';
import { ToolError, validationError } from '../../kernel/errors.ts';
import { MAX_AMOUNT_MINOR } from '../../kernel/text.ts';
import { toNumber } from '../../kernel/money.ts';
import type { itemsFields, splitInput, SplitMethod } from './wire.ts';
import { resolveSplit, type MemberRef } from './spec.ts';
import { idealOf, itemizedOwed, itemizedTotal, sortedParts, type Itemization } from './itemized.ts';

export interface ItemsInput {
  items: z.infer<typeof itemsFields.items>;
  tax_minor?: number | undefined;
  tip_minor?: number | undefined;
}

/**
 * Resolves an itemized bill: each item's split (default `defaultSplit`, the expense's split) against
 * the item amount, tax and tip (default 0). The total must be positive and within the amount limit;
 * `amountMinor`, when given, must equal it (VALIDATION_ERROR naming amount_minor and items).
 */
export function resolveItems(
  members: ReadonlyMap<string, MemberRef>,
  req: ItemsInput,
  defaultSplit: z.input<typeof splitInput> | undefined,
  amountMinor: number | undefined,
): Itemization {
  const items = req.items.map((it, i) => {
    const path = it.split ? `items.${i}.split` : 'split';
    const amount = BigInt(it.amount_minor);
    const { method, participants } = resolveSplit(members, amount, it.split ?? defaultSplit, path);
    const { nums } = idealOf(amount, method, sortedParts(participants));
    if (nums.some((v) => v < 0n))
      throw validationError(`${path}.participants`, `gives a member a negative part of item ${i}`, 'negative_share');
    return { description: it.description, amountMinor: amount, method, participants };
  });
  return checkItemized({ items, taxMinor: BigInt(req.tax_minor ?? 0), tipMinor: BigInt(req.tip_minor ?? 0) }, amountMinor);
}

/**
 * Checks an itemized bill's total: positive, within the amount limit, and equal to `amountMinor`
 * when that is given (else VALIDATION_ERROR naming amount_minor and items). Returns the bill.
 */
export function checkItemized(it: Itemization, amountMinor: number | undefined): Itemization {
  const total = itemizedTotal(it);
  if (total <= 0n) {
    const field = it.taxMinor < 0n ? 'tax_minor' : 'tip_minor';
    throw validationError(field, `the discounts leave a total of ${total}; items + tax_minor + tip_minor must be positive`, 'not_positive');
  }
  if (total > BigInt(MAX_AMOUNT_MINOR)) throw validationError('items', `total ${total} is above ${MAX_AMOUNT_MINOR}`, 'too_big');
  if (amountMinor !== undefined && BigInt(amountMinor) !== total) {
    const message = `amount_minor ${amountMinor} ≠ items + tax_minor + tip_minor = ${total}; omit amount_minor or send ${total}`;
    throw new ToolError('VALIDATION_ERROR', `amount_minor, items: ${message}`, {
      details: {
        issues: [
          { path: 'amount_minor', message, code: 'amount_mismatch' },
          { path: 'items', message, code: 'amount_mismatch' },
        ],
      },
    });
  }
  return it;
}

/** The stored form of an itemized bill: its items, their splits and their own shares. */
export interface StoredItems {
  items: Array<{
    description: string;
    amount_minor: string;
    method: SplitMethod;
    participants: Array<{ agent_id: string; value: string }>;
    shares: Array<{ agent_id: string; owed_minor: string }>;
  }>;
  tax_minor: string;
  tip_minor: string;
}

export function toStoredItems(it: Itemization, expenseId: string): StoredItems {
  const { itemShares } = itemizedOwed(it, expenseId);
  return {
    items: it.items.map((item, i) => ({
      description: item.description,
      amount_minor: item.amountMinor.toString(),
      method: item.method,
      participants: item.participants.map((p) => ({ agent_id: p.agentId, value: p.value })),
      shares: [...itemShares[i]!].map(([agent_id, v]) => ({ agent_id, owed_minor: v.toString() })),
    })),
    tax_minor: it.taxMinor.toString(),
    tip_minor: it.tipMinor.toString(),
  };
}

export function fromStoredItems(s: StoredItems | null): Itemization | null {
  if (!s) return null;
  return {
    items: s.items.map((i) => ({
      description: i.description,
      amountMinor: BigInt(i.amount_minor),
      method: i.method,
      participants: i.participants.map((p) => ({ agentId: p.agent_id, value: p.value })),
    })),
    taxMinor: BigInt(s.tax_minor),
    tipMinor: BigInt(s.tip_minor),
  };
}

/** The wire form of stored items (handles from `handleOf`). */
export function itemsOut(s: StoredItems | null, handleOf: (agentId: string) => string) {
  if (!s) return { items: null, tax_minor: null, tip_minor: null };
  return {
    items: s.items.map((i) => ({
      description: i.description,
      amount_minor: toNumber(BigInt(i.amount_minor)),
      split_method: i.method,
      shares: i.shares.map((x) => ({ handle: handleOf(x.agent_id), owed_minor: toNumber(BigInt(x.owed_minor)) })),
    })),
    tax_minor: toNumber(BigInt(s.tax_minor)),
    tip_minor: toNumber(BigInt(s.tip_minor)),
  };
}

/** Agent ids an itemized bill names (for loading their handles). */
export function storedItemAgents(s: StoredItems | null): string[] {
  return s ? s.items.flatMap((i) => i.shares.map((x) => x.agent_id)) : [];
}

/** An itemized bill is in the group currency: the foreign-currency fields are refused with items. */
export function assertNoForeign(req: { original_currency?: unknown; original_amount_minor?: unknown; exchange_rate?: unknown }): void {
  for (const f of ['original_currency', 'original_amount_minor', 'exchange_rate'] as const)
    if (req[f] != null) throw validationError(f, 'not with items: an itemized bill is in the group currency', 'not_with_items');
}
