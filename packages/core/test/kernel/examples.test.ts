/**
 * Tool examples (areas/<area>/examples.ts, merged into meta.examples) are real:
 * - the arguments pass the tool's live input schema (the registry's own check, idempotency_key included);
 * - the result parses with the tool's output schema and has no key the output schema (with the result envelope) lacks;
 * - the money adds up: an expense's shares sum to its amount, items (+ tax, tip) to the amount, net = paid − owed,
 *   every formatted amount matches its minor units; the balances are the sum of the expense examples and sum to zero,
 *   and the suggested transfers settle exactly those balances;
 * - the most used tools have examples; MCP tools/list (the catalogue) carries none; docs/tools.md is up to date.
 * No database: the registry is built from the router.
 */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { router } from '../../src/kernel/trpc.ts';
import { withExamples } from '../../src/kernel/examples.ts';
import { outputSchemaOf } from '../../src/kernel/built-output.ts';
import { appRouter, buildRegistry, formatMinor, withEnvelope, expandRequired, type JsonSchema } from '../../src/index.ts';
import { toolsReference, TOOLS_DOC } from '../../scripts/tools-doc.ts';

const registry = buildRegistry(appRouter);
const outputs = (
  appRouter._def as unknown as {
    procedures: Record<string, { _def: { output: unknown } }>;
  }
).procedures;
const all = [...registry.examples!].flatMap(([tool, list]) => list.map((ex) => ({ tool, ...ex })));
const of = (tool: string) => all.filter((e) => e.tool === tool);

/** Paths of keys in `value` that `schema` does not declare (open objects validate them, so a typo would pass). */
function unknownKeys(value: unknown, schema: JsonSchema, defs: Record<string, JsonSchema>, path = ''): string[] {
  if (typeof schema.$ref === 'string') return unknownKeys(value, defs[schema.$ref.replace('#/$defs/', '')]!, defs, path);
  const alts = [
    ...((schema.anyOf as JsonSchema[]) ?? []),
    ...((schema.oneOf as JsonSchema[]) ?? []),
    ...((schema.allOf as JsonSchema[]) ?? []),
  ];
  if (alts.length) {
    const each = alts.map((a) => unknownKeys(value, a, defs, path));
    return schema.allOf ? intersect(each) : (each.find((e) => e.length === 0) ?? each[0]!);
  }
  if (Array.isArray(value))
    return schema.items ? value.flatMap((v, i) => unknownKeys(v, schema.items as JsonSchema, defs, `${path}.${i}`)) : [];
  if (!value || typeof value !== 'object' || !schema.properties) return [];
  const props = schema.properties as Record<string, JsonSchema>;
  return Object.entries(value).flatMap(([k, v]) => (props[k] ? unknownKeys(v, props[k], defs, `${path}.${k}`) : [`${path}.${k}`]));
}
const intersect = (lists: string[][]) => lists[0]!.filter((k) => lists.every((l) => l.includes(k)));

/** Every object in `value`, depth first. */
function objects(value: unknown): Record<string, unknown>[] {
  if (Array.isArray(value)) return value.flatMap(objects);
  if (!value || typeof value !== 'object') return [];
  return [value as Record<string, unknown>, ...Object.values(value).flatMap(objects)];
}
const sum = (xs: unknown[]) => xs.reduce<number>((s, x) => s + Number(x ?? 0), 0);

