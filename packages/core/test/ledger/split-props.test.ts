/**
 * Property tests of the adjustment split and itemized bills against a brute-force reference:
 * exact rationals for every ideal share, every rounding of the ideals (each share the floor or the
 * ceiling, summing to the total) enumerated, and the largest-remainder rule checked on the result.
 */
import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { owedOf, itemizedOwed, type Itemization, type SplitPart } from '../../src/areas/expenses/itemized.ts';

/** An exact rational num/den (den > 0). */
type Q = { n: bigint; d: bigint };
const q = (n: bigint, d = 1n): Q => (d < 0n ? { n: -n, d: -d } : { n, d });
const add = (a: Q, b: Q): Q => q(a.n * b.d + b.n * a.d, a.d * b.d);
const mul = (a: Q, b: Q): Q => q(a.n * b.n, a.d * b.d);
const floorQ = (a: Q): bigint => (a.n >= 0n ? a.n / a.d : -((-a.n + a.d - 1n) / a.d));
/** Fractional part of a rational, as a rational in [0, 1). */
const frac = (a: Q): Q => q(a.n - floorQ(a) * a.d, a.d);
const cmp = (a: Q, b: Q): number => {
  const x = a.n * b.d - b.n * a.d;
  return x < 0n ? -1 : x > 0n ? 1 : 0;
};

/** Every vector of floors/ceilings of `ideals` summing to `total` (the brute-force set; small n only). */
function allRoundings(ideals: Q[], total: bigint): bigint[][] {
  const out: bigint[][] = [];
  const walk = (i: number, acc: bigint[], sum: bigint) => {
    if (i === ideals.length) {
      if (sum === total) out.push(acc);
      return;
    }
    const f = floorQ(ideals[i]!);
    const opts = frac(ideals[i]!).n === 0n ? [f] : [f, f + 1n];
    for (const v of opts) walk(i + 1, [...acc, v], sum + v);
  };
  walk(0, [], 0n);
  return out;
}

/** Checks `got` against the reference: one of the roundings, and the extra units went to the largest remainders. */
function expectLargestRemainder(got: bigint[], ideals: Q[], total: bigint): void {
  const set = allRoundings(ideals, total).map((v) => v.join(','));
  expect(set).toContain(got.join(','));
  ideals.forEach((a, i) =>
    ideals.forEach((b, j) => {
      const upI = got[i]! > floorQ(a);
      const downJ = got[j]! === floorQ(b) && frac(b).n !== 0n;
      if (upI && downJ) expect(cmp(frac(a), frac(b))).toBeGreaterThanOrEqual(0);
    }),
  );
}

const ID = (i: number) => `00000000-0000-4000-8000-${String(i).padStart(12, '0')}`;
const seed = fc.uuid();

describe('adjustment split', () => {
  const arb = fc.record({
    amount: fc.integer({ min: 1, max: 1_000_000 }),
    adj: fc.array(fc.integer({ min: -500, max: 5000 }), { minLength: 1, maxLength: 7 }),
    seed,
  });
  it('each pays their adjustment plus an equal part of the rest: sum exact, within one unit, largest remainder, deterministic', () => {
    fc.assert(
      fc.property(arb, ({ amount, adj, seed }) => {
        const parts: SplitPart[] = adj.map((a, i) => ({ agentId: ID(i), value: String(a) }));
        const A = BigInt(amount);
        const got = owedOf(A, 'adjustment', parts, seed);
        const n = BigInt(adj.length);
        const rest = A - adj.reduce((s, v) => s + BigInt(v), 0n);
        const ideals = adj.map((a) => add(q(BigInt(a)), q(rest, n)));
        expect(got.reduce((s, v) => s + v, 0n)).toBe(A);
        expectLargestRemainder(got, ideals, A);
        expect(owedOf(A, 'adjustment', parts, seed)).toEqual(got);
      }),
      { numRuns: 300 },
    );
  });
  it('the equal part of a negative rest (a refund) mirrors the positive one', () => {
    const parts = [0, 1, 2].map((i) => ({ agentId: ID(i), value: '0' }));
    expect(owedOf(-100n, 'adjustment', parts, 's')).toEqual(owedOf(100n, 'adjustment', parts, 's').map((v) => -v));
  });
});

/** Item splits the reference can compute exactly. */
const itemArb = (members: number) =>
  fc.oneof(
    fc.record({ method: fc.constant('equal' as const), who: fc.subarray([...Array(members).keys()], { minLength: 1 }) }),
    fc.record({
      method: fc.constant('shares' as const),
      w: fc.array(fc.integer({ min: 0, max: 5 }), { minLength: members, maxLength: members }).filter((w) => w.some((x) => x > 0)),
    }),
    fc.record({
      method: fc.constant('adjustment' as const),
      adj: fc.array(fc.integer({ min: 0, max: 50 }), { minLength: members, maxLength: members }),
    }),
  );

