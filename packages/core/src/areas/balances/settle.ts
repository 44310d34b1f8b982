/**
 * Settlement planner (DESIGN.md §2): turns balances (paid − owed, summing to zero) into
 * transfers "from → to: amount" that settle everyone.
 *
 * The minimum number of transfers is n − k, where n counts the non-zero balances and k is the
 * largest number of disjoint zero-sum blocks they split into (a block of s members is settled
 * with s − 1 transfers, and no plan does better: the members linked by transfers form blocks).
 *
 * - Equal and opposite balances {x, −x} are paired off first, one transfer each. This never
 *   loses optimality: in a best partition, if x sits in block A and −x in block B ≠ A, replacing
 *   A and B by {x, −x} and (A ∪ B) − {x, −x} (zero-sum, non-empty) keeps the number of blocks;
 *   if both sit in one block A ≠ {x, −x}, splitting A gains one. So some best partition has
 *   {x, −x} as a block, and the rest is the same problem on fewer members.
 * - When at most EXACT_LIMIT non-zero balances remain (m of them): k exactly. Let f(M) be the
 *   most disjoint zero-sum subsets inside a set M. (1) For a zero-sum M, f(M) = f(M − {i}) + 1
 *   for every member i (drop i's block; conversely what M holds beside a family inside M − {i}
 *   is zero-sum and contains i), so k = f(all − {last}) + 1 and only the 2^(m−1) subsets of the
 *   other members matter. (2) f(M) ≥ t exactly when M contains a zero-sum Z with f(Z) ≥ t (the
 *   union of t disjoint ones). So the level sets L_t = { M : f(M) ≥ t } are the supersets of the
 *   zero-sum Z with Z − {lowest member of Z} in L_(t−1) (L_1: of every zero-sum Z). The zero-sum
 *   subsets are found by meeting in the middle (subset sums of the low and the high half of the
 *   members, sorted and merged); each level is a bitset over the 2^(m−1) subsets, closed upwards
 *   with 32-bit word operations (about 2^(m−1)·(m−1)/32 of them), and there are at most m/3
 *   levels (once opposites are paired no block has fewer than 3 members). One partition into
 *   k blocks is read back by peeling members off the full set along f. Subset sums are float64:
 *   exact while Σ|balance| ≤ 2^53 (beyond, the greedy plan is used).
 * - Otherwise greedy: the remaining balances matched in key order; never more than n − 1 transfers.
 * - Deterministic: members are ordered by `key` (the caller passes the agent id), ties never
 *   depend on input order. Inside a block debtors and creditors are matched in key order (the
 *   north-west-corner rule), so a partial payment along a suggested transfer leaves the rest of
 *   the plan unchanged and only shrinks that transfer.
 */
import { northWestCorner } from '../ledger/split.ts';

/** Largest number of non-zero balances (after pairing off opposites) planned exactly. */
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

/** Adds every superset of a member: `bits` is a bitset over the 2^dims subsets of `dims` members (bit index = subset mask). */
function upwardClosure(bits: Int32Array, dims: number): void {
  // dimensions 0…4 inside each 32-bit word: a bit at position p is copied to p + 2^d when bit d of p is clear
  for (let i = 0; i < bits.length; i++) {
    let x = bits[i]!;
    if (dims > 0) x |= (x & 0x55555555) << 1;
    if (dims > 1) x |= (x & 0x33333333) << 2;
    if (dims > 2) x |= (x & 0x0f0f0f0f) << 4;
    if (dims > 3) x |= (x & 0x00ff00ff) << 8;
    if (dims > 4) x |= (x & 0x0000ffff) << 16;
    bits[i] = x;
  }
  // dimensions 5…dims−1: whole words
  for (let step = 1; step < bits.length; step *= 2)
    for (let base = 0; base < bits.length; base += 2 * step) for (let i = base; i < base + step; i++) bits[i + step]! |= bits[i]!;
}

const has = (bits: Int32Array, mask: number) => ((bits[mask >>> 5]! >>> (mask & 31)) & 1) === 1;

/**
 * Most disjoint zero-sum blocks of `values` (3 ≤ m ≤ EXACT_LIMIT integers summing to zero, every
 * subset sum exact in float64) and one partition achieving it, as index lists.
 */
