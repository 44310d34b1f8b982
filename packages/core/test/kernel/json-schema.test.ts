/**
 * The catalogue's JSON Schemas are small and still say everything (json-schema.ts):
 * - a shape named with `shape()` is written once per output schema (`$defs` + `$ref`) when reused, in place when used once;
 * - input schemas never contain `$ref` (model APIs that receive them often do not follow references);
 * - a `$defs` name means one shape in the whole catalogue (the OpenAPI document and the typed client hoist them);
 * - no zod UUID pattern, no ±2^53 bounds, no `$schema`; outputs open, inputs closed;
 * - the envelope fields are described once (`registry.envelope`) and every result still validates (Ajv 2020-12).
 * No database.
 */
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import canonicalize from 'canonicalize';
import { appRouter, buildRegistry, withEnvelope, READ, type JsonSchema } from '../../src/index.ts';
import { router, readTool } from '../../src/kernel/trpc.ts';
import { output } from '../../src/kernel/text.ts';
import { expandRequired, inlineRefs, shape, toJsonSchema } from '../../src/kernel/json-schema.ts';

const registry = buildRegistry(appRouter);

describe('schema emission', () => {
  const point = shape('TestPoint', z.object({ x: z.number().int(), y: z.number().int() }));

  it('leaves required out of output objects whose properties are all present; expandRequired puts it back', () => {
    const out = toJsonSchema(z.object({ a: z.string(), b: z.object({ c: z.string().optional() }) }), 'output');
    expect(out.required).toBeUndefined();
    expect((out.properties as any).b.required).toEqual([]);
    const back = expandRequired(out) as any;
    expect(back.required).toEqual(['a', 'b']);
    expect(back.properties.b.required).toEqual([]);
    expect(toJsonSchema(z.strictObject({ a: z.string() }), 'input').required).toEqual(['a']);
  });

  it('writes a reused shape once under $defs, keeps the reference description, inlines a single use', () => {
    const twice = toJsonSchema(z.object({ a: point, b: point.describe('the end').nullable() }), 'output');
    expect(twice.$defs).toEqual({
      TestPoint: { type: 'object', properties: { x: { type: 'integer' }, y: { type: 'integer' } } },
    });
    expect((twice.properties as any).a).toEqual({ $ref: '#/$defs/TestPoint' });
    expect(JSON.stringify((twice.properties as any).b)).toContain('"$ref":"#/$defs/TestPoint"');
    const once = toJsonSchema(z.object({ a: point }), 'output');
    expect(once.$defs).toBeUndefined();
    expect((once.properties as any).a.properties.x).toEqual({ type: 'integer' });
    const input = toJsonSchema(z.strictObject({ a: point, b: point }), 'input');
    expect(JSON.stringify(input)).not.toContain('$ref');
    expect(input.additionalProperties).toBe(false);
  });

  it('inlines with the reference’s annotations winning, and allOf when a sibling constrains', () => {
    const s: JsonSchema = {
      properties: { a: { $ref: '#/$defs/P', description: 'd' }, b: { $ref: '#/$defs/P', minProperties: 1 } },
      $defs: { P: { type: 'object', description: 'p' } },
    };
    expect(inlineRefs(s, Infinity)).toEqual({
      properties: { a: { type: 'object', description: 'd' }, b: { minProperties: 1, allOf: [{ type: 'object', description: 'p' }] } },
    });
  });

  it('drops what says nothing: UUID patterns, safe-integer bounds, $schema', () => {
    const s = toJsonSchema(z.strictObject({ id: z.uuid().describe('an id'), n: z.number().int(), m: z.number().int().max(5) }), 'input');
    expect(s).toEqual({
      type: 'object',
      properties: {
        id: { type: 'string', format: 'uuid', description: 'an id' },
        n: { type: 'integer' },
        m: { type: 'integer', maximum: 5 },
      },
      required: ['id', 'n', 'm'],
      additionalProperties: false,
    });
  });
});

describe('the catalogue', () => {
  it('has no $ref in any input schema, and every $ref of an output points into its own $defs', () => {
    for (const t of registry.catalogue) {
      expect(JSON.stringify(t.input_schema), t.name).not.toContain('$ref');
      for (const [, name] of JSON.stringify(t.output_schema).matchAll(/"\$ref":"#\/\$defs\/([^"]+)"/g))
        expect(Object.keys((t.output_schema.$defs ?? {}) as object), t.name).toContain(name);
    }
  });

  it('gives each $defs name one shape across the catalogue', () => {
    const seen = new Map<string, string>();
    for (const t of registry.catalogue)
      for (const [name, def] of Object.entries((t.output_schema.$defs ?? {}) as Record<string, JsonSchema>)) {
        const text = canonicalize(def)!;
        expect(seen.get(name) ?? text, `${t.name}: $defs/${name}`).toBe(text);
        seen.set(name, text);
      }
    expect(seen.has('AgentRef')).toBe(true);
  });

  it('refuses to start when one $defs name is given two shapes', () => {
    const procs = (appRouter._def as unknown as { procedures: Record<string, unknown> }).procedures;
    const impostor = shape('AgentRef', z.object({ agent_id: z.uuid(), nickname: z.string() }));
    const tool = readTool
      .meta({ area: 'test', title: 'Impostor', description: 'Two agents of another shape.', annotations: READ, errors: {} })
      .input(z.strictObject({}))
      .output(output({ a: impostor, b: impostor }))
      .query(() => ({ a: { agent_id: '', nickname: '' }, b: { agent_id: '', nickname: '' }, suggested_next: [] }));
    expect(() => buildRegistry(router({ ...procs, zz_impostor: tool } as never))).toThrow(/\$defs\/AgentRef has two shapes/);
  });

  it('leaves the envelope out of tool outputs and puts it back whole with withEnvelope', () => {
    const t = registry.tools.get('get_group')!;
    expect(Object.keys(t.output_schema.properties as object)).not.toContain('inbox');
    const whole = withEnvelope(t.output_schema, registry.envelope);
    expect(Object.keys(whole.properties as object)).toEqual(expect.arrayContaining(['group', 'suggested_next', 'inbox', 'replayed']));
    expect(whole.required).toContain('suggested_next');
  });
});
