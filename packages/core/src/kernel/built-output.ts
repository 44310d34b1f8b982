/**
 * The output declaration of a hot write tool whose answer is built only from parts already
 * validated (its parsed input, rows it read, ids it made): the schema is published like any
 * other (the registry reads `schema`), but the answer is not parsed again on every call.
 *
 * With KITTY_CHECK_OUTPUTS=1 (every test run sets it: vitest.shared.ts) each answer is parsed
 * and must come out unchanged: valid, and nothing in it that the schema would strip. So the
 * tests keep checking every such tool's answers against its schema.
 */
import canonicalize from 'canonicalize';
import type { z } from 'zod';

const CHECK = process.env.KITTY_CHECK_OUTPUTS === '1';

export type BuiltOutput<T extends z.ZodType> = ((value: unknown) => z.output<T>) & { readonly schema: T };

export function builtOutput<T extends z.ZodType>(schema: T): BuiltOutput<T> {
  const parse = (value: unknown): z.output<T> => {
    if (!CHECK) return value as z.output<T>;
    const parsed = schema.parse(value);
    if (canonicalize(parsed) !== canonicalize(value)) {
      throw new Error(`answer differs from its schema's parse: ${canonicalize(value)} → ${canonicalize(parsed)}`);
    }
    return parsed;
  };
  return Object.assign(parse, { schema });
}

/** The zod schema of a tool's declared output (`builtOutput` or a plain schema). */
export function outputSchemaOf(output: unknown): z.ZodType {
  return ((output as { schema?: z.ZodType }).schema ?? output) as z.ZodType;
}
