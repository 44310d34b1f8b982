import { describe, expect, it } from 'vitest';
import { CURRENCIES } from '../../src/kernel/money.ts';

describe('CURRENCIES', () => {
  it('is sorted by code exactly as a locale-aware sort would sort it (three letters A-Z)', () => {
    const codes = CURRENCIES.map((c) => c.code);
    expect(codes.every((c) => /^[A-Z]{3}$/.test(c))).toBe(true);
    expect(codes).toEqual([...codes].sort((a, b) => a.localeCompare(b)));
    expect(new Set(codes).size).toBe(codes.length);
  });
});