function zeroSumBlocks(values: readonly number[]): number[][] {
  const dims = values.length - 1; // the last member stays out of the tables: f(all) = f(all − {last}) + 1
  const lowBits = dims >> 1;
  const lowMask = (1 << lowBits) - 1;
  const sumLow = new Float64Array(1 << lowBits);
  const sumHigh = new Float64Array(1 << (dims - lowBits));
  for (let s = 1; s < sumLow.length; s++) sumLow[s] = sumLow[s & (s - 1)]! + values[31 - Math.clz32(s & -s)]!;
  for (let s = 1; s < sumHigh.length; s++) sumHigh[s] = sumHigh[s & (s - 1)]! + values[lowBits + 31 - Math.clz32(s & -s)]!;
  const isZero = (mask: number) => sumLow[mask & lowMask]! + sumHigh[mask >>> lowBits]! === 0;
  // The non-empty zero-sum subsets of the other members, met in the middle: low and high halves sorted
  // by sum and merged where low + high = 0.
  const lows = Int32Array.from(sumLow.keys()).sort((a, b) => sumLow[a]! - sumLow[b]!);
  const highs = Int32Array.from(sumHigh.keys()).sort((a, b) => sumHigh[b]! - sumHigh[a]!);
  let zeros = new Int32Array(64);
  let count = 0;
  for (let i = 0, j = 0; i < lows.length && j < highs.length;) {
    const s = sumLow[lows[i]!]! + sumHigh[highs[j]!]!;
    if (s < 0) i++;
    else if (s > 0) j++;
    else {
      // every low of this sum with every high of the opposite sum
      let i2 = i;
      while (i2 < lows.length && sumLow[lows[i2]!] === sumLow[lows[i]!]) i2++;
      let j2 = j;
      while (j2 < highs.length && sumHigh[highs[j2]!] === sumHigh[highs[j]!]) j2++;
      if (count + (i2 - i) * (j2 - j) > zeros.length) {
        const grown = new Int32Array(Math.max(2 * zeros.length, count + (i2 - i) * (j2 - j)));
        grown.set(zeros);
        zeros = grown;
      }
      for (let a = i; a < i2; a++) for (let b = j; b < j2; b++) if (lows[a] || highs[b]) zeros[count++] = (highs[b]! << lowBits) | lows[a]!;
      i = i2;
      j = j2;
    }
  }
  // levels[t − 1] = L_t = { M : f(M) ≥ t } = the supersets of the zero-sum sets Z with f(Z) ≥ t,
  // and a zero-sum Z has f(Z) ≥ t + 1 exactly when Z − {its lowest member} is in L_t.
  const all = (1 << dims) - 1;
  const levels: Int32Array[] = [];
  while (count && levels.length < dims /* never reached: at most m/3 levels */) {
    const level = new Int32Array(Math.max(1, (all + 1) >>> 5));
    for (let i = 0; i < count; i++) level[zeros[i]! >>> 5]! |= 1 << (zeros[i]! & 31);
    upwardClosure(level, dims);
    if (!has(level, all)) break;
    levels.push(level);
    let kept = 0;
    for (let i = 0; i < count; i++) if (has(level, zeros[i]! & (zeros[i]! - 1))) zeros[kept++] = zeros[i]!;
    count = kept;
  }
  const f = (mask: number) => {
    let t = 0;
    while (t < levels.length && has(levels[t]!, mask)) t++;
    return t;
  };
  // Peel members off the full set, keeping f on its optimum; each return to a zero-sum set closes a block.
  const blocks: number[][] = [];
  let current = [dims];
  let mask = all;
  while (mask) {
    // zero-sum: any member (f drops by one); otherwise the first member whose removal keeps f
    let left = mask;
    let bit = left & -left;
    if (!isZero(mask)) {
      const target = f(mask);
      while (f(mask ^ bit) !== target) {
        left ^= bit;
        bit = left & -left;
      }
    }
    current.push(31 - Math.clz32(bit));
    mask ^= bit;
    if (isZero(mask)) {
      blocks.push(current);
      current = [];
    }
  }
  return blocks;
}

const byKey = (a: BalanceEntry, b: BalanceEntry) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0);

/**
 * Plans the transfers that settle `balances` (amounts in minor units, must sum to zero; keys
 * distinct, zero amounts ignored).
 * @returns transfers (debtor → creditor, amount > 0), listed block by block in order of each block's
 *   smallest key, and whether the plan is proven minimal (`exact`).
 * @throws Error when the balances do not sum to zero.
 */
export function planSettlements(balances: readonly BalanceEntry[]): { transfers: Transfer[]; exact: boolean } {
  const nonZero = balances.filter((b) => b.amount !== 0n).sort(byKey);
  let total = 0n;
  for (const b of nonZero) total += b.amount;
  if (total !== 0n) throw new Error('planSettlements: balances do not sum to zero');
  // Blocks as index lists into nonZero (ascending, so index order is key order).
  const blocks: number[][] = [];
  // Pair off equal and opposite balances: per magnitude, debtors and creditors in key order.
  const byMagnitude = new Map<bigint, { debtors: number[]; creditors: number[] }>();
  nonZero.forEach((b, i) => {
    const magnitude = b.amount < 0n ? -b.amount : b.amount;
    let side = byMagnitude.get(magnitude);
    if (!side) byMagnitude.set(magnitude, (side = { debtors: [], creditors: [] }));
    (b.amount < 0n ? side.debtors : side.creditors).push(i);
  });
  const paired = new Uint8Array(nonZero.length);
  for (const { debtors, creditors } of byMagnitude.values()) {
    for (let p = 0; p < debtors.length && p < creditors.length; p++) {
      const [a, b] = debtors[p]! < creditors[p]! ? [debtors[p]!, creditors[p]!] : [creditors[p]!, debtors[p]!];
      blocks.push([a, b]);
      paired[a] = paired[b] = 1;
    }
  }
  const rest: number[] = [];
  let absSum = 0n;
  for (let i = 0; i < nonZero.length; i++) {
    if (paired[i]) continue;
    rest.push(i);
    const a = nonZero[i]!.amount;
    absSum += a < 0n ? -a : a;
  }
  const exact = rest.length <= EXACT_LIMIT && absSum <= 2n ** 53n;
  if (rest.length && exact) {
    for (const blk of zeroSumBlocks(rest.map((i) => Number(nonZero[i]!.amount))))
      blocks.push(blk.map((j) => rest[j]!).sort((a, b) => a - b));
  } else if (rest.length) blocks.push(rest);
  blocks.sort((a, b) => a[0]! - b[0]!);
  const transfers: Transfer[] = [];
  for (const blk of blocks) transfers.push(...northWestCorner(blk.map((i) => nonZero[i]!)));
  return { transfers, exact };
}
