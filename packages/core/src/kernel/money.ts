/**
 * Currencies and money formatting (DESIGN.md §2). Amounts are integer minor units; the
 * exponent per currency comes from the ISO 4217 data of the `currency-codes` package (not a
 * hand-typed table); formatted strings follow Intl.NumberFormat (en-US), whose pattern per currency is learned once.
 */
import cc from 'currency-codes';
import { ToolError } from './errors.ts';
import type { Db } from './context.ts';

export interface CurrencyInfo {
  code: string;
  name: string;
  /** ISO 4217 minor-unit exponent: JPY 0, EUR 2, BHD 3. */
  minor_unit_exponent: number;
  numeric_code: string;
}

// Funds, precious metals and testing codes have no minor unit ("N.A." → NaN digits) and are not money for a ledger.
const NON_MONEY = new Set(['XAU', 'XAG', 'XPT', 'XPD', 'XTS', 'XXX', 'XBA', 'XBB', 'XBC', 'XBD', 'XDR', 'XSU', 'XUA']);

const byCode = new Map<string, CurrencyInfo>();
for (const r of cc.data) {
  if (NON_MONEY.has(r.code) || !Number.isInteger(r.digits)) continue;
  byCode.set(r.code, { code: r.code, name: r.currency, minor_unit_exponent: r.digits, numeric_code: r.number });
}

/**
 * All ISO 4217 currencies usable by a group, sorted by code. Codes are three letters A-Z, whose code-unit order is their
 * alphabetical order: no localeCompare here, which would load ICU's collation data (~10 MB of the Node binary mapped into
 * memory) at start-up.
 */
export const CURRENCIES: readonly CurrencyInfo[] = [...byCode.values()].sort((a, b) => (a.code < b.code ? -1 : a.code > b.code ? 1 : 0));
/** Publication date of the ISO 4217 list the data comes from. */
export const CURRENCY_DATA_DATE: string = cc.publishDate;

export function currencyInfo(code: string): CurrencyInfo | undefined {
  return byCode.get(code);
}

/** The currency or VALIDATION_ERROR naming `field`. */
export function requireCurrency(code: string, field = 'currency'): CurrencyInfo {
  const info = byCode.get(code);
  if (!info) {
    throw new ToolError('VALIDATION_ERROR', `${field}: "${code}" is not an ISO 4217 currency code`, {
      details: {
        issues: [{ path: field, message: `"${code}" is not an ISO 4217 currency code; see list_currencies`, code: 'unknown_currency' }],
      },
      suggestedAction: 'Use a code from list_currencies, e.g. EUR, USD, JPY.',
    });
  }
  return info;
}

/**
 * Formatters by currency. Each applies the currency's en-US display pattern (the text before and after the digits for a
 * positive and for a negative amount: "€" / "-€", "CHF\u00a0" / "-CHF\u00a0"; the grouping separator every three digits;
 * the decimal separator), learned once from Intl.NumberFormat, by string concatenation: Intl's `format` costs
 * microseconds a call under load, and every answer with a balance or an amount makes one or more.
 */
const formatters = new Map<string, (neg: boolean, integer: string, fraction: string) => string>();

/** The display pattern in `parts` (Intl's formatToParts of a decimal string), or undefined when they have another shape. */
function patternOf(parts: Intl.NumberFormatPart[]): { before: string; after: string; group: string; decimal: string } | undefined {
  let before = '';
  let after = '';
  let group = '';
  let decimal = '';
  let seenDigits = false;
  for (const part of parts) {
    if (part.type === 'integer' || part.type === 'fraction') seenDigits = true;
    else if (part.type === 'group') group = part.value;
    else if (part.type === 'decimal') decimal = part.value;
    else if (part.type === 'minusSign' || part.type === 'currency' || part.type === 'literal') {
      if (seenDigits) after += part.value;
      else before += part.value;
    } else return undefined;
  }
  return { before, after, group, decimal };
}

/** Digits with `group` between every three from the right: ("1234567", ",") → "1,234,567". */
function grouped(integer: string, group: string): string {
  if (integer.length <= 3) return integer;
  let out = integer.slice(0, integer.length % 3 || 3);
  for (let i = out.length; i < integer.length; i += 3) out += group + integer.slice(i, i + 3);
  return out;
}

