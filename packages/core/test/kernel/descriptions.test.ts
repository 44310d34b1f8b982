/**
 * What an agent reads about the tools stands on its own and is declared once:
 * - every input property (at any depth) has a description; every output property has a type;
 * - no description mentions internal documents (design notes, specs, issue numbers);
 * - each description's "Errors:" sentence is generated from the tool's `meta.errors` map, and every
 *   error code a description mentions is one the tool can raise;
 * - schemas are portable (no `type: [T, "null"]`);
 * - `idempotency_key` is declared once: by writeTool, with the one length rule.
 * No database: the registry is built from the router.
 */
import { describe, expect, it } from 'vitest';
import { appRouter, buildRegistry, ERROR_CODES, IDEMPOTENCY_KEY_LENGTH, type JsonSchema, type ToolMeta } from '../../src/index.ts';
import { errorsSentence, portable } from '../../src/kernel/registry.ts';

const registry = buildRegistry(appRouter);
const procedures = (appRouter._def as unknown as { procedures: Record<string, { _def: { meta: ToolMeta; inputs: unknown[] } }> })
  .procedures;
const INTERNAL_REFERENCE = /DESIGN\.md|interface-spec|\bissue \d|Source:|§|STACK-NOTES|ARCHITECTURE\.md/i;

interface Prop {
  path: string;
  schema: JsonSchema;
}
function properties(schema: JsonSchema, prefix = ''): Prop[] {
  const out: Prop[] = [];
  for (const [k, v] of Object.entries((schema.properties ?? {}) as Record<string, JsonSchema>)) {
    out.push({ path: prefix + k, schema: v }, ...properties(v, `${prefix}${k}.`));
  }
  if (schema.items) out.push(...properties(schema.items as JsonSchema, `${prefix}[].`));
  for (const b of [...((schema.anyOf as JsonSchema[]) ?? []), ...((schema.oneOf as JsonSchema[]) ?? [])])
    out.push(...properties(b, prefix));
  if (schema.additionalProperties && typeof schema.additionalProperties === 'object')
    out.push(...properties(schema.additionalProperties as JsonSchema, `${prefix}*.`));
  for (const [k, v] of Object.entries((schema.$defs ?? {}) as Record<string, JsonSchema>)) out.push(...properties(v, `$defs.${k}.`));
  return out;
}
function descriptions(schema: JsonSchema): string[] {
  return JSON.stringify(schema).match(/"description":"(?:[^"\\]|\\.)*"/g) ?? [];
}

describe('tool descriptions and schemas', () => {
  it('describe every input property, at any depth', () => {
    const missing = registry.catalogue.flatMap((t) =>
      properties(t.input_schema)
        .filter((p) => !p.schema.description)
        .map((p) => `${t.name}.${p.path}`),
    );
    expect(missing).toEqual([]);
  });

  it('give every output property a type', () => {
    const typed = (s: JsonSchema) =>
      s.type !== undefined ||
      s.anyOf !== undefined ||
      s.oneOf !== undefined ||
      s.enum !== undefined ||
      s.const !== undefined ||
      s.$ref !== undefined;
    const typeless = [{ name: 'envelope', output_schema: registry.envelope }, ...registry.catalogue].flatMap((t) =>
      properties(t.output_schema)
        .filter((p) => !typed(p.schema))
        .map((p) => `${t.name}.${p.path}`),
    );
    expect(typeless).toEqual([]);
  });

  it('never mention internal documents', () => {
    const leaks = registry.catalogue.flatMap((t) =>
      [t.title, t.description, ...descriptions(t.input_schema), ...descriptions(t.output_schema)]
        .filter((d) => INTERNAL_REFERENCE.test(d))
        .map((d) => `${t.name}: ${d}`),
    );
    expect(leaks).toEqual([]);
  });

  it('end in an Errors sentence generated from meta.errors, and mention only codes the tool raises', () => {
    for (const t of registry.catalogue) {
      const meta = procedures[t.name]!._def.meta;
      expect(meta.description, `${t.name}: write errors in meta.errors, not in the prose`).not.toMatch(/Errors?:/);
      const sentence = errorsSentence(meta.errors);
      expect(t.description).toBe(sentence ? `${meta.description} ${sentence}` : meta.description);
      for (const code of Object.keys(meta.errors)) expect(t.errors, t.name).toContain(code);
      const mentioned = ERROR_CODES.filter((c) => new RegExp(`\\b${c}\\b`).test(t.description));
      for (const code of mentioned) expect(t.errors, `${t.name} mentions ${code}`).toContain(code);
    }
    expect(registry.tools.get('archive_group')!.description).toMatch(
      /Errors: NOT_FOUND \(no such group\); FORBIDDEN \(not a member, or not an admin\); NOT_SETTLED \(/,
    );
  });

  it('use the portable form for nullable values', () => {
    expect(JSON.stringify(registry.catalogue)).not.toMatch(/"type":\[/);
    expect(portable({ type: ['string', 'null'], minLength: 1, description: 'd' })).toEqual({
      description: 'd',
      anyOf: [{ type: 'string', minLength: 1 }, { type: 'null' }],
    });
  });

  it('declare idempotency_key once: every keyed write tool gets it from writeTool, with the one length rule', () => {
    for (const t of registry.catalogue) {
      const props = (t.input_schema.properties ?? {}) as Record<string, JsonSchema>;
      const keyed = t.kind === 'write' && t.idempotency !== 'none';
      expect('idempotency_key' in props, t.name).toBe(keyed);
      if (!keyed) continue;
      expect(t.input_schema.required, t.name).toContain('idempotency_key');
      expect(props.idempotency_key).toMatchObject({
        type: 'string',
        minLength: IDEMPOTENCY_KEY_LENGTH.min,
        maxLength: IDEMPOTENCY_KEY_LENGTH.max,
      });
      // The tool's own input (the last one) does not declare it again.
      const own = procedures[t.name]!._def.inputs.at(-1) as { shape?: Record<string, unknown> };
      expect(Object.keys(own.shape ?? {}), t.name).not.toContain('idempotency_key');
    }
  });
});