/** An adjustment split of `amount` gives every member adj + (amount − Σ adj) / members ≥ 0. */
function nonNegativeAdjusted(amount: number, adj: number[], members: number): boolean {
  const rest = amount - adj.reduce((a, b) => a + b, 0);
  return adj.every((x) => members * x + rest >= 0);
}

function referenceItemIdeals(amount: bigint, s: any, members: number): Map<number, Q> {
  const m = new Map<number, Q>();
  if (s.method === 'equal') for (const i of s.who) m.set(i, q(amount, BigInt(s.who.length)));
  else if (s.method === 'shares') {
    const W = BigInt(s.w.reduce((a: number, b: number) => a + b, 0));
    s.w.forEach((x: number, i: number) => m.set(i, q(amount * BigInt(x), W)));
  } else {
    const rest = amount - BigInt(s.adj.reduce((a: number, b: number) => a + b, 0));
    s.adj.forEach((x: number, i: number) => m.set(i, add(q(BigInt(x)), q(rest, BigInt(members)))));
  }
  return m;
}

function toParts(s: any, members: number): SplitPart[] {
  if (s.method === 'equal') return s.who.map((i: number) => ({ agentId: ID(i), value: '1' }));
  if (s.method === 'shares') return s.w.map((x: number, i: number) => ({ agentId: ID(i), value: String(x) }));
  return [...Array(members).keys()].map((i) => ({ agentId: ID(i), value: String(s.adj[i]) }));
}

describe('itemized bills', () => {
  const arb = fc.integer({ min: 1, max: 5 }).chain((members) =>
    fc.record({
      members: fc.constant(members),
      // Only bills the tool accepts: resolveItems refuses an item that gives a member a negative part (an adjustment
      // split whose adjustments exceed the item: the rest shared equally would be negative).
      items: fc.array(
        fc
          .record({ amount: fc.integer({ min: 100, max: 100_000 }), split: itemArb(members) })
          .filter(({ amount, split }) => split.method !== 'adjustment' || nonNegativeAdjusted(amount, split.adj, members)),
        { minLength: 1, maxLength: 6 },
      ),
      tax: fc.integer({ min: -50, max: 5000 }),
      tip: fc.integer({ min: 0, max: 3000 }),
      seed,
    }),
  );
  it('totals: sum exact to items + tax + tip, each the largest-remainder rounding of T × subtotal / S; items: each rounded alone', () => {
    fc.assert(
      fc.property(arb, ({ members, items, tax, tip, seed }) => {
        const it: Itemization = {
          items: items.map((x, i) => ({
            description: `i${i}`,
            amountMinor: BigInt(x.amount),
            method: x.split.method,
            participants: toParts(x.split, members),
          })),
          taxMinor: BigInt(tax),
          tipMinor: BigInt(tip),
        };
        const S = items.reduce((s, x) => s + BigInt(x.amount), 0n);
        const T = S + BigInt(tax) + BigInt(tip);
        // Reference: subtotals from each item's exact ideals, then T × subtotal / S.
        const sub = new Map<number, Q>();
        items.forEach((x) => {
          for (const [i, v] of referenceItemIdeals(BigInt(x.amount), x.split, members)) sub.set(i, add(sub.get(i) ?? q(0n), v));
        });
        const who = [...sub.keys()].sort((a, b) => a - b);
        const ideals = who.map((i) => mul(sub.get(i)!, q(T, S)));
        const { owed, itemShares } = itemizedOwed(it, seed);
        const got = who.map((i) => owed.get(ID(i))!);
        expect(got.reduce((s, v) => s + v, 0n)).toBe(T);
        expectLargestRemainder(got, ideals, T);
        items.forEach((x, k) => {
          const ref = referenceItemIdeals(BigInt(x.amount), x.split, members);
          const ids = [...ref.keys()].sort((a, b) => a - b);
          const shares = ids.map((i) => itemShares[k]!.get(ID(i))!);
          expect(shares.reduce((s, v) => s + v, 0n)).toBe(BigInt(x.amount));
          expectLargestRemainder(
            shares,
            ids.map((i) => ref.get(i)!),
            BigInt(x.amount),
          );
        });
        const again = itemizedOwed({ ...it, items: it.items.map((i) => ({ ...i, participants: [...i.participants].reverse() })) }, seed);
        expect([...again.owed].sort()).toEqual([...owed].sort());
      }),
      { numRuns: 300 },
    );
  });
});
