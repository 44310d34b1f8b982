/**
 * Settlement planner: optimality against two references that share nothing with it (every set
 * partition for n ≤ 9; the textbook O(2^n · n) subset programme at n = 20), exact settling,
 * determinism, stability under partial payments.
 */
import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { planSettlements, EXACT_LIMIT, type BalanceEntry, type Transfer } from '../../src/areas/balances/settle.ts';
import { adversarialVectors } from '../../src/testing/settle-vectors.ts';

/** Brute force: minimum transfers = n − (max number of blocks over all set partitions with zero-sum blocks). */
function bruteMin(values: bigint[]): number {
  const v = values.filter((x) => x !== 0n);
  const n = v.length;
  let best = 0;
  // every set partition, as a restricted growth string, with the running sum of each block
  const sums: bigint[] = [];
  const rec = (i: number) => {
    if (i === n) {
      if (sums.every((s) => s === 0n)) best = Math.max(best, sums.length);
      return;
    }
    for (let b = 0; b < sums.length; b++) {
      sums[b]! += v[i]!;
      rec(i + 1);
      sums[b]! -= v[i]!;
    }
    sums.push(v[i]!);
    rec(i + 1);
    sums.pop();
  };
  if (n) rec(0);
  return n - best;
}

/** The textbook subset programme: dp[mask] = max over i of dp[mask − i], plus one when mask sums to zero. */
function textbookMin(values: bigint[]): number {
  const n = values.length;
  const absSum = values.reduce((s, x) => s + (x < 0n ? -x : x), 0n);
  expect(absSum <= 2n ** 53n).toBe(true); // float64 subset sums are exact
  const w = values.map(Number);
  const sum = new Float64Array(1 << n);
  const dp = new Uint8Array(1 << n);
  for (let mask = 1; mask < 1 << n; mask++) {
    const low = mask & -mask;
    sum[mask] = sum[mask ^ low]! + w[31 - Math.clz32(low)]!;
    let best = 0;
    for (let m = mask; m; m &= m - 1) best = Math.max(best, dp[mask ^ (m & -m)]!);
    dp[mask] = best + (sum[mask] === 0 ? 1 : 0);
  }
  return n - dp[(1 << n) - 1]!;
}

const keyed = (amounts: bigint[]): BalanceEntry[] => amounts.map((amount, i) => ({ key: `k${String(i).padStart(5, '0')}`, amount }));

/** Members left after pairing off equal and opposite balances (computed independently of the planner). */
function unpaired(amounts: bigint[]): number {
  const net = new Map<bigint, number>();
  for (const a of amounts) if (a !== 0n) net.set(a < 0n ? -a : a, (net.get(a < 0n ? -a : a) ?? 0) + (a < 0n ? -1 : 1));
  let left = 0;
  for (const c of net.values()) left += Math.abs(c);
  return left;
}

function applyTransfers(bal: BalanceEntry[], ts: Transfer[]): Map<string, bigint> {
  const m = new Map(bal.map((b) => [b.key, b.amount]));
  for (const t of ts) {
    expect(t.amount > 0n).toBe(true);
    m.set(t.from, m.get(t.from)! + t.amount);
    m.set(t.to, m.get(t.to)! - t.amount);
  }
  return m;
}

const balancesArb = (maxN: number, maxAbs: number) =>
  fc.array(fc.integer({ min: -maxAbs, max: maxAbs }), { minLength: 1, maxLength: maxN - 1 }).map((xs) => {
    const vals = xs.map(BigInt);
    vals.push(-vals.reduce((s, x) => s + x, 0n));
    return vals.map((amount, i) => ({ key: `k${String(i).padStart(3, '0')}`, amount }));
  });

