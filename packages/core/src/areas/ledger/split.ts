/**
 * Split math (DESIGN.md §2), pure and exact: BigInt minor units, no floats.
 *
 * Rounding rule — largest remainder with a rotating tie-break:
 *   ideal_i = |total| × w_i / Σw. Everyone first gets floor(ideal_i); the leftover units
 *   (fewer than the number of participants) go one each to the largest fractional remainders.
 *   Equal remainders are ordered by a rotation of the participant list (participants sorted by
 *   agent id) whose starting point is SHA-256(seed) mod n, seed = the expense id. So the same
 *   expense always rounds the same way, and across expenses the extra unit moves around
 *   instead of always landing on the same member. Negative totals (refunds) are allocated as
 *   |total| and negated, so a refund mirrors the expense exactly.
 *   Every share is within one minor unit of its ideal, and the shares sum exactly to the total.
 */
import { hash } from 'node:crypto';

/** 0 ≤ offset < n derived from the seed (the expense id). */
export function rotationOffset(seed: string, n: number): number {
  if (n <= 1) return 0;
  // One-shot hash (no Hash object per call): the same digest as createHash('sha256').update(seed).digest().
  const h = hash('sha256', seed, 'buffer');
  return h.readUInt32BE(0) % n;
}

/**
 * Allocates `total` over non-negative integer `weights` (at least one positive).
 * @returns one amount per weight, summing exactly to total, each within 1 unit of its ideal.
 */
export function allocate(total: bigint, weights: readonly bigint[], seed: string): bigint[] {
  const n = weights.length;
  if (n === 0) throw new Error('allocate: no participants');
  let W = 0n;
  for (const w of weights) {
    if (w < 0n) throw new Error('allocate: negative weight');
    W += w;
  }
  if (W === 0n) throw new Error('allocate: weights sum to zero');
  const neg = total < 0n;
  const T = neg ? -total : total;
  const out: bigint[] = new Array(n);
  const rems: bigint[] = new Array(n);
  let given = 0n;
  for (let i = 0; i < n; i++) {
    const p = T * weights[i]!;
    out[i] = p / W;
    rems[i] = p % W;
    given += out[i]!;
  }
  let leftover = Number(T - given);
  if (leftover > 0) {
    const offset = rotationOffset(seed, n);
    const order = [...Array(n).keys()].sort((a, b) => {
      const ra = rems[a]!;
      const rb = rems[b]!;
      if (ra !== rb) return ra > rb ? -1 : 1;
      return ((a - offset + n) % n) - ((b - offset + n) % n);
    });
    for (const i of order) {
      if (leftover === 0) break;
      out[i] = out[i]! + 1n;
      leftover--;
    }
  }
  return neg ? out.map((v) => -v) : out;
}

/** Fixed scale for percent and shares inputs: up to 6 decimals. */
const DECIMAL_SCALE = 6;
const SCALE = 10n ** BigInt(DECIMAL_SCALE);

/**
 * Parses a non-negative decimal (number or string, at most 6 decimals) into an integer scaled
 * by 10^6. Returns null when it is not such a decimal.
 */
export function parseScaled(v: number | string): bigint | null {
  const s = typeof v === 'number' ? (Number.isFinite(v) && v >= 0 ? numberToPlain(v) : '') : v.trim();
  const m = /^(\d{1,12})(?:\.(\d{1,6}))?$/.exec(s);
  if (!m) return null;
  return BigInt(m[1]!) * SCALE + BigInt((m[2] ?? '').padEnd(DECIMAL_SCALE, '0'));
}

function numberToPlain(n: number): string {
  const s = String(n);
  if (!/e/i.test(s)) return s;
  // e.g. 1e-7 → not representable with 6 decimals; 1e21 → too big anyway.
  return n.toFixed(12).replace(/0+$/, '').replace(/\.$/, '');
}

/** Canonical string of a scaled decimal, e.g. 33333333 → "33.333333", 50000000 → "50". */
export function scaledToString(v: bigint): string {
  const int = v / SCALE;
  const frac = (v % SCALE).toString().padStart(DECIMAL_SCALE, '0').replace(/0+$/, '');
  return frac ? `${int}.${frac}` : `${int}`;
}