/**
 * The formatter of `currency`: its display pattern applied by concatenation when that reproduces Intl exactly on a
 * set of probe amounts (signs, zero, one to sixteen digits); Intl itself otherwise.
 */
function formatterOf(currency: string, exp: number): (neg: boolean, integer: string, fraction: string) => string {
  const intl = new Intl.NumberFormat('en-US', { style: 'currency', currency, minimumFractionDigits: exp, maximumFractionDigits: exp });
  const slow = (neg: boolean, integer: string, fraction: string) =>
    intl.format(`${neg ? '-' : ''}${integer}${exp ? `.${fraction}` : ''}` as unknown as number);
  const digits = `1234567${exp ? `.${'8'.repeat(exp)}` : ''}`;
  const pos = patternOf(intl.formatToParts(digits as unknown as number));
  const neg = patternOf(intl.formatToParts(`-${digits}` as unknown as number));
  if (!pos || !neg || pos.group !== neg.group || pos.decimal !== neg.decimal) return slow;
  const fast = (isNeg: boolean, integer: string, fraction: string) => {
    const { before, after } = isNeg ? neg : pos;
    return `${before}${grouped(integer, pos.group)}${exp ? pos.decimal + fraction : ''}${after}`;
  };
  const fraction = exp ? '0'.repeat(exp - 1) + '5' : '';
  for (const integer of ['0', '1', '12', '123', '1234', '12345', '123456', '1000000', '9007199254740', '1234567890123456'])
    for (const isNeg of [false, true]) if (fast(isNeg, integer, fraction) !== slow(isNeg, integer, fraction)) return slow;
  return fast;
}

/**
 * Formats minor units as a display string in the en-US style of Intl.NumberFormat, e.g. (-1234, "EUR") → "-€12.34",
 * (1234, "JPY") → "¥1,234", (1234, "CHF") → "CHF 12.34" (a no-break space). Exact for any size (BigInt digits, no float).
 */
export function formatMinor(minor: number | bigint, currency: string): string {
  const exp = byCode.get(currency)?.minor_unit_exponent ?? 2;
  let format = formatters.get(currency);
  if (!format) formatters.set(currency, (format = formatterOf(currency, exp)));
  const big = BigInt(minor);
  const neg = big < 0n;
  const digits = (neg ? -big : big).toString().padStart(exp + 1, '0');
  return exp === 0 ? format(neg, digits, '') : format(neg, digits.slice(0, -exp), digits.slice(-exp));
}

/** Minor units → plain decimal string in the currency's exponent ("-12.34", "1200" for JPY), exact. */
export function minorToDecimal(minor: number | bigint, currency: string): string {
  const exp = byCode.get(currency)?.minor_unit_exponent ?? 2;
  const big = BigInt(minor);
  const abs = big < 0n ? -big : big;
  const s = abs.toString().padStart(exp + 1, '0');
  const out = exp === 0 ? s : `${s.slice(0, -exp)}.${s.slice(-exp)}`;
  return big < 0n ? `-${out}` : out;
}

/** BigInt from the database → number for JSON; refuses values beyond 2^53 instead of rounding. */
export function toNumber(v: bigint | number): number {
  const n = Number(v);
  if (!Number.isSafeInteger(n)) throw new ToolError('INTERNAL', 'amount exceeds the exact integer range');
  return n;
}

/**
 * An example of minor units in this currency, for error messages: "EUR: send 1450 for €14.50"
 * (1450 for ¥1,450 in JPY; 14500 for BHD 14.500).
 */
function minorUnitsExample(currency: string): string {
  const exp = byCode.get(currency)?.minor_unit_exponent ?? 2;
  const minor = exp === 0 ? 1450 : 1450 * 10 ** (exp - 2);
  return `${currency}: send ${minor} for ${formatMinor(minor, currency)}`;
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** `minorUnitsExample` for the currency of a group the agent belongs to; undefined otherwise. */
export async function amountExample(db: Db, groupId: string, agentId: string): Promise<string | undefined> {
  if (!UUID.test(groupId)) return undefined;
  const m = await db.membership.findFirst({ where: { groupId, agentId }, select: { group: { select: { currency: true } } } });
  return m ? minorUnitsExample(m.group.currency) : undefined;
}
