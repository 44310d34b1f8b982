/**
 * builtOutput (kernel/built-output.ts): the hot write tools declare their output schema without
 * parsing each answer in production; under test (KITTY_CHECK_OUTPUTS=1, vitest.shared.ts) every
 * answer is parsed and must come out unchanged, so the tool tests keep checking them.
 */
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { builtOutput, outputSchemaOf } from '../../src/kernel/built-output.ts';
import { appRouter } from '../../src/catalogue.ts';

const schema = z.object({ a: z.number(), b: z.string().optional() });

describe('builtOutput', () => {
  it('runs with answer checks on in tests', () => {
    expect(process.env.KITTY_CHECK_OUTPUTS).toBe('1');
  });

  it('passes a valid answer through unchanged', () => {
    const parse = builtOutput(schema);
    expect(parse({ a: 1 })).toEqual({ a: 1 });
    expect(parse({ b: 'x', a: 2 })).toEqual({ a: 2, b: 'x' });
  });

  it('refuses an invalid answer and one with a field the schema does not declare (it would be stripped)', () => {
    const parse = builtOutput(schema);
    expect(() => parse({ a: 'one' })).toThrow();
    expect(() => parse({ a: 1, secret: 'leak' })).toThrow(/differs from its schema/);
  });

  it('publishes the schema it wraps', () => {
    expect(outputSchemaOf(builtOutput(schema))).toBe(schema);
    expect(outputSchemaOf(schema)).toBe(schema);
  });

  it('is the output of every batched write tool (their answers are built from validated parts)', () => {
    const procedures = (appRouter._def as unknown as { procedures: Record<string, { _def: { output: unknown } }> }).procedures;
    for (const name of ['add_expense', 'record_payment', 'confirm_payment', 'reject_payment', 'cancel_payment', 'create_group']) {
      const output = procedures[name]!._def.output as { schema?: unknown };
      expect(typeof output, name).toBe('function');
      expect(output.schema, name).toBeDefined();
    }
  });
});
