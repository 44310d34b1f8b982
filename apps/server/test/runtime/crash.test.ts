/**
 * Crash safety: the server process is killed with SIGKILL in the middle of a write load and
 * started again on the same database. Every acknowledged write is there, nothing is
 * half-written, a retry with the same idempotency key has exactly one effect (a replay when it
 * had committed), and `verify` (the CLI) finds the ledger clean.
 */
import { afterAll, describe, expect, it } from 'vitest';
import { spawn, execFile, type ChildProcess } from 'node:child_process';
import { promisify } from 'node:util';
import net from 'node:net';
import path from 'node:path';
import { randomUUID } from 'node:crypto';
import { createDb, createTestDatabase } from '@kitty/db';
import { SERVER_DIR } from '../paths.ts';
import { untilServing } from '../process-harness.ts';

const serverDir = SERVER_DIR;
/** `./kitty …` (README line 1): one Node process running main.ts (the launcher execs it). */
const cli = (...args: string[]) => [path.resolve(serverDir, '..', '..', 'kitty'), args] as const;
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

function env(databaseUrl: string, port: number): NodeJS.ProcessEnv {
  return {
    ...process.env,
    DATABASE_URL: databaseUrl,
    PORT: String(port),
    HOST: '127.0.0.1',
    KITTY_LOG: 'silent',
    KITTY_SCHEDULER: 'off',
    REDIS_URL: '',
    KITTY_RATE_LIMIT: '1000000',
    KITTY_RATE_LIMIT_ANON: '1000000',
    KITTY_REGISTER_LIMIT_HOUR: '0',
    KITTY_REGISTER_LIMIT_DAY: '0',
  };
}

/** Starts `main.ts serve` as a child process; resolves once it prints its address. */
async function startServer(databaseUrl: string, port: number): Promise<ChildProcess> {
  const child = spawn(...cli('serve'), { cwd: serverDir, env: env(databaseUrl, port), stdio: ['ignore', 'pipe', 'pipe'] });
  children.push(child);
  await untilServing(child);
  return child;
}

describe('kill -9 of the server mid-load', () => {
  it('loses no acknowledged write, half-writes nothing, and retries have one effect', async () => {
    const db = await createTestDatabase();
    cleanups.push(() => db.drop());
    const port = await freePort();
    const base = `http://127.0.0.1:${port}`;
    const post = async (p: string, body: unknown, apiKey?: string) => {
      const res = await fetch(`${base}${p}`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', ...(apiKey ? { authorization: `Bearer ${apiKey}` } : {}) },
        body: JSON.stringify(body),
      });
      return { status: res.status, json: (await res.json()) as any, replayed: res.headers.get('idempotent-replayed') === 'true' };
    };

    let server = await startServer(db.databaseUrl, port);
    const alice = (await post('/v1/agents', { handle: `crash-a-${randomUUID().slice(0, 6)}`, display_name: 'A' })).json.data
      .api_key as string;
    const bob = (await post('/v1/agents', { handle: `crash-b-${randomUUID().slice(0, 6)}`, display_name: 'B' })).json.data
      .api_key as string;
    const group = (await post('/v1/tools/create_group', { name: 'Crash', currency: 'EUR', idempotency_key: `g-${randomUUID()}` }, alice))
      .json.data.group.group_id as string;
    const code = (await post('/v1/tools/create_invite', { group_id: group, idempotency_key: `i-${randomUUID()}` }, alice)).json.data.invite
      .code as string;
    expect((await post('/v1/tools/join_group', { code, idempotency_key: `j-${randomUUID()}` }, bob)).status).toBe(200);

    // Write load: 6 workers adding expenses, each with its own idempotency key; the server is killed mid-way.
    type Attempt = { key: string; payer: string; amount: number; acked?: string };
    const attempts: Attempt[] = [];
    let stop = false;
    const worker = async (w: number) => {
      for (let i = 0; !stop; i++) {
        const a: Attempt = { key: `crash-${w}-${i}-${randomUUID()}`, payer: i % 2 ? bob : alice, amount: 100 + w * 10 + i };
        attempts.push(a);
        try {
          const r = await post(
            '/v1/tools/add_expense',
            { group_id: group, description: a.key, amount_minor: a.amount, idempotency_key: a.key },
            a.payer,
          );
          if (r.status === 200) a.acked = r.json.data.expense.expense_id;
        } catch {
          return; // connection refused/reset: the server is gone
        }
      }
    };
    const load = Promise.all(Array.from({ length: 6 }, (_, w) => worker(w)));
    while (attempts.filter((a) => a.acked).length < 60) await new Promise((r) => setTimeout(r, 20));
    server.kill('SIGKILL');
    stop = true;
    await load;
    // A process ended by a signal has exitCode null and signalCode set; it may already have exited while the workers finished.
    await new Promise((r) => (server.exitCode !== null || server.signalCode !== null ? r(undefined) : server.once('exit', r)));
    const acked = attempts.filter((a) => a.acked);
    expect(acked.length).toBeGreaterThanOrEqual(60);

    server = await startServer(db.databaseUrl, port);
    // Every acknowledged write is there.
    const check = createDb(db.databaseUrl, { poolMax: 2 });
    cleanups.push(() => check.close());
    const stored = await check.prisma.expense.findMany({ where: { groupId: group }, select: { id: true, description: true } });
    const storedIds = new Set(stored.map((e) => e.id));
    expect(acked.filter((a) => !storedIds.has(a.acked!))).toEqual([]);

    // Retries with the same keys: acknowledged ones replay the same expense; each key ends with exactly one expense.
    for (const a of attempts) {
      const r = await post(
        '/v1/tools/add_expense',
        { group_id: group, description: a.key, amount_minor: a.amount, idempotency_key: a.key },
        a.payer,
      );
      expect(r.status).toBe(200);
      if (a.acked) {
        expect(r.replayed).toBe(true);
        expect(r.json.data.expense.expense_id).toBe(a.acked);
      }
    }
    const after = await check.prisma.expense.findMany({ where: { groupId: group }, select: { description: true } });
    const perKey = new Map<string, number>();
    for (const e of after) perKey.set(e.description, (perKey.get(e.description) ?? 0) + 1);
    expect(after.length).toBe(attempts.length);
    expect([...perKey.values()].every((n) => n === 1)).toBe(true);

    server.kill('SIGTERM');
    // verify (the CLI): balances sum to zero and equal the history; every expense's shares sum to its amount.
    const { stdout } = await promisify(execFile)(...cli('verify'), { cwd: serverDir, env: env(db.databaseUrl, port) });
    expect(stdout).toContain('ledger OK');
  });
});