describe('tool examples', () => {
  it('cover the most used tools, an equal split and an itemized expense among them', () => {
    for (const t of ['register_agent', 'create_group', 'add_expense', 'record_payment', 'confirm_payment', 'get_balances'])
      expect(of(t).length, t).toBeGreaterThan(0);
    for (const t of ['suggest_settlements', 'list_events', 'create_webhook', 'get_inbox']) expect(of(t).length, t).toBeGreaterThan(0);
    const methods = of('add_expense').map((e) => (e.result.expense as { split_method: string }).split_method);
    expect(methods).toEqual(expect.arrayContaining(['equal', 'itemized']));
    for (const e of all) expect(e.summary.length, e.tool).toBeGreaterThan(10);
  });

  it.each(all.map((e) => [`${e.tool}: ${e.summary}`, e] as const))('%s: arguments pass the input schema', (_, e) => {
    expect(registry.validateArgs(e.tool, e.arguments)).toEqual({ ok: true });
  });

  it.each(all.map((e) => [`${e.tool}: ${e.summary}`, e] as const))('%s: result fits the output schema', (_, e) => {
    const parsed = outputSchemaOf(outputs[e.tool]!._def.output).safeParse(e.result);
    expect(parsed.success, JSON.stringify(parsed.error)).toBe(true);
    const tool = registry.tools.get(e.tool)!;
    const schema = withEnvelope(expandRequired(tool.output_schema) as JsonSchema, registry.envelope);
    expect(
      unknownKeys(e.result, schema, { ...((registry.envelope.$defs ?? {}) as object), ...((tool.output_schema.$defs ?? {}) as object) }),
    ).toEqual([]);
  });

  it('money adds up in every example', () => {
    let expenses = 0;
    for (const e of all) {
      for (const o of objects([e.arguments, e.result])) {
        for (const [k, v] of Object.entries(o)) {
          const m = /^(.*)_minor$/.exec(k);
          if (m && typeof o[m[1]!] === 'string' && typeof v === 'number') expect(o[m[1]!], `${e.tool} ${k}`).toBe(formatMinor(v, 'EUR'));
        }
        if (Array.isArray(o.shares) && typeof o.amount_minor === 'number') {
          expect(sum(o.shares.map((s: { owed_minor?: number }) => s.owed_minor)), `${e.tool} owed`).toBe(o.amount_minor);
          if (o.shares.some((s: { paid_minor?: number }) => s.paid_minor !== undefined)) {
            expenses++;
            expect(sum(o.shares.map((s: { paid_minor: number }) => s.paid_minor)), `${e.tool} paid`).toBe(o.amount_minor);
            for (const s of o.shares as Array<{ paid_minor: number; owed_minor: number; net_minor: number }>)
              expect(s.net_minor).toBe(s.paid_minor - s.owed_minor);
          }
        }
        if (
          Array.isArray(o.items) &&
          typeof o.amount_minor === 'number' &&
          o.items.every((i: { amount_minor?: unknown }) => typeof i.amount_minor === 'number')
        )
          expect(
            sum(o.items.map((i: { amount_minor: number }) => i.amount_minor)) + sum([o.tax_minor, o.tip_minor]),
            `${e.tool} items`,
          ).toBe(o.amount_minor);
      }
    }
    expect(expenses).toBeGreaterThanOrEqual(2);
  });

  it('balances are the sum of the expense examples, sum to zero, and the suggested transfers settle them', () => {
    const net = new Map<string, number>();
    for (const e of of('add_expense'))
      for (const s of (e.result.expense as { shares: Array<{ handle: string; net_minor: number }> }).shares)
        net.set(s.handle, (net.get(s.handle) ?? 0) + s.net_minor);
    const members = of('get_balances')[0]!.result.members as Array<{ handle: string; balance_minor: number }>;
    expect(Object.fromEntries(members.map((m) => [m.handle, m.balance_minor]))).toEqual(Object.fromEntries(net));
    expect(sum(members.map((m) => m.balance_minor))).toBe(0);
    const left = new Map(members.map((m) => [m.handle, m.balance_minor]));
    for (const t of of('suggest_settlements')[0]!.result.transfers as Array<{
      from: { handle: string };
      to: { handle: string };
      amount_minor: number;
    }>) {
      left.set(t.from.handle, left.get(t.from.handle)! + t.amount_minor);
      left.set(t.to.handle, left.get(t.to.handle)! - t.amount_minor);
    }
    expect([...left.values()].every((v) => v === 0)).toBe(true);
  });

  it('stay out of the catalogue (MCP tools/list, GET /v1/tools) and name only real tools', () => {
    const text = JSON.stringify(registry.catalogue);
    expect(text).not.toContain('Dinner at Taberna');
    expect(text).not.toContain('"examples"');
    expect(() => withExamples(router({}), { no_such_tool: [] })).toThrow(/no tool "no_such_tool"/);
  });

  it('docs/tools.md is what scripts/tools-doc.ts writes (run it after changing a tool or an example)', () => {
    expect(readFileSync(TOOLS_DOC, 'utf8')).toBe(toolsReference(registry));
  });
});
