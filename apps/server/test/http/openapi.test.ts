/** GET /openapi.json is valid OpenAPI 3.1 for two independent validators. */
import { afterAll, beforeAll, expect, it } from 'vitest';
import { validate } from '@readme/openapi-parser';
import { createConfig, lintFromString } from '@redocly/openapi-core';
import rootPackage from '../../../../package.json' with { type: 'json' };
import { startTestServer, type TestServer } from '../server-harness.ts';

let s: TestServer;
beforeAll(async () => {
  s = await startTestServer();
});
afterAll(async () => {
  await s?.close();
});

it('passes @readme/openapi-parser and @redocly/openapi-core and describes every tool', async () => {
  const r = await s.http('/openapi.json');
  expect(r.status).toBe(200);
  const doc = r.json;
  expect(doc.openapi).toBe('3.1.0');
  expect(doc.info.version).toBe(rootPackage.version);
  for (const t of s.kitty.registry.catalogue) expect(doc.paths[`/v1/tools/${t.name}`]).toBeDefined();
  const result = await validate(structuredClone(doc));
  expect(result.valid, JSON.stringify((result as any).errors ?? [])).toBe(true);
  const config = await createConfig({ extends: ['minimal'] });
  const problems = await lintFromString({ source: r.text, absoluteRef: 'openapi.json', config });
  const errors = problems.filter((p) => p.severity === 'error');
  expect(errors.map((e) => e.message)).toEqual([]);
});

it("carries each tool's examples as request and response examples, checked against the schemas by Redocly", async () => {
  const r = await s.http('/openapi.json');
  const op = (name: string) => r.json.paths[`/v1/tools/${name}`].post;
  for (const [name, examples] of s.kitty.registry.examples!) {
    const request = Object.values(op(name).requestBody.content['application/json'].examples) as Array<{ summary: string; value: unknown }>;
    const response = Object.values(op(name).responses['200'].content['application/json'].examples) as Array<{ value: unknown }>;
    expect(request.map((e) => e.summary)).toEqual(examples.map((e) => e.summary));
    expect(request.map((e) => e.value)).toEqual(examples.map((e) => e.arguments));
    expect(response.map((e) => e.value)).toEqual(examples.map((e) => ({ ok: true, data: e.result })));
  }
  expect(Object.keys(op('add_expense').requestBody.content['application/json'].examples)).toHaveLength(2);
  expect(op('get_group').requestBody.content['application/json'].examples).toBeUndefined();
  // Redocly validates every media-type example against its schema (the tool's input, the success envelope).
  const config = await createConfig({ extends: ['minimal'], rules: { 'no-invalid-media-type-examples': 'error' } });
  const problems = await lintFromString({ source: r.text, absoluteRef: 'openapi.json', config });
  const invalid = problems.filter((p) => p.ruleId === 'no-invalid-media-type-examples');
  expect(invalid.map((p) => `${p.location[0]?.pointer}: ${p.message}`)).toEqual([]);
});
