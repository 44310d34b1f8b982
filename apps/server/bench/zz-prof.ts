import { spawn } from 'node:child_process';
import { createInterface } from 'node:readline';
import { randomUUID } from 'node:crypto';
import autocannon from 'autocannon';
import { createTestDatabase } from '@kitty/db';
const db = await createTestDatabase();
const child = spawn(process.execPath, ['--cpu-prof', '--cpu-prof-dir=/tmp/prof', '--import', 'tsx', 'bench/target.ts'], {
  env: { ...process.env, DATABASE_URL: db.databaseUrl, KITTY_LOG: 'silent' },
  stdio: ['ignore', 'pipe', 'inherit'],
});
const first = await new Promise<string>((resolve) => createInterface({ input: child.stdout! }).once('line', resolve));
const { kittyUrl } = JSON.parse(first);
const post = async (p: string, body: unknown, key?: string) => {
  const res = await fetch(`${kittyUrl}${p}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...(key ? { authorization: `Bearer ${key}` } : {}) },
    body: JSON.stringify(body),
  });
  const j = (await res.json()) as any;
  if (!j.ok) throw new Error(`${p}: ${JSON.stringify(j.error)}`);
  return j.data;
};
const reg = await post('/v1/agents', { handle: `p-${randomUUID().slice(0, 8)}`, display_name: 'P' });
const tool = process.env.TOOL ?? 'create_group';
const body = () => (tool === 'create_group' ? { name: 'G', currency: 'EUR', idempotency_key: randomUUID() } : {});
const r = await autocannon({
  url: `${kittyUrl}/v1/tools/${tool}`,
  method: 'POST',
  connections: 10,
  duration: 8,
  headers: { authorization: `Bearer ${reg.api_key}`, 'content-type': 'application/json' },
  requests: [{ setupRequest: (req) => ({ ...req, body: JSON.stringify(body()) }) }],
});
console.log(tool, r.requests.average, 'req/s', r.non2xx, 'non2xx');
child.kill('SIGTERM');
await new Promise((r) => child.once('exit', r));
await db.drop();
