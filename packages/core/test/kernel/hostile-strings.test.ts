/**
 * Strings PostgreSQL cannot store (U+0000, lone UTF-16 surrogates) are refused at the edge for
 * every tool and every string field — ids, idempotency keys, text, strings nested in arrays and
 * objects, object keys and the Idempotency-Key header — as VALIDATION_ERROR naming the field,
 * before any database work. Field paths come from each tool's own JSON Schema in the catalogue.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createHarness, type Harness, type TestAgent } from '../harness.ts';
import { inputIssues, MAX_ARGUMENT_DEPTH, ToolError } from '../../src/index.ts';

let h: Harness;
let a: TestAgent;
beforeAll(async () => {
  h = await createHarness();
  a = await h.agent('strings');
});
afterAll(async () => {
  await h?.close();
});

type Schema = Record<string, any>;
/** Resolves the first branch of anyOf/oneOf (zod's optional/nullable projections). */
const branches = (s: Schema): Schema[] => (s.anyOf ?? s.oneOf ?? [s]).flatMap((b: Schema) => (b.anyOf || b.oneOf ? branches(b) : [b]));

/** Every path at which the schema accepts a string (arrays contribute index 0), up to depth 6. */
function stringPaths(schema: Schema, path: Array<string | number> = [], depth = 0): Array<Array<string | number>> {
  if (depth > 6) return [];
  const out: Array<Array<string | number>> = [];
  for (const b of branches(schema)) {
    if (b.type === 'string') out.push(path);
    else if (b.type === 'object' && b.properties)
      for (const [k, v] of Object.entries(b.properties)) out.push(...stringPaths(v as Schema, [...path, k], depth + 1));
    else if (b.type === 'array' && b.items) out.push(...stringPaths(b.items, [...path, 0], depth + 1));
  }
  return out.filter((p, i, all) => all.findIndex((q) => q.join('.') === p.join('.')) === i);
}

function setAt(path: Array<string | number>, value: unknown): Record<string, unknown> {
  let v: unknown = value;
  for (let i = path.length - 1; i >= 0; i--) {
    const k = path[i]!;
    v = typeof k === 'number' ? [v] : { [k]: v };
  }
  return v as Record<string, unknown>;
}

const BAD = ['\ud800', 'x\udc00', 'a\u0000b', '\udfff\ud800', `${'ok'.repeat(5)}\u0000`];

describe('inputIssues', () => {
  it('finds NUL, lone surrogates and infinities at any depth, in values and keys, and accepts paired surrogates', () => {
    expect(inputIssues({ a: 'fine 😀 \u00e9', b: [1, 'x', { c: null }] })).toEqual([]);
    expect(inputIssues({ a: [{ b: 'x\u0000' }] })).toEqual([expect.objectContaining({ path: 'a.0.b', code: 'nul_character' })]);
    expect(inputIssues({ a: ['ok', '\ud83d'] })).toEqual([expect.objectContaining({ path: 'a.1', code: 'lone_surrogate' })]);
    expect(inputIssues({ 'k\u0000': 1 })).toEqual([expect.objectContaining({ path: 'k\\u0000', code: 'nul_character' })]);
    expect(inputIssues('\udc00')).toEqual([expect.objectContaining({ path: '(root)' })]);
    expect(inputIssues({ a: 'x' }, 'Idempotency-Key')).toEqual([]);
    // What JSON.parse makes of 1e309: refused; huge finite numbers are the schemas' business.
    expect(inputIssues(JSON.parse('{"n":[1e309,-1e309,1e308]}'))).toEqual([
      expect.objectContaining({ path: 'n.0', code: 'non_finite_number' }),
      expect.objectContaining({ path: 'n.1', code: 'non_finite_number' }),
    ]);
  });

  it(`refuses nesting deeper than ${MAX_ARGUMENT_DEPTH} levels without recursion`, () => {
    let deep: unknown = 'leaf';
    for (let i = 0; i < 100_000; i++) deep = [deep];
    const issues = inputIssues({ x: deep });
    expect(issues).toHaveLength(1);
    expect(issues[0]).toMatchObject({ code: 'too_deep' });
    let ok: unknown = 'leaf';
    for (let i = 0; i < MAX_ARGUMENT_DEPTH - 1; i++) ok = [ok];
    expect(inputIssues({ x: ok })).toEqual([]);
  });

  it('reports a bounded number of issues', () => {
    const many = Object.fromEntries(Array.from({ length: 500 }, (_, i) => [`k${i}`, '\u0000']));
    expect(inputIssues(many).length).toBeLessThanOrEqual(20);
  });
});

describe('every tool, every string field', () => {
  it('answers VALIDATION_ERROR naming the field for NUL and lone surrogates (and the sandbox agrees)', async () => {
    let cases = 0;
    const wrong: string[] = [];
    for (const tool of h.registry.catalogue) {
      const paths = stringPaths(tool.input_schema);
      expect(paths.length, `${tool.name} has string fields`).toBeGreaterThanOrEqual(
        tool.kind === 'write' && tool.idempotency !== 'none' ? 1 : 0,
      );
      for (const path of paths) {
        for (const bad of BAD) {
          cases++;
          const args = setAt(path, bad);
          const expected = path.join('.');
          let err: unknown;
          try {
            await h.registry.callTool(tool.name, args, { services: h.services, auth: a.auth, requestId: 'req_hostile' });
          } catch (e) {
            err = e;
          }
          const issues = (err as ToolError | undefined)?.details?.issues as Array<{ path: string }> | undefined;
          if (!(err instanceof ToolError) || err.kittyCode !== 'VALIDATION_ERROR' || !issues?.some((i) => i.path === expected)) {
            wrong.push(
              `${tool.name} ${expected} ${JSON.stringify(bad)} → ${err instanceof ToolError ? `${err.kittyCode} ${JSON.stringify(err.details)}` : String(err)}`,
            );
          }
          const sandbox = h.registry.validateArgs(tool.name, args);
          if (sandbox.ok || !sandbox.issues.some((i) => i.path === expected))
            wrong.push(`sandbox ${tool.name} ${expected} ${JSON.stringify(bad)} → ${JSON.stringify(sandbox)}`);
        }
      }
    }
    console.log(
      `hostile strings: ${cases} cases (tool × string field × bad string), each via callTool and the sandbox; ${wrong.length} wrong`,
    );
    expect(wrong).toEqual([]);
    expect(cases).toBeGreaterThan(300);
  }, 120_000);

  it('refuses such a key in the Idempotency-Key header, naming it', async () => {
    for (const bad of ['key-\u0000-12345', 'key-\ud800-12345']) {
      const e = await h.registry
        .callTool(
          'create_group',
          { name: 'G', currency: 'EUR' },
          { services: h.services, auth: a.auth, requestId: 'req_hdr', idempotencyKeyHeader: bad },
        )
        .then(
          () => undefined,
          (x: unknown) => x,
        );
      expect(e).toBeInstanceOf(ToolError);
      expect((e as ToolError).kittyCode).toBe('VALIDATION_ERROR');
      expect((e as ToolError).details?.issues).toEqual([expect.objectContaining({ path: 'Idempotency-Key' })]);
    }
    // Nothing was written for the refused calls.
    const groups = await h.call(a, 'list_groups', {});
    expect(groups.groups).toEqual([]);
  });
});
