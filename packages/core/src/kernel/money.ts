/**
 * Currencies and money formatting (DESIGN.md §2). Amounts are integer minor units; the
 * exponent per currency comes from the ISO 4217 data of the `currency-codes` package (not a
 * hand-typed table); formatted strings come from Intl.NumberFormat.
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

const formatters = new Map<string, Intl.NumberFormat>();

/** Formats minor units as a display string, e.g. (-1234, "EUR") → "-€12.34". Exact for |minor| ≤ 2^53. */
export function formatMinor(minor: number | bigint, currency: string): string {
  const exp = byCode.get(currency)?.minor_unit_exponent ?? 2;
  let f = formatters.get(currency);
  if (!f) {
    f = new Intl.NumberFormat('en-US', { style: 'currency', currency, minimumFractionDigits: exp, maximumFractionDigits: exp });
    formatters.set(currency, f);
  }
  const big = BigInt(minor);
  const neg = big < 0n;
  const abs = neg ? -big : big;
  const scale = 10n ** BigInt(exp);
  // Intl formats a decimal string exactly (no float rounding) when given a string.
  const str = exp === 0 ? abs.toString() : `${abs / scale}.${(abs % scale).toString().padStart(exp, '0')}`;
  return f.format(((neg ? '-' : '') + str) as unknown as number);
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