export const HUNDRED_PERCENT = 100n * SCALE;

/**
 * Exchange-rate conversion: group-currency minor units for an amount in another currency.
 *   amount_minor = original_amount_minor × rate × 10^(group exponent − original exponent),
 *   rounded to the nearest group minor unit, halves away from zero (a "round half up" on the
 *   magnitude, so a refund converts to exactly the negative of the same expense).
 * `rate` is a decimal string: group-currency units per one original-currency unit, > 0,
 * at most 12 integer and 12 fractional digits. Returns null for a malformed or zero rate.
 */
export function convertAmount(originalMinor: bigint, rate: string, originalExponent: number, groupExponent: number): bigint | null {
  const m = /^(\d{1,12})(?:\.(\d{1,12}))?$/.exec(rate);
  if (!m) return null;
  const frac = m[2] ?? '';
  const rateInt = BigInt(m[1]! + frac);
  if (rateInt === 0n) return null;
  let num = (originalMinor < 0n ? -originalMinor : originalMinor) * rateInt;
  let den = 10n ** BigInt(frac.length);
  const shift = groupExponent - originalExponent;
  if (shift >= 0) num *= 10n ** BigInt(shift);
  else den *= 10n ** BigInt(-shift);
  let q = num / den;
  if ((num % den) * 2n >= den) q += 1n;
  return originalMinor < 0n ? -q : q;
}

export interface ShareLine {
  agentId: string;
  paidMinor: bigint;
  owedMinor: bigint;
}

/** A debt edge: `debtorId` owes `creditorId` `amount` (> 0). */
export interface DebtEdge {
  debtorId: string;
  creditorId: string;
  amount: bigint;
}

/**
 * Pairwise debts of one ledger entry ("who owes whom" before simplification).
 * Each person's net = paid − owed. Debtors (net < 0) and creditors (net > 0), each sorted by
 * agent id, are laid end to end on two number lines and matched where their intervals overlap
 * (the north-west-corner rule). For the usual single payer this is exactly "each participant
 * owes the payer their share"; with several payers the debts are matched in agent-id order.
 * Deterministic, exact, at most (#debtors + #creditors − 1) edges, and for every person the
 * edges sum to their net. The same rule in SQL lives in verify.ts (PAIR_SQL).
 */
export function pairEdges(lines: readonly ShareLine[]): DebtEdge[] {
  const net = new Map<string, bigint>();
  for (const l of lines) net.set(l.agentId, (net.get(l.agentId) ?? 0n) + l.paidMinor - l.owedMinor);
  const nets = [...net.keys()].sort().map((key) => ({ key, amount: net.get(key)! }));
  return northWestCorner(nets).map((t) => ({ debtorId: t.from, creditorId: t.to, amount: t.amount }));
}

/**
 * The north-west-corner rule: the debtors (amount < 0) and creditors (amount > 0) of `nets`, each
 * kept in the given order, are laid end to end on two number lines and matched where their
 * intervals overlap. Shared by pairEdges (pair debts of one entry) and settle.ts (transfers
 * inside a zero-sum block). Sort `nets` by key first for a deterministic result.
 */
export function northWestCorner(nets: ReadonlyArray<{ key: string; amount: bigint }>): Array<{ from: string; to: string; amount: bigint }> {
  const debtors = nets.filter((m) => m.amount < 0n).map((m) => ({ key: m.key, left: -m.amount }));
  const creditors = nets.filter((m) => m.amount > 0n).map((m) => ({ key: m.key, left: m.amount }));
  const out: Array<{ from: string; to: string; amount: bigint }> = [];
  let i = 0;
  let j = 0;
  while (i < debtors.length && j < creditors.length) {
    const d = debtors[i]!;
    const c = creditors[j]!;
    const amt = d.left < c.left ? d.left : c.left;
    if (amt > 0n) out.push({ from: d.key, to: c.key, amount: amt });
    d.left -= amt;
    c.left -= amt;
    if (d.left === 0n) i++;
    if (c.left === 0n) j++;
  }
  return out;
}
