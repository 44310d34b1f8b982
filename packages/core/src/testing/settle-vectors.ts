/**
 * Adversarial balance vectors for the settlement planner (settle.ts), shared by its tests and
 * the benchmark (apps/server/bench/settle.ts). Deterministic: the same (n, seed) always gives the
 * same vectors. Each vector has exactly n non-zero integer balances (minor units) summing to zero,
 * every |balance| ≤ MAX_MAGNITUDE.
 *
 * Families (hard for a search over zero-sum sub-groups in different ways):
 * - small-values: values in ±1…±3 (very many zero-sum subsets, many equal values)
 * - small-no-pairs: values 1…7, each magnitude on one side only (many zero-sum subsets that no
 *   pairing of opposites removes)
 * - two-sizes: a × (+p·s) and b × (−q·s) with a·p = b·q (all equal on each side; many zero-sum subsets)
 * - unit-pairs: ±1 only (all members pair off)
 * - opposite-pairs: n/2 pairs {x, −x} of huge distinct x, shuffled
 * - no-subset: random magnitudes up to 10^12, no zero-sum proper subset (one block)
 * - binary: 1, 2, 4, …, 2^(n−2) and −(2^(n−1) − 1) (one block, all distinct)
 * - triples: zero-sum triples {a, b, −(a+b)} of huge random a, b (no opposite pairs)
 * - small-triples: the same with a, b in 1…9 (triples overlap with many other zero-sum subsets)
 * - ten-ten: n/2 debtors and n/2 creditors, values 1…50
 * - one-debtor / one-creditor: n − 1 on one side, one on the other
 * - max-magnitude: ±10^12 and values close to it
 */

/** Largest |balance| in the vectors (10^12 minor units: 10 billion in a 2-decimal currency). */
const MAX_MAGNITUDE = 10n ** 12n;

interface BalanceVector {
  /** family and seed, e.g. "triples#3" */
  name: string;
  /** n non-zero balances summing to zero */
  amounts: bigint[];
}

/** mulberry32: a small seeded generator of 32-bit values; returns [0, 1) with 53 random bits. */
function random(seed: number): () => number {
  let s = seed >>> 0;
  const next32 = () => {
    s = (s + 0x6d2b79f5) >>> 0;
    let t = s;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return (t ^ (t >>> 14)) >>> 0;
  };
  return () => ((next32() >>> 5) * 67108864 + (next32() >>> 6)) / 9007199254740992;
}

type Rng = () => number;
/** Uniform integer in [lo, hi] (inclusive; hi − lo < 2^53). */
const int = (rng: Rng, lo: bigint, hi: bigint): bigint => lo + BigInt(Math.floor(rng() * Number(hi - lo + 1n)));

function shuffle<T>(rng: Rng, xs: T[]): T[] {
  for (let i = xs.length - 1; i > 0; i--) {
    const j = Math.floor(rng() * (i + 1));
    [xs[i], xs[j]] = [xs[j]!, xs[i]!];
  }
  return xs;
}

/**
 * n − 1 values drawn by `draw` with the sign that moves the running sum towards zero, and a last
 * value closing the sum (redrawn until it is non-zero and within `max`).
 */
function closing(rng: Rng, n: number, max: bigint, draw: () => bigint): bigint[] {
  for (;;) {
    const xs: bigint[] = [];
    let sum = 0n;
    for (let i = 0; i < n - 1; i++) {
      const m = draw();
      const x = sum > 0n || (sum === 0n && rng() < 0.5) ? -m : m;
      xs.push(x);
      sum += x;
    }
    if (sum !== 0n && sum <= max && -sum <= max) return [...xs, -sum];
  }
}

/** Zero-sum triples {a, b, −(a+b)} with a, b in [lo, hi]; n mod 3 leftover members join the last block. */
function triples(rng: Rng, n: number, lo: bigint, hi: bigint): bigint[] {
  const out: bigint[] = [];
  const blocks = Math.floor(n / 3);
  for (let k = 0; k < blocks; k++) {
    const extra = k === blocks - 1 ? n - 3 * blocks : 0;
    // the closing member stays within 2·hi
    const top = (hi * 2n) / BigInt(2 + extra);
    const part = Array.from({ length: 2 + extra }, () => int(rng, lo < top ? lo : 1n, top) * (rng() < 0.5 ? -1n : 1n));
    const sum = part.reduce((s, x) => s + x, 0n);
    if (sum === 0n) part[0]! += part[0]! > 0n ? 1n : -1n;
    out.push(...part, -part.reduce((s, x) => s + x, 0n));
  }
  return out;
}

