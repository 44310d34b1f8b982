/** Split math, property-based (issue 3 "Proof"): sums exact, ≤ 1 unit from ideal, tie-break rotates. */
import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { randomUUID } from 'node:crypto';
import { allocate, convertAmount, pairEdges, parseScaled, rotationOffset } from '../../src/areas/ledger/split.ts';

const MAX = 1_000_000_000_000n;

describe('allocate (largest remainder, rotating tie-break)', () => {
  it('sums exactly and keeps every share within one minor unit of its ideal', () => {
    fc.assert(
      fc.property(
        fc.bigInt({ min: -MAX, max: MAX }),
        fc.array(fc.bigInt({ min: 0n, max: 1_000_000_000n }), { minLength: 1, maxLength: 40 }).filter((w) => w.some((x) => x > 0n)),
        fc.uuid(),
        (total, weights, seed) => {
          const out = allocate(total, weights, seed);
          expect(out.reduce((s, v) => s + v, 0n)).toBe(total);
          const W = weights.reduce((s, v) => s + v, 0n);
          out.forEach((v, i) => {
            // |v − total·w/W| < 1  ⇔  |v·W − total·w| < W
            const diff = v * W - total * weights[i]!;
            expect(diff < 0n ? -diff : diff).toBeLessThan(W);
          });
        },
      ),
      { numRuns: 2000 },
    );
  });

  it('is deterministic for the same seed and mirrors refunds exactly', () => {
    fc.assert(
      fc.property(fc.bigInt({ min: 1n, max: MAX }), fc.integer({ min: 1, max: 30 }), fc.uuid(), (total, n, seed) => {
        const w = Array.from({ length: n }, () => 1n);
        expect(allocate(total, w, seed)).toEqual(allocate(total, w, seed));
        expect(allocate(-total, w, seed)).toEqual(allocate(total, w, seed).map((v) => -v));
      }),
    );
  });

  it('equal shares differ by at most one unit', () => {
    fc.assert(
      fc.property(fc.bigInt({ min: -MAX, max: MAX }), fc.integer({ min: 1, max: 50 }), fc.uuid(), (total, n, seed) => {
        const out = allocate(
          total,
          Array.from({ length: n }, () => 1n),
          seed,
        );
        const max = out.reduce((m, v) => (v > m ? v : m));
        const min = out.reduce((m, v) => (v < m ? v : m));
        expect(max - min <= 1n).toBe(true);
      }),
    );
  });

  it('rotates the extra unit across expenses (tie-break seeded by the expense id)', () => {
    for (const n of [2, 3, 4, 7]) {
      const counts = new Array(n).fill(0);
      for (let k = 0; k < 400; k++) {
        const out = allocate(
          1n,
          Array.from({ length: n }, () => 1n),
          randomUUID(),
        );
        counts[out.findIndex((v) => v === 1n)]++;
      }
      // Everyone gets the extra cent sometimes, roughly evenly (uniform expectation 400/n).
      for (const c of counts) expect(c).toBeGreaterThan(400 / n / 3);
    }
    // The rotation start is the seed's hash mod n: different seeds, different starts.
    const offsets = new Set(Array.from({ length: 50 }, () => rotationOffset(randomUUID(), 5)));
    expect(offsets.size).toBe(5);
  });

  it('breaks ties only among equal remainders (a larger remainder always wins)', () => {
    // 10 over weights 1,1,1 → 3.33 each, one extra; over 2,1 shares of 3 → 6.67 / 3.33: the 0.67 wins.
    for (let k = 0; k < 50; k++) expect(allocate(10n, [2n, 1n], randomUUID())).toEqual([7n, 3n]);
  });
});

describe('decimal inputs and exchange rates', () => {
  it('parses percentages and shares exactly', () => {
    expect(parseScaled('33.333333')).toBe(33_333_333n);
    expect(parseScaled(12.5)).toBe(12_500_000n);
    expect(parseScaled('1.0000001')).toBeNull();
    expect(parseScaled(-1)).toBeNull();
  });
  it('converts with round half away from zero', () => {
    // 10.00 USD at 0.9 → 9.00 EUR
    expect(convertAmount(1000n, '0.9', 2, 2)).toBe(900n);
    // 1 JPY-minor (¥1) at 0.0065 EUR → 0.0065 € = 0.65 cent → 1 cent
    expect(convertAmount(1n, '0.0065', 0, 2)).toBe(1n);
    // 0.5 cent rounds away from zero, both signs
    expect(convertAmount(1n, '0.5', 2, 2)).toBe(1n);
    expect(convertAmount(-1n, '0.5', 2, 2)).toBe(-1n);
    expect(convertAmount(1n, '0.4999', 2, 2)).toBe(0n);
    // EUR → BHD (3 decimals): 12.34 EUR at 0.41 = 5.0594 BHD → 5.059
    expect(convertAmount(1234n, '0.41', 2, 3)).toBe(5059n);
    expect(convertAmount(1000n, '0', 2, 2)).toBeNull();
    expect(convertAmount(1000n, '1e3', 2, 2)).toBeNull();
  });
});

describe('pairwise debts of one expense', () => {
  it("sum to each person's net and use at most d + c − 1 edges", () => {
    fc.assert(
      fc.property(
        fc.array(fc.record({ paid: fc.bigInt({ min: -1000n, max: 1000n }), owed: fc.bigInt({ min: -1000n, max: 1000n }) }), {
          minLength: 1,
          maxLength: 8,
        }),
        (rows) => {
          // Balance the rows so paid and owed sums match.
          const lines = rows.map((r, i) => ({ agentId: `00000000-0000-0000-0000-00000000000${i}`, paidMinor: r.paid, owedMinor: r.owed }));
          const diff = lines.reduce((s, l) => s + l.paidMinor - l.owedMinor, 0n);
          lines[0]!.owedMinor += diff;
          const edges = pairEdges(lines);
          const net = new Map<string, bigint>();
          for (const e of edges) {
            expect(e.amount > 0n).toBe(true);
            net.set(e.creditorId, (net.get(e.creditorId) ?? 0n) + e.amount);
            net.set(e.debtorId, (net.get(e.debtorId) ?? 0n) - e.amount);
          }
          let d = 0;
          let c = 0;
          for (const l of lines) {
            const n = l.paidMinor - l.owedMinor;
            expect(net.get(l.agentId) ?? 0n).toBe(n);
            if (n < 0n) d++;
            if (n > 0n) c++;
          }
          expect(edges.length).toBeLessThanOrEqual(Math.max(0, d + c - 1));
        },
      ),
    );
  });
});
