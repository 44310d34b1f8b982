import { describe, expect, it } from 'vitest';
import { CURRENCIES, formatMinor } from '../../src/kernel/money.ts';

/** What formatMinor answered before its fast path: Intl.NumberFormat (en-US, currency style) on the exact decimal string. */
function intlFormat(minor: bigint, currency: string, exp: number): string {
  const f = new Intl.NumberFormat('en-US', { style: 'currency', currency, minimumFractionDigits: exp, maximumFractionDigits: exp });
  const abs = minor < 0n ? -minor : minor;
  const scale = 10n ** BigInt(exp);
  const str = exp === 0 ? abs.toString() : `${abs / scale}.${(abs % scale).toString().padStart(exp, '0')}`;
  return f.format(((minor < 0n ? '-' : '') + str) as unknown as number);
}

/** A deterministic spread of amounts: every length from 1 to 19 digits, both signs, and edges around the group sizes. */
function amounts(): bigint[] {
  const out = [0n, 1n, -1n, 5n, 10n, 99n, 100n, 101n, 999n, 1000n, 1001n, 99999n, 100000n, 123456n, 1000000n, 2n ** 53n, -(2n ** 53n)];
  let x = 7n;
  for (let digits = 1; digits <= 19; digits++) {
    x = (x * 6364136223846793005n + 1442695040888963407n) % 2n ** 64n;
    const v = x % 10n ** BigInt(digits);
    out.push(v, -v, 10n ** BigInt(digits - 1), -(10n ** BigInt(digits)) + 1n);
  }
  return out;
}

describe('formatMinor', () => {
  it('answers exactly what Intl.NumberFormat answers, for every currency and amounts of every length and sign', () => {
    const mismatches: string[] = [];
    for (const c of CURRENCIES)
      for (const minor of amounts()) {
        const expected = intlFormat(minor, c.code, c.minor_unit_exponent);
        for (const given of [minor, Number.isSafeInteger(Number(minor)) ? Number(minor) : minor]) {
          const got = formatMinor(given, c.code);
          if (got !== expected) mismatches.push(`${c.code} ${minor}: ${JSON.stringify(got)} ≠ ${JSON.stringify(expected)}`);
        }
      }
    expect(mismatches.slice(0, 10)).toEqual([]);
  });

  it('formats by its learned pattern, not by calling Intl on every amount, for every currency', () => {
    for (const c of CURRENCIES) formatMinor(1, c.code); // each currency's pattern learned (and checked against Intl) once
    // `format` is a getter answering a bound function: every call through Intl reads it once.
    const proto = Intl.NumberFormat.prototype;
    const descriptor = Object.getOwnPropertyDescriptor(proto, 'format')!;
    let reads = 0;
    Object.defineProperty(proto, 'format', {
      ...descriptor,
      get(this: Intl.NumberFormat) {
        reads++;
        return descriptor.get!.call(this) as unknown;
      },
    });
    try {
      const slow = CURRENCIES.filter((c) => {
        reads = 0;
        formatMinor(-123456789n, c.code);
        return reads > 0;
      }).map((c) => c.code);
      expect(slow).toEqual([]);
    } finally {
      Object.defineProperty(proto, 'format', descriptor);
    }
  });

  it('formats the common shapes as documented', () => {
    expect(formatMinor(-1234, 'EUR')).toBe('-€12.34');
    expect(formatMinor(1234, 'JPY')).toBe('¥1,234');
    expect(formatMinor(1234, 'CHF')).toBe('CHF\u00a012.34');
    expect(formatMinor(1234567, 'BHD')).toBe('BHD\u00a01,234.567');
    expect(formatMinor(0, 'USD')).toBe('$0.00');
    expect(formatMinor(5, 'USD')).toBe('$0.05');
  });
});
