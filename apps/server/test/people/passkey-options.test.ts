/**
 * Passkey sign-up options name Kitty's algorithms (EdDSA, ES256, RS256) and asking for them prints nothing:
 * no ExperimentalWarning from probing Node's Web Crypto for ML-DSA.
 */
import { afterAll, beforeAll, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../server-harness.ts';

let s: TestServer;
const warnings: Error[] = [];
const onWarning = (w: Error) => warnings.push(w);
beforeAll(async () => {
  process.on('warning', onWarning);
  s = await startTestServer();
});
afterAll(async () => {
  process.off('warning', onWarning);
  await s?.close();
});

it('sign-up options offer EdDSA, ES256 and RS256, with no experimental-feature warning', async () => {
  const r = await s.http('/auth/passkey/register/options', { body: { display_name: 'Ana' }, headers: { origin: s.url } });
  expect(r.status).toBe(200);
  expect(r.json.data.pubKeyCredParams.map((p: { alg: number }) => p.alg)).toEqual([-8, -7, -257]);
  await new Promise((resolve) => setImmediate(resolve)); // warnings are emitted on the next tick
  expect(warnings.filter((w) => w.name === 'ExperimentalWarning').map((w) => w.message)).toEqual([]);
});
