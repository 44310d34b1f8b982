/**
 * kill -9 during webhook deliveries loses nothing: the server is killed while a receiver is taking
 * deliveries; after a restart every event of list_events reaches the receiver (at least once,
 * verified with standardwebhooks), and a repeated delivery carries the same webhook-id.
 */
import { afterAll, describe, expect, it } from 'vitest';
import { spawn, type ChildProcess } from 'node:child_process';
import http from 'node:http';
import net from 'node:net';
import path from 'node:path';
import { randomUUID } from 'node:crypto';
import { Webhook } from 'standardwebhooks';
import { createTestDatabase } from '@kitty/db';
import { SERVER_DIR } from '../paths.ts';
import { untilServing } from '../process-harness.ts';

const serverDir = SERVER_DIR;
const kitty = path.resolve(serverDir, '..', '..', 'kitty');
const children: ChildProcess[] = [];
const cleanups: Array<() => Promise<unknown>> = [];
afterAll(async () => {
  for (const c of children) if (c.exitCode === null && c.signalCode === null) c.kill('SIGKILL');
  for (const fn of cleanups.reverse()) await fn().catch(() => {});
});

async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = net.createServer();
    srv.once('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const p = (srv.address() as net.AddressInfo).port;
      srv.close(() => resolve(p));
    });
  });
}

async function startServer(databaseUrl: string, port: number): Promise<ChildProcess> {
  const env = {
    ...process.env,
    DATABASE_URL: databaseUrl,
    PORT: String(port),
    HOST: '127.0.0.1',
    KITTY_LOG: 'silent',
    KITTY_SCHEDULER: 'off',
    REDIS_URL: '',
    KITTY_RATE_LIMIT: '1000000',
    KITTY_REGISTER_LIMIT_HOUR: '0',
    KITTY_REGISTER_LIMIT_DAY: '0',
    KITTY_WEBHOOK_ALLOW_LOOPBACK: 'true',
    KITTY_WEBHOOK_RETRY_DELAY: '1',
    KITTY_WEBHOOK_RETRY_DELAY_MAX: '1',
    KITTY_WEBHOOK_TIMEOUT_MS: '2000',
  };
  const child = spawn(kitty, ['serve'], { cwd: serverDir, env, stdio: ['ignore', 'pipe', 'pipe'] });
  children.push(child);
  await untilServing(child);
  return child;
}

describe('kill -9 during webhook deliveries', () => {
  it('delivers every event after the restart, with the same webhook-ids', async () => {
    let secret = '';
    const got: string[] = [];
    const bad: string[] = [];
    // Slow enough (150 ms a delivery) that the kill lands with deliveries queued and in flight.
    const receiver = http.createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () =>
        setTimeout(() => {
          try {
            new Webhook(secret).verify(Buffer.concat(chunks).toString(), req.headers as Record<string, string>);
            got.push(String(req.headers['webhook-id']));
          } catch (e) {
            bad.push(String(e));
          }
          res.writeHead(200).end();
        }, 150),
      );
    });
    await new Promise<void>((r) => receiver.listen(0, '127.0.0.1', r));
    cleanups.push(() => new Promise((r) => (receiver.closeAllConnections(), receiver.close(r))));
    const hookUrl = `http://127.0.0.1:${(receiver.address() as net.AddressInfo).port}/hook`;

    const db = await createTestDatabase();
    cleanups.push(() => db.drop());
    const port = await freePort();
    const base = `http://127.0.0.1:${port}`;
    const post = async (p: string, body: Record<string, unknown>, apiKey?: string) => {
      const res = await fetch(`${base}${p}`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', ...(apiKey ? { authorization: `Bearer ${apiKey}` } : {}) },
        body: JSON.stringify(body),
      });
      return (await res.json()) as any;
    };

    let server = await startServer(db.databaseUrl, port);
    const key = (await post('/v1/agents', { handle: `whcrash-${randomUUID().slice(0, 6)}`, display_name: 'W' })).data.api_key as string;
    const created = await post('/v1/tools/create_webhook', { url: hookUrl, idempotency_key: `wh-${randomUUID()}` }, key);
    secret = created.data.secret;
    for (let i = 0; i < 40; i++)
      await post('/v1/tools/create_group', { name: `G${i}`, currency: 'EUR', idempotency_key: `g-${i}-${randomUUID()}` }, key);
    const t0 = Date.now();
    while (got.length < 3 && Date.now() - t0 < 20_000) await new Promise((r) => setTimeout(r, 10));
    server.kill('SIGKILL');
    await new Promise((r) => (server.exitCode !== null || server.signalCode !== null ? r(undefined) : server.once('exit', r)));
    const beforeRestart = got.length;
    expect(beforeRestart).toBeLessThan(40);

    server = await startServer(db.databaseUrl, port);
    // The killed process's database sessions end when PostgreSQL notices; until then its open
    // transaction holds the feed back (the event horizon), so read until all 40 are visible.
    let events: string[] = [];
    for (const t = Date.now(); events.length < 40 && Date.now() - t < 30_000;) {
      const page: { events: Array<{ event_id: string }> } = (await post('/v1/tools/list_events', { limit: 100, wait_seconds: 1 }, key))
        .data;
      events = page.events.map((e) => e.event_id);
    }
    expect(events).toHaveLength(40);
    const t1 = Date.now();
    while (!events.every((id) => got.includes(id)) && Date.now() - t1 < 45_000) await new Promise((r) => setTimeout(r, 50));
    expect(events.filter((id) => !got.includes(id))).toEqual([]);
    expect(bad).toEqual([]);
    // At least once: anything received twice is one of the log's ids, never a new one.
    expect(got.every((id) => events.includes(id))).toBe(true);
    server.kill('SIGTERM');
  }, 120_000);
});
