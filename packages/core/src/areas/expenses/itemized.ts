/**
 * Split math beyond one allocation, pure and exact (BigInt minor units, no floats):
 *  - `owedOf`: the owed amounts of one split (equal, exact, percent, shares, adjustment), largest
 *    remainder as in split.ts; adjustment = each member's adjustment plus an equal part of the rest.
 *  - `idealOf`: the exact ideal of each member's share as num/den.
 *  - `itemizedOwed`: an itemized bill. Each member's ideal is T × S_p / S, where S_p is the exact
 *    sum of their ideal item shares, S = Σ items and T = S + tax + tip (tax and tip shared in
 *    proportion to item subtotals); the totals are then rounded once by largest remainder, so every
 *    member's share is within one minor unit of that ideal and they sum exactly to T. Each item's
 *    own shares (shown with the item) are rounded alone, seeded by the expense id and item index.
 */
import { allocate, parseScaled } from '../ledger/split.ts';
import type { SplitMethod } from './wire.ts';

export interface SplitPart {
  agentId: string;
  /** "1" (equal), the exact amount, the percent or shares (decimal), or the adjustment (minor units). */
  value: string;
}

interface ItemSpec {
  description: string;
  amountMinor: bigint;
  method: SplitMethod;
  participants: SplitPart[];
}

export interface Itemization {
  items: ItemSpec[];
  taxMinor: bigint;
  tipMinor: bigint;
}

const byAgent = (a: SplitPart, b: SplitPart) => (a.agentId < b.agentId ? -1 : a.agentId > b.agentId ? 1 : 0);

/** The parts sorted by agent id (the order every allocation uses). */
export function sortedParts(parts: readonly SplitPart[]): SplitPart[] {
  return [...parts].sort(byAgent);
}

/** Owed amounts of `parts` (sorted by agent id) for `amount`; sums exactly to amount. */
export function owedOf(amount: bigint, method: SplitMethod, parts: readonly SplitPart[], seed: string): bigint[] {
  switch (method) {
    case 'exact':
      return parts.map((p) => BigInt(p.value));
    case 'equal':
      return allocate(
        amount,
        parts.map(() => 1n),
        seed,
      );
    case 'adjustment': {
      const adj = parts.map((p) => BigInt(p.value));
      const rest = amount - adj.reduce((s, v) => s + v, 0n);
      const equal = allocate(
        rest,
        parts.map(() => 1n),
        seed,
      );
      return adj.map((a, i) => a + equal[i]!);
    }
    default:
      return allocate(
        amount,
        parts.map((p) => parseScaled(p.value)!),
        seed,
      );
  }
}

/** Exact ideal shares of `parts` as nums / den (den > 0); Σ nums = amount × den. */
export function idealOf(amount: bigint, method: SplitMethod, parts: readonly SplitPart[]): { nums: bigint[]; den: bigint } {
  const n = BigInt(parts.length);
  switch (method) {
    case 'exact':
      return { nums: parts.map((p) => BigInt(p.value)), den: 1n };
    case 'equal':
      return { nums: parts.map(() => amount), den: n };
    case 'adjustment': {
      const adj = parts.map((p) => BigInt(p.value));
      const rest = amount - adj.reduce((s, v) => s + v, 0n);
      return { nums: adj.map((a) => a * n + rest), den: n };
    }
    default: {
      const w = parts.map((p) => parseScaled(p.value)!);
      return { nums: w.map((x) => amount * x), den: w.reduce((s, x) => s + x, 0n) };
    }
  }
}

function gcd(a: bigint, b: bigint): bigint {
  while (b) [a, b] = [b, a % b];
  return a < 0n ? -a : a;
}

/** Σ of items, tax and tip. */
export function itemizedTotal(it: Itemization): bigint {
  return it.items.reduce((s, i) => s + i.amountMinor, 0n) + it.taxMinor + it.tipMinor;
}

/**
 * Owed totals of an itemized bill by agent id (Σ = items + tax + tip) and each item's own shares.
 * Requires every item amount > 0, every ideal item share ≥ 0 and a positive total (resolveItems checks).
 */
export function itemizedOwed(it: Itemization, seed: string): { owed: Map<string, bigint>; itemShares: Array<Map<string, bigint>> } {
  const ideals = it.items.map((i) => ({
    parts: sortedParts(i.participants),
    ...idealOf(i.amountMinor, i.method, sortedParts(i.participants)),
  }));
  let L = 1n;
  for (const x of ideals) L = (L / gcd(L, x.den)) * x.den;
  const weight = new Map<string, bigint>();
  for (const x of ideals) x.parts.forEach((p, k) => weight.set(p.agentId, (weight.get(p.agentId) ?? 0n) + x.nums[k]! * (L / x.den)));
  const ids = [...weight.keys()].sort();
  const totals = allocate(
    itemizedTotal(it),
    ids.map((id) => weight.get(id)!),
    seed,
  );
  const owed = new Map(ids.map((id, k) => [id, totals[k]!]));
  const itemShares = it.items.map((item, i) => {
    const parts = ideals[i]!.parts;
    const v = owedOf(item.amountMinor, item.method, parts, `${seed}:${i}`);
    return new Map(parts.map((p, k) => [p.agentId, v[k]!]));
  });
  return { owed, itemShares };
}
