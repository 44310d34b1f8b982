/** Failures of a database that went away (or is starting again) are SERVICE_UNAVAILABLE, never INTERNAL. */
import { describe, expect, it } from 'vitest';
import { toToolError } from '../../src/kernel/errors.ts';

describe('toToolError on a database that is away', () => {
  it('maps what pg and Prisma report around a postmaster crash and restart to 503', () => {
    const prismaWrapped = (code: string, message: string) =>
      Object.assign(
        new Error(`\nInvalid \`prisma.apiKey.findUnique()\` invocation:\n\nDatabase error. Code: \`${code}\`. Message: \`${message}\``),
        {
          code: 'P2010',
        },
      );
    for (const e of [
      prismaWrapped('57P03', 'the database system is not yet accepting connections'),
      prismaWrapped('57P01', 'terminating connection due to unexpected postmaster exit'),
      prismaWrapped('08006', 'connection failure'),
      Object.assign(new Error('terminating connection due to unexpected postmaster exit'), { code: '57P01' }),
      new Error('the database system is not yet accepting connections'),
      new Error('Connection terminated unexpectedly'),
    ]) {
      const t = toToolError(e);
      expect(t.kittyCode, e.message).toBe('SERVICE_UNAVAILABLE');
      expect(t.status).toBe(503);
    }
    // A real bug stays INTERNAL.
    expect(
      toToolError(Object.assign(new Error('Database error. Code: `42703`. Message: `column "x" does not exist`'), { code: 'P2010' }))
        .kittyCode,
    ).toBe('INTERNAL');
  });
});