const FAMILIES: Record<string, (rng: Rng, n: number) => bigint[]> = {
  'small-values': (rng, n) => closing(rng, n, 3n, () => int(rng, 1n, 3n)),
  'small-no-pairs': (rng, n) => {
    for (;;) {
      // magnitudes 1…7 split between creditors and debtors
      const sides = Array.from({ length: 7 }, () => rng() < 0.5);
      const pos = [1n, 2n, 3n, 4n, 5n, 6n, 7n].filter((_, i) => sides[i]);
      const neg = [1n, 2n, 3n, 4n, 5n, 6n, 7n].filter((_, i) => !sides[i]);
      if (!pos.length || !neg.length) continue;
      const xs: bigint[] = [];
      let sum = 0n;
      for (let i = 0; i < n - 1; i++) {
        const from = sum > 0n ? neg : sum < 0n ? pos : rng() < 0.5 ? neg : pos;
        const x = from[Math.floor(rng() * from.length)]!;
        xs.push(from === neg ? -x : x);
        sum += xs[i]!;
      }
      // the closing member must be one of the side's magnitudes too
      if ((-sum > 0n && pos.includes(-sum)) || (sum > 0n && neg.includes(sum))) return [...xs, -sum];
    }
  },
  'two-sizes': (rng, n) => {
    // a·p = b·q with a + b = n: take p = b, q = a (scaled), e.g. 15 × (+5s), 5 × (−15s) at n = 20.
    const b = Math.max(1, Math.round(n / 4) + Math.floor(rng() * 2));
    const a = n - b;
    const s = int(rng, 1n, MAX_MAGNITUDE / BigInt(a));
    return [...Array<bigint>(a).fill(BigInt(b) * s), ...Array<bigint>(b).fill(-BigInt(a) * s)];
  },
  'unit-pairs': (_rng, n) => {
    const half = Math.floor(n / 2);
    // odd n: one +2 balanced by two −1s
    return n % 2
      ? [...Array<bigint>(half - 1).fill(1n), 2n, ...Array<bigint>(half + 1).fill(-1n)]
      : [...Array<bigint>(half).fill(1n), ...Array<bigint>(half).fill(-1n)];
  },
  'opposite-pairs': (rng, n) => {
    const xs: bigint[] = [];
    for (let i = 0; i < Math.floor(n / 2); i++) {
      const x = int(rng, 1n, MAX_MAGNITUDE);
      xs.push(x, -x);
    }
    if (n % 2) {
      const x = xs.pop()!;
      const y = xs.pop()!;
      const a = int(rng, 1n, y - 1n);
      xs.push(a, y - a, x);
    }
    return xs;
  },
  'no-subset': (rng, n) => closing(rng, n, MAX_MAGNITUDE, () => int(rng, MAX_MAGNITUDE / 1000n, MAX_MAGNITUDE / 2n)),
  binary: (_rng, n) => [...Array.from({ length: n - 1 }, (_, i) => 1n << BigInt(i)), -((1n << BigInt(n - 1)) - 1n)],
  triples: (rng, n) => triples(rng, n, MAX_MAGNITUDE / 10n, MAX_MAGNITUDE / 2n),
  'small-triples': (rng, n) => triples(rng, n, 1n, 9n),
  'ten-ten': (rng, n) => {
    for (;;) {
      const debt = Array.from({ length: Math.ceil(n / 2) }, () => int(rng, 1n, 50n));
      const cred = Array.from({ length: Math.floor(n / 2) - 1 }, () => int(rng, 1n, 50n));
      const last = debt.reduce((s, x) => s + x, 0n) - cred.reduce((s, x) => s + x, 0n);
      if (last > 0n) return [...debt.map((x) => -x), ...cred, last];
    }
  },
  'one-debtor': (rng, n) => {
    const cred = Array.from({ length: n - 1 }, () => int(rng, 1n, MAX_MAGNITUDE / BigInt(n)));
    return [...cred, -cred.reduce((s, x) => s + x, 0n)];
  },
  'one-creditor': (rng, n) => {
    const debt = Array.from({ length: n - 1 }, () => int(rng, 1n, 1000n));
    return [...debt.map((x) => -x), debt.reduce((s, x) => s + x, 0n)];
  },
  'max-magnitude': (rng, n) => closing(rng, n, MAX_MAGNITUDE, () => MAX_MAGNITUDE - int(rng, 0n, 3n)),
};

/**
 * `perFamily` vectors of each family with n non-zero balances (n ≥ 3), in a shuffled order (the
 * planner must not depend on it). Family and seed are in each vector's name.
 */
export function adversarialVectors(n: number, perFamily: number): BalanceVector[] {
  if (n < 3) throw new Error('adversarialVectors: n must be at least 3');
  const out: BalanceVector[] = [];
  for (const [family, make] of Object.entries(FAMILIES)) {
    for (let seed = 0; seed < perFamily; seed++) {
      let h = n * 1000 + seed;
      for (const c of family) h = Math.imul(h ^ c.charCodeAt(0), 0x9e3779b1);
      const rng = random(h);
      out.push({ name: `${family}#${seed}`, amounts: shuffle(rng, make(rng, n)) });
    }
  }
  return out;
}
