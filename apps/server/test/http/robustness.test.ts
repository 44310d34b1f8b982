/**
 * "Bad input gets a clear error, never a 500" across the whole catalogue: every tool is called
 * over REST with malformed arguments (wrong types, unknown fields, hostile strings, huge numbers,
 * non-existent ids) and must answer a 4xx error envelope — never INTERNAL.
 */
import { afterAll, beforeAll, expect, it } from 'vitest';
import { randomUUID } from 'node:crypto';
import { startTestServer, type TestServer } from '../server-harness.ts';

let s: TestServer;
beforeAll(async () => {
  s = await startTestServer();
});
afterAll(async () => {
  await s?.close();
});

const HOSTILE: unknown[] = [
  null,
  42,
  -1,
  1e308,
  2 ** 63,
  'x',
  '',
  "'; DROP TABLE agents; --",
  '\u0000',
  '😀'.repeat(300),
  [],
  {},
  true,
  randomUUID(),
];

function variants(schema: any): Array<Record<string, unknown>> {
  const props = Object.keys(schema.properties ?? {});
  const out: Array<Record<string, unknown>> = [{}, { not_a_field: 1 }];
  for (const p of props) for (const v of HOSTILE) out.push({ [p]: v, idempotency_key: `robust-${randomUUID()}` });
  // All properties at once with plausible-but-wrong values.
  out.push(Object.fromEntries(props.map((p) => [p, p.endsWith('_id') ? randomUUID() : p.endsWith('_minor') ? 1 : 'abc'])));
  return out;
}

it('no tool answers 500 to malformed arguments', async () => {
  const a = await s.agent('robust');
  const failures: string[] = [];
  for (const tool of s.kitty.registry.catalogue) {
    if (tool.name === 'rotate_api_key') continue; // would retire the key this test uses
    for (const args of variants(tool.input_schema)) {
      const r = await s.http(`/v1/tools/${tool.name}`, { body: args, apiKey: a.apiKey });
      if (r.status >= 500 || r.json?.error?.code === 'INTERNAL')
        failures.push(`${tool.name} ${JSON.stringify(args).slice(0, 120)} → ${r.status} ${r.text.slice(0, 200)}`);
      else if (r.status >= 400) {
        expect(r.json.ok).toBe(false);
        expect(typeof r.json.error.suggested_action).toBe('string');
      }
    }
  }
  expect(failures).toEqual([]);
}, 600_000);
