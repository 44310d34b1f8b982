/**
 * The cells of an imported CSV row (import-parse.ts): amounts as minor units, text cleaned, the group's
 * currency by code or symbol, and the reconstruction of paid/owed from a row's amounts (Splitwise nets,
 * Spliit shares).
 */
import { allocate, type ShareLine } from '../ledger/split.ts';
import { CONTROL_CHARS } from '../../kernel/text.ts';

export const STANDARD = new Set([
  'date',
  'description',
  'category',
  'cost',
  'currency',
  'original cost',
  'original currency',
  'conversion rate',
  'split mode',
  'paid by',
  'split with',
  'is reimbursement',
  'notes',
  'title',
  'amount',
]);

/** "12.34" / "-1234" → minor units at `exponent`; null when not an exact decimal at that precision. */
export function decimalToMinor(s: string, exponent: number): bigint | null {
  const t = s.trim().replace(/^\+/, '');
  const m = /^(-)?(\d+)(?:\.(\d+))?$/.exec(t);
  if (!m) return null;
  let frac = m[3] ?? '';
  if (frac.length > exponent) {
    if (!/^0*$/.test(frac.slice(exponent))) return null;
    frac = frac.slice(0, exponent);
  }
  const v = BigInt(m[2]! + frac.padEnd(exponent, '0'));
  return m[1] ? -v : v;
}

export const clean = (s: string, max: number) => s.replace(CONTROL_CHARS, ' ').trim().slice(0, max);

/**
 * Paid and owed per person from a row's nets (see the header of import-parse.ts): with a named payer,
 * the payer paid the cost; without, the people with positive nets are the payers and the part of the
 * cost not covered by others is their own share, allocated in proportion to their nets (largest
 * remainder, tie-break seeded by `seed`). `cost` and the result are minor units; a negative cost is a refund.
 */
export function paidOwedFromNets(
  nets: Map<string, bigint>,
  cost: bigint,
  payer: { agentId: string } | { error: string } | undefined,
  seed: string,
): { all: Array<{ agentId: string; paidMinor: bigint; owedMinor: bigint }>; amount: bigint } | { error: string } {
  let C = cost;
  const sign = C < 0n ? -1n : 1n;
  C *= sign;
  const lines = new Map<string, ShareLine>();
  const add = (id: string, paid: bigint, owed: bigint) => {
    const l = lines.get(id) ?? { agentId: id, paidMinor: 0n, owedMinor: 0n };
    l.paidMinor += paid;
    l.owedMinor += owed;
    lines.set(id, l);
  };
  if (payer) {
    if ('error' in payer) return payer;
    for (const [id, v] of nets) if (id !== payer.agentId) add(id, 0n, -v * sign);
    add(payer.agentId, C, C - (nets.get(payer.agentId) ?? 0n) * sign);
  } else {
    const signed = [...nets].map(([id, v]) => [id, v * sign] as const).sort(([a], [b]) => (a < b ? -1 : 1));
    const pos = signed.filter(([, v]) => v > 0n);
    const neg = signed.filter(([, v]) => v < 0n);
    const P = pos.reduce((s, [, v]) => s + v, 0n);
    const R = C - P;
    if (R < 0n || !pos.length) return { error: `the amounts owed to payers (${P}) exceed the cost (${C}) in minor units` };
    const own = allocate(
      R,
      pos.map(([, v]) => v),
      seed,
    );
    pos.forEach(([id, v], k) => add(id, v + own[k]!, own[k]!));
    for (const [id, v] of neg) add(id, 0n, -v);
  }
  const all = [...lines.values()].map((l) => ({ agentId: l.agentId, paidMinor: l.paidMinor * sign, owedMinor: l.owedMinor * sign }));
  return { all, amount: C * sign };
}

const symbolFormats = new Map<string, string[]>();

/** True for the group's ISO code (any case) or its currency symbol ("€", "US$", "$" for USD). */
export function isGroupCurrency(cell: string, groupCurrency: string): boolean {
  if (cell.toUpperCase() === groupCurrency) return true;
  let symbols = symbolFormats.get(groupCurrency);
  if (!symbols) {
    symbols = (['symbol', 'narrowSymbol'] as const).map(
      (currencyDisplay) =>
        new Intl.NumberFormat('en-US', { style: 'currency', currency: groupCurrency, currencyDisplay })
          .formatToParts(0)
          .find((p) => p.type === 'currency')?.value ?? groupCurrency,
    );
    symbolFormats.set(groupCurrency, symbols);
  }
  return symbols.includes(cell);
}

/**
 * One row of Spliit's own export: `shares` per person (positive for the payer, negative for the
 * others, minor units), `cost` in minor units. Returns the row as nets (paid − owed, summing to
 * zero) for the expense reconstruction, or as a payment for a reimbursement.
 */
export function fromShares(
  shares: Map<string, bigint>,
  cost: bigint,
  reimbursement: boolean,
  otherPerson: string | undefined,
): { kind: 'nets'; nets: Map<string, bigint> } | { kind: 'payment'; payerId: string; payeeId: string; amount: bigint } | { error: string } {
  const sign = cost < 0n ? -1n : 1n;
  const C = cost * sign;
  const signed = [...shares].map(([id, v]) => [id, v * sign] as const).sort(([a], [b]) => (a < b ? -1 : 1));
  const payers = signed.filter(([, v]) => v > 0n);
  if (payers.length > 1) return { error: 'more than one person has a positive amount; in a Spliit export only the payer does' };
  // The payer had no share: their column shows 0, so they are known only in a two-person group.
  const payerId = payers[0]?.[0] ?? otherPerson;
  if (!payerId)
    return {
      error:
        'cannot tell who paid: the payer has no share in this row, so the export shows 0 for them; add a "Paid By" column with their name',
    };
  if (reimbursement) {
    const payees = signed.filter(([id, v]) => v < 0n && id !== payerId);
    if (payees.length !== 1 || payers.length)
      return { error: 'a reimbursement row needs exactly one person reimbursed and no share for the payer' };
    return { kind: 'payment', payerId, payeeId: payees[0]![0], amount: -payees[0]![1] * sign };
  }
  const owed = new Map(signed.map(([id, v]) => [id, v < 0n ? -v : v]));
  let total = 0n;
  for (const v of owed.values()) total += v;
  const diff = C - total;
  const tolerance = BigInt(owed.size);
  if (diff > tolerance || diff < -tolerance) return { error: `the shares sum to ${total} minor units but the cost is ${C}` };
  if (diff !== 0n) {
    // Rounding to the cent: the payer's own share absorbs the difference, else the largest share (lowest id on a tie).
    const [absorber] = owed.has(payerId)
      ? [payerId]
      : [...owed].sort(([a, x], [b, y]) => (x === y ? (a < b ? -1 : 1) : x > y ? -1 : 1))[0]!;
    owed.set(absorber, owed.get(absorber)! + diff);
  }
  const nets = new Map<string, bigint>();
  for (const [id, o] of owed) nets.set(id, ((id === payerId ? C : 0n) - o) * sign);
  if (!owed.has(payerId)) nets.set(payerId, C * sign);
  for (const [id, v] of nets) if (v === 0n) nets.delete(id);
  return { kind: 'nets', nets };
}
