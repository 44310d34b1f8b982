/**
 * Two instances on one database share the webhook work: each event reaches each endpoint exactly
 * once (a receiver that always answers 204), whichever instance took the write.
 */
import http from 'node:http';
import { randomUUID } from 'node:crypto';
import { afterAll, describe, expect, it } from 'vitest';
import { createTestDatabase } from '@kitty/db';
import { startKitty, type RunningKitty } from '../../src/index.ts';
import { QUIET_TEST_CONFIG } from '../server-harness.ts';

const cleanups: Array<() => Promise<unknown>> = [];
afterAll(async () => {
  for (const fn of cleanups.reverse()) await fn().catch(() => {});
});

describe('webhooks on two instances', () => {
  it('deliver each event once per endpoint', async () => {
    const got = new Map<string, number>();
    const receiver = http.createServer((req, res) => {
      req.resume();
      req.on('end', () => {
        const key = `${req.url} ${String(req.headers['webhook-id'])}`;
        got.set(key, (got.get(key) ?? 0) + 1);
        res.writeHead(204).end();
      });
    });
    await new Promise<void>((r) => receiver.listen(0, '127.0.0.1', r));
    cleanups.push(() => new Promise((r) => (receiver.closeAllConnections(), receiver.close(r))));
    const base = `http://127.0.0.1:${(receiver.address() as { port: number }).port}`;

    const db = await createTestDatabase();
    cleanups.push(() => db.drop());
    const webhooks = {
      enabled: true,
      allowLoopback: true,
      retryDelaySeconds: 1,
      retryDelayMaxSeconds: 1,
      retryWindowSeconds: 60,
      timeoutMs: 2000,
      maxInFlight: 4,
    };
    const kittys: RunningKitty[] = [];
    for (let i = 0; i < 2; i++) {
      const k = await startKitty({ databaseUrl: db.databaseUrl, ...QUIET_TEST_CONFIG, webhooks });
      kittys.push(k);
      cleanups.push(() => k.close());
    }
    const post = async (i: number, path: string, body: Record<string, unknown>, apiKey?: string) => {
      const res = await fetch(`${kittys[i % 2]!.url}${path}`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', ...(apiKey ? { authorization: `Bearer ${apiKey}` } : {}) },
        body: JSON.stringify(body),
      });
      return ((await res.json()) as { data: any }).data;
    };
    const key = (await post(0, '/v1/agents', { handle: `two-${randomUUID().slice(0, 6)}`, display_name: 'Two' })).api_key as string;
    for (const path of ['/one', '/two'])
      await post(1, '/v1/tools/create_webhook', { url: `${base}${path}`, idempotency_key: `c-${path}-x` }, key);
    for (let i = 0; i < 30; i++)
      await post(i, '/v1/tools/create_group', { name: `G${i}`, currency: 'EUR', idempotency_key: `g-${i}-xxxx` }, key);
    let ids: string[] = [];
    for (const t = Date.now(); ids.length < 30 && Date.now() - t < 20_000;)
      ids = await fetch(`${kittys[0]!.url}/v1/tools/list_events`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization: `Bearer ${key}` },
        body: JSON.stringify({ limit: 100, wait_seconds: 1 }),
      }).then(async (r) => ((await r.json()) as { data: { events: Array<{ event_id: string }> } }).data.events.map((e) => e.event_id));
    expect(ids).toHaveLength(30);
    const want = ['/one', '/two'].flatMap((p) => ids.map((id) => `${p} ${id}`));
    for (const t = Date.now(); !want.every((k) => got.has(k)) && Date.now() - t < 30_000;) await new Promise((r) => setTimeout(r, 50));
    await new Promise((r) => setTimeout(r, 1500)); // time for any duplicate to arrive
    expect([...got.keys()].sort()).toEqual(want.sort());
    expect([...got.values()].every((n) => n === 1)).toBe(true);
  }, 90_000);
});
