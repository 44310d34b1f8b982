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
