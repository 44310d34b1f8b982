/**
 * Database faults: /health reflects the database (503 SERVICE_UNAVAILABLE with the envelope
 * while it is down, ok again once it is back), tool calls answer 503 "nothing was changed"
 * instead of 500s, and when the embedded PostgreSQL's postmaster is killed the server starts it
 * again on the same data folder and port and keeps serving, with the data intact.
 */
import { afterAll, describe, expect, it } from 'vitest';
import { chmod, mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { randomUUID } from 'node:crypto';
import { startEmbeddedPostgres } from '@kitty/db';
import { startKitty, type RunningKitty } from '../../src/index.ts';
import { QUIET_TEST_CONFIG } from '../server-harness.ts';

const cleanups: Array<() => Promise<unknown>> = [];
afterAll(async () => {
  for (const fn of cleanups.reverse()) await fn().catch(() => {});
});

async function tempDir(): Promise<string> {
  const dir = await mkdtemp(path.join(tmpdir(), 'kitty-pg-'));
  cleanups.push(() => rm(dir, { recursive: true, force: true }));
  await chmod(dir, 0o755); // PostgreSQL runs as user postgres when the tests run as root
  return path.join(dir, 'data');
}

async function http(kitty: RunningKitty, p: string, body?: unknown, apiKey?: string) {
  const res = await fetch(`${kitty.url}${p}`, {
    method: body === undefined ? 'GET' : 'POST',
    headers: {
      ...(body === undefined ? {} : { 'content-type': 'application/json' }),
      ...(apiKey ? { authorization: `Bearer ${apiKey}` } : {}),
    },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  const text = await res.text();
  return { status: res.status, headers: res.headers, json: text ? JSON.parse(text) : undefined };
}

/** Polls `probe` every 100 ms until it returns true (fails after `ms`). */
async function until(what: string, probe: () => Promise<boolean>, ms = 30_000): Promise<void> {
  const end = Date.now() + ms;
  while (Date.now() < end) {
    if (await probe().catch(() => false)) return;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`timed out waiting for: ${what}`);
}

async function register(kitty: RunningKitty): Promise<string> {
  const r = await http(kitty, '/v1/agents', { handle: `f-${randomUUID().slice(0, 8)}`, display_name: 'Fault' });
  expect(r.status).toBe(200);
  return r.json.data.api_key as string;
}

describe('database faults', () => {
  it('/health and tool calls reflect a database that is down, and recover when it is back', async () => {
    const dataDir = await tempDir();
    let pg = await startEmbeddedPostgres({ dataDir });
    cleanups.push(() => pg.stop());
    const kitty = await startKitty({ ...QUIET_TEST_CONFIG, databaseUrl: pg.databaseUrl });
    cleanups.push(() => kitty.close());
    const key = await register(kitty);
    const ok = await http(kitty, '/health');
    expect(ok.status).toBe(200);
    expect(ok.json.data).toMatchObject({ status: 'ok', database: 'ok' });

    await pg.stop();
    await until('/health says 503', async () => (await http(kitty, '/health')).status === 503);
    const down = await http(kitty, '/health');
    expect(down.json).toMatchObject({ ok: false, error: { code: 'SERVICE_UNAVAILABLE' } });
    expect(down.json.request_id).toMatch(/^req_/);
    expect(Number(down.headers.get('retry-after'))).toBeGreaterThan(0);
    // A write while the database is down: 503, truthfully "nothing was changed".
    const write = await http(
      kitty,
      '/v1/tools/create_group',
      { name: 'While down', currency: 'EUR', idempotency_key: `down-${randomUUID()}` },
      key,
    );
    expect(write.status).toBe(503);
    expect(write.json.error.code).toBe('SERVICE_UNAVAILABLE');
    expect(write.json.error.message).toMatch(/nothing was changed/);

    pg = await startEmbeddedPostgres({ dataDir, port: pg.port });
    await until('/health says ok again', async () => (await http(kitty, '/health')).status === 200);
    const after = await http(
      kitty,
      '/v1/tools/create_group',
      { name: 'After', currency: 'EUR', idempotency_key: `after-${randomUUID()}` },
      key,
    );
    expect(after.status).toBe(200);
    expect(await kitty.services.prisma.group.count({ where: { name: 'While down' } })).toBe(0);
  });

  it('starts the embedded PostgreSQL again when its postmaster is killed', async () => {
    const dataDir = await tempDir();
    const kitty = await startKitty({ ...QUIET_TEST_CONFIG, databaseUrl: undefined, dataDir, embeddedPgPort: undefined });
    cleanups.push(() => kitty.close());
    const key = await register(kitty);
    const before = await http(
      kitty,
      '/v1/tools/create_group',
      { name: 'Before kill', currency: 'EUR', idempotency_key: `before-${randomUUID()}` },
      key,
    );
    expect(before.status).toBe(200);
    const pidOf = async () => Number((await readFile(path.join(dataDir, 'postmaster.pid'), 'utf8')).split('\n')[0]);
    const oldPid = await pidOf();
    expect(oldPid).toBeGreaterThan(0);

    process.kill(oldPid, 'SIGKILL');
    await until('a new postmaster', async () => (await pidOf()) !== oldPid);
    await until('/health says ok again', async () => (await http(kitty, '/health')).status === 200);
    // Serving again, data intact, the same key still works.
    const afterKill = await http(
      kitty,
      '/v1/tools/create_group',
      { name: 'After kill', currency: 'EUR', idempotency_key: `afterkill-${randomUUID()}` },
      key,
    );
    expect(afterKill.status).toBe(200);
    const groups = await http(kitty, '/v1/tools/list_groups', {}, key);
    expect(groups.json.data.groups.map((g: { name: string }) => g.name).sort()).toEqual(['After kill', 'Before kill']);
  });
});
