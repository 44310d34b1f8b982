/**
 * Settlement planner (DESIGN.md §2): turns balances (paid − owed, summing to zero) into
 * transfers "from → to: amount" that settle everyone.
 *
 * - Up to EXACT_LIMIT non-zero balances: the minimum number of transfers, exactly. The minimum
 *   is n − k where k is the largest number of disjoint zero-sum subsets the balances split
 *   into; a dynamic programme over subsets (O(2^n · n)) finds k and one such partition, and
 *   each zero-sum subset of size s is settled with s − 1 transfers.
 * - Beyond: greedy — equal and opposite balances are paired first, the rest matched in order;
 *   never more than n − 1 transfers.
 * - Deterministic: members are ordered by `key` (the caller passes the agent id), ties never
 *   depend on input order. Inside a subset debtors and creditors are matched in key order (the
 *   north-west-corner rule), so a partial payment along a suggested transfer leaves the rest of
 *   the plan unchanged and only shrinks that transfer.
 */
import { northWestCorner } from './split.ts';

export const EXACT_LIMIT = 20;

export interface BalanceEntry {
  key: string;
  amount: bigint;
}
export interface Transfer {
  from: string;
  to: string;
  amount: bigint;
}

function settleSubset(members: BalanceEntry[]): Transfer[] {
  return northWestCorner([...members].sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0)));
}

/** Largest number of zero-sum blocks, and one partition achieving it (exact; n ≤ EXACT_LIMIT). */
function zeroSumPartition(values: readonly number[]): number[][] {
  const n = values.length;
  const full = (1 << n) - 1;
  const size = 1 << n;
  const sum = new Float64Array(size);
  const dp = new Int8Array(size);
  for (let mask = 1; mask <= full; mask++) {
    const low = mask & -mask;
    const idx = 31 - Math.clz32(low);
    sum[mask] = sum[mask ^ low]! + values[idx]!;
    let best = 0;
    let m = mask;
    while (m) {
      const bit = m & -m;
      const v = dp[mask ^ bit]!;
      if (v > best) best = v;
      m ^= bit;
    }
    dp[mask] = best + (sum[mask] === 0 ? 1 : 0);
  }
  const blocks: number[][] = [];
  let current: number[] = [];
  let mask = full;
  while (mask) {
    const target = dp[mask]! - (sum[mask] === 0 ? 1 : 0);
    let m = mask;
    let chosen = -1;
    while (m) {
      const bit = m & -m;
      if (dp[mask ^ bit] === target) {
        chosen = 31 - Math.clz32(bit);
        break;
      }
      m ^= bit;
    }
    current.push(chosen);
    mask ^= 1 << chosen;
    if (sum[mask] === 0) {
      blocks.push(current);
      current = [];
    }
  }
  return blocks;
}

/**
 * Plans the transfers that settle `balances` (must sum to zero).
 * @returns transfers (debtor → creditor) and whether the plan is proven minimal.
 */
export function planSettlements(balances: readonly BalanceEntry[]): { transfers: Transfer[]; exact: boolean } {
  const nonZero = balances.filter((b) => b.amount !== 0n).sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0));
  let total = 0n;
  for (const b of nonZero) total += b.amount;
  if (total !== 0n) throw new Error('planSettlements: balances do not sum to zero');
  if (nonZero.length === 0) return { transfers: [], exact: true };
  // Float64 sums stay exact while every |balance| ≤ 2^47 (20 × 2^47 < 2^53).
  const small = nonZero.every((b) => (b.amount < 0n ? -b.amount : b.amount) <= 2n ** 47n);
  if (nonZero.length <= EXACT_LIMIT && small) {
    const blocks = zeroSumPartition(nonZero.map((b) => Number(b.amount)));
    const transfers: Transfer[] = [];
    // Blocks in order of their smallest key, for a stable listing.
    const ordered = blocks
      .map((blk) => blk.map((i) => nonZero[i]!))
      .sort((a, b) => {
        const ka = a.map((x) => x.key).sort()[0]!;
        const kb = b.map((x) => x.key).sort()[0]!;
        return ka < kb ? -1 : 1;
      });
    for (const blk of ordered) transfers.push(...settleSubset(blk));
    return { transfers, exact: true };
  }
  // Greedy: pair exact opposites first (in key order), then match the rest in key order.
  const used = new Set<number>();
  const transfers: Transfer[] = [];
  const byAmount = new Map<bigint, number[]>();
  nonZero.forEach((b, i) => {
    if (b.amount > 0n) {
      const list = byAmount.get(b.amount) ?? [];
      list.push(i);
      byAmount.set(b.amount, list);
    }
  });
  nonZero.forEach((b, i) => {
    if (b.amount >= 0n) return;
    const list = byAmount.get(-b.amount);
    const j = list?.find((x) => !used.has(x));
    if (j === undefined) return;
    used.add(i);
    used.add(j);
    transfers.push({ from: b.key, to: nonZero[j]!.key, amount: -b.amount });
  });
  transfers.push(...settleSubset(nonZero.filter((_, i) => !used.has(i))));
  return { transfers, exact: false };
}