describe('planSettlements', () => {
  it('is optimal on small cases (checked against brute force) and settles everyone', () => {
    fc.assert(
      fc.property(balancesArb(8, 30), (bal) => {
        const { transfers, exact } = planSettlements(bal);
        expect(exact).toBe(true);
        for (const v of applyTransfers(bal, transfers).values()) expect(v).toBe(0n);
        expect(transfers.length).toBe(bruteMin(bal.map((b) => b.amount)));
      }),
      { numRuns: 400 },
    );
  });

  it('finds zero-sum sub-groups (3 transfers instead of 4 here)', () => {
    const bal = [
      { key: 'a', amount: -5n },
      { key: 'b', amount: 5n },
      { key: 'c', amount: -7n },
      { key: 'd', amount: 3n },
      { key: 'e', amount: 4n },
    ];
    expect(planSettlements(bal).transfers).toHaveLength(3);
  });

  it('never needs more than n − 1 transfers, exact or greedy, and always settles (exact while at most EXACT_LIMIT are left after pairing)', () => {
    fc.assert(
      fc.property(balancesArb(60, 1_000_000), (bal) => {
        const { transfers, exact } = planSettlements(bal);
        const nonZero = bal.filter((b) => b.amount !== 0n).length;
        expect(transfers.length).toBeLessThanOrEqual(Math.max(0, nonZero - 1));
        expect(exact).toBe(unpaired(bal.map((b) => b.amount)) <= EXACT_LIMIT);
        for (const v of applyTransfers(bal, transfers).values()) expect(v).toBe(0n);
      }),
      { numRuns: 150 },
    );
  });

  it('is deterministic regardless of input order', () => {
    fc.assert(
      fc.property(balancesArb(12, 100), fc.integer(), (bal, seed) => {
        const shuffled = [...bal].sort((a, b) => ((a.key.charCodeAt(3) * 31 + seed) % 7) - ((b.key.charCodeAt(3) * 31 + seed) % 7));
        expect(planSettlements(shuffled)).toEqual(planSettlements(bal));
      }),
    );
  });

  it('is stable after a partial payment along a suggested transfer', () => {
    // Never more transfers afterwards. Inside one zero-sum block the north-west-corner matching
    // is provably stable (only the paid transfer shrinks); across blocks a payment can make a
    // different grouping optimal, so exact equality is asserted when no sub-grouping exists.
    fc.assert(
      fc.property(balancesArb(10, 1000), fc.nat(), (bal, pick) => {
        const before = planSettlements(bal).transfers;
        if (!before.length) return;
        const t = before[pick % before.length]!;
        if (t.amount < 2n) return;
        const paid = t.amount / 2n;
        const moved = bal.map((b) => ({ key: b.key, amount: b.amount + (b.key === t.from ? paid : b.key === t.to ? -paid : 0n) }));
        const after = planSettlements(moved).transfers;
        expect(after.length).toBeLessThanOrEqual(before.length);
        const nonZero = bal.filter((b) => b.amount !== 0n).length;
        if (before.length !== nonZero - 1 || after.length !== before.length) return; // several blocks
        const expected = before.map((x) => (x === t ? { ...x, amount: x.amount - paid } : x));
        expect(after).toEqual(expected);
      }),
      { numRuns: 1000 },
    );
  });

  it('is optimal on every adversarial vector with 3…9 members (brute force over all set partitions)', () => {
    for (let n = 3; n <= 9; n++) {
      for (const { name, amounts } of adversarialVectors(n, 3)) {
        const bal = keyed(amounts);
        const { transfers, exact } = planSettlements(bal);
        expect(exact, name).toBe(true);
        for (const v of applyTransfers(bal, transfers).values()) expect(v, name).toBe(0n);
        expect(transfers.length, `${name} n=${n}`).toBe(bruteMin(amounts));
      }
    }
  });

  it('is optimal on every adversarial vector with 20 members (textbook subset programme)', () => {
    for (const { name, amounts } of adversarialVectors(EXACT_LIMIT, 2)) {
      const bal = keyed(amounts);
      const { transfers, exact } = planSettlements(bal);
      expect(exact, name).toBe(true);
      for (const v of applyTransfers(bal, transfers).values()) expect(v, name).toBe(0n);
      expect(transfers.length, name).toBe(textbookMin(amounts));
    }
  });

  it('gives the same plan for the adversarial vectors in any input order', () => {
    for (const { name, amounts } of adversarialVectors(EXACT_LIMIT, 1)) {
      const bal = keyed(amounts);
      expect(planSettlements([...bal].reverse()), name).toEqual(planSettlements(bal));
    }
  });

  it('pays equal and opposite balances directly, without losing optimality', () => {
    fc.assert(
      fc.property(
        fc.array(fc.integer({ min: 1, max: 6 }), { minLength: 1, maxLength: 2 }),
        fc.array(
          fc.integer({ min: -6, max: 6 }).filter((x) => x !== 0),
          { minLength: 0, maxLength: 4 },
        ),
        (pairs, others) => {
          const rest = others.map(BigInt);
          const closing = -rest.reduce((s, x) => s + x, 0n);
          const amounts = [...pairs.flatMap((x) => [BigInt(x), BigInt(-x)]), ...rest, ...(closing ? [closing] : [])];
          const bal = keyed(amounts);
          const { transfers } = planSettlements(bal);
          for (const v of applyTransfers(bal, transfers).values()) expect(v).toBe(0n);
          expect(transfers.length).toBe(bruteMin(amounts));
          // a magnitude held by exactly one debtor and one creditor is settled between them in one transfer
          for (const x of new Set(amounts.map((a) => (a < 0n ? -a : a)))) {
            const debtors = bal.filter((b) => b.amount === -x);
            const creditors = bal.filter((b) => b.amount === x);
            if (debtors.length === 1 && creditors.length === 1)
              expect(transfers).toContainEqual({ from: debtors[0]!.key, to: creditors[0]!.key, amount: x });
          }
        },
      ),
      { numRuns: 300 },
    );
  });

  it('stays exact beyond EXACT_LIMIT members when pairing off opposites leaves at most EXACT_LIMIT', () => {
    for (const { name, amounts } of adversarialVectors(8, 1)) {
      const pairs = Array.from({ length: 40 }, (_, i) => BigInt(1_000 + 37 * i)).flatMap((x) => [x, -x]);
      const bal = keyed([...pairs, ...amounts]);
      const { transfers, exact } = planSettlements(bal);
      expect(exact, name).toBe(true);
      for (const v of applyTransfers(bal, transfers).values()) expect(v, name).toBe(0n);
      // some best partition has every {x, −x} as a block (the planner's header proves it; the test above checks it)
      expect(transfers.length, name).toBe(40 + bruteMin(amounts));
    }
  });

  it('is exact up to Σ|balance| = 2^53 and settles exactly beyond (greedy)', () => {
    const big = 2n ** 51n;
    // Σ|balance| = 2^53: exact; no zero-sum subset other than all four
    const edge = keyed([big + 1n, big - 1n, -big, -big]);
    expect(planSettlements(edge).exact).toBe(true);
    expect(planSettlements(edge).transfers).toHaveLength(bruteMin(edge.map((b) => b.amount)));
    // 2^53 + 1 is not a float64: a float planner would see {2^53 + 1, −2^53} as zero-sum
    const beyond = keyed([2n ** 53n + 1n, -(2n ** 53n), -1n, 7n, -3n, -4n]);
    const plan = planSettlements(beyond);
    expect(plan.exact).toBe(false);
    expect(plan.transfers.length).toBeLessThanOrEqual(5);
    for (const v of applyTransfers(beyond, plan.transfers).values()) expect(v).toBe(0n);
  });

  it('settles 10^4 members with at most n − 1 transfers', () => {
    let seed = 7;
    const next = () => (seed = (Math.imul(seed, 1103515245) + 12345) >>> 0) / 2 ** 32;
    for (const draw of [() => BigInt(Math.floor(next() * 2_000_001) - 1_000_000), () => (next() < 0.5 ? -1n : 1n)]) {
      const amounts = Array.from({ length: 9_999 }, draw);
      amounts.push(-amounts.reduce((s, x) => s + x, 0n));
      const bal = keyed(amounts);
      const { transfers } = planSettlements(bal);
      expect(transfers.length).toBeLessThanOrEqual(bal.filter((b) => b.amount !== 0n).length - 1);
      for (const v of applyTransfers(bal, transfers).values()) expect(v).toBe(0n);
    }
  });
});
