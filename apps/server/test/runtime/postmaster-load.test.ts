/**
 * The embedded PostgreSQL's postmaster is killed (SIGKILL) while 24 writes are in flight, three
 * rounds in a row, against `./kitty serve` as its own process: the process stays up, every answer
 * is an envelope (200, or 503 SERVICE_UNAVAILABLE / the "outcome unknown" error while the database
 * is away — never a dropped connection), the database is started again by the server itself, writes
 * succeed again after each round, and `./kitty verify` finds the ledger clean at the end.
 */
import { afterAll, describe, expect, it } from 'vitest';
import { spawn, execFile, type ChildProcess } from 'node:child_process';
import { promisify } from 'node:util';
import { chmod, mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import net from 'node:net';
import path from 'node:path';
import { randomUUID } from 'node:crypto';
import { fileURLToPath } from 'node:url';

const serverDir = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const launcher = path.resolve(serverDir, '..', '..', 'kitty');
const children: ChildProcess[] = [];
const cleanups: Array<() => Promise<unknown>> = [];
afterAll(async () => {
  for (const c of children) if (c.exitCode === null && c.signalCode === null) c.kill('SIGTERM');
  await new Promise((r) => setTimeout(r, 1500));
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

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe('the embedded database killed under write load', () => {
  it('keeps the server up, answers envelopes, restarts the database and recovers, three rounds', async () => {
    const dir = await mkdtemp(path.join(tmpdir(), 'kitty-pmload-'));
    cleanups.push(() => rm(dir, { recursive: true, force: true }));
    await chmod(dir, 0o755); // PostgreSQL runs as user postgres when the tests run as root
    const dataDir = path.join(dir, 'data');
    const port = await freePort();
    const env = {
      ...process.env,
      DATABASE_URL: '',
      KITTY_DATA_DIR: dataDir,
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
    const child = spawn(launcher, ['serve'], { cwd: serverDir, env, stdio: ['ignore', 'pipe', 'pipe'] });
    children.push(child);
    let out = '';
    child.stdout!.on('data', (d: Buffer) => (out += d.toString()));
    child.stderr!.on('data', (d: Buffer) => (out += d.toString()));
    let exited: number | string | null = null;
    child.once('exit', (code, signal) => (exited = code ?? signal));
    const end = Date.now() + 60_000;
    while (!out.includes('Serving on')) {
      if (exited !== null || Date.now() > end) throw new Error(`server did not start:\n${out}`);
      await sleep(50);
    }
    const base = `http://127.0.0.1:${port}`;
    const post = async (p: string, body: unknown, apiKey?: string) => {
      const res = await fetch(`${base}${p}`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', ...(apiKey ? { authorization: `Bearer ${apiKey}` } : {}) },
        body: JSON.stringify(body),
      });
      return { status: res.status, json: (await res.json()) as any };
    };
    const health = async () => (await fetch(`${base}/health`)).status;
    const key = (await post('/v1/agents', { handle: `pm-${randomUUID().slice(0, 8)}`, display_name: 'PM' })).json.data.api_key as string;
    const group = (await post('/v1/tools/create_group', { name: 'Load', currency: 'EUR', idempotency_key: `g-${randomUUID()}` }, key)).json
      .data.group.group_id as string;
    const pidOf = async () => Number((await readFile(path.join(dataDir, 'postmaster.pid'), 'utf8')).split('\n')[0]);

    const seen = new Map<string, number>();
    const bad: string[] = [];
    for (let round = 1; round <= 3; round++) {
      let stop = false;
      let acked = 0;
      const worker = async (w: number) => {
        for (let i = 0; !stop; i++) {
          const k = `r${round}-${w}-${i}-${randomUUID()}`;
          try {
            const r =
              w % 2
                ? await post('/v1/tools/add_expense', { group_id: group, description: k, amount_minor: 100 + i, idempotency_key: k }, key)
                : await post('/v1/tools/create_group', { name: k.slice(0, 60), currency: 'EUR', idempotency_key: k }, key);
            const label = r.json.ok ? '200' : `${r.status} ${r.json.error.code}`;
            seen.set(label, (seen.get(label) ?? 0) + 1);
            if (r.status === 200) acked++;
            else if (!(r.status === 503 && r.json.error.code === 'SERVICE_UNAVAILABLE') && r.json.error?.details?.outcome !== 'unknown')
              bad.push(`${r.status} ${JSON.stringify(r.json.error)}`);
          } catch (e) {
            bad.push(`request failed: ${(e as Error).message}`);
            await sleep(50);
          }
        }
      };
      const load = Promise.all(Array.from({ length: 24 }, (_, w) => worker(w)));
      while (acked < 48) await sleep(10);
      const oldPid = await pidOf();
      process.kill(oldPid, 'SIGKILL');
      // The server notices, starts the database again and serves writes again, all while the load runs.
      const until = Date.now() + 45_000;
      while ((await pidOf().catch(() => oldPid)) === oldPid || (await health().catch(() => 0)) !== 200) {
        if (exited !== null) throw new Error(`kitty exited (${exited}) in round ${round}:\n${out}`);
        if (Date.now() > until) throw new Error(`no recovery in round ${round}:\n${out}`);
        await sleep(100);
      }
      const ackedAtRecovery = acked;
      while (acked < ackedAtRecovery + 48) {
        if (Date.now() > until) throw new Error(`writes did not resume in round ${round}: ${JSON.stringify([...seen])}`);
        await sleep(10);
      }
      stop = true;
      await load;
      expect(exited, out).toBeNull();
    }
    expect(bad, JSON.stringify([...seen])).toEqual([]);
    expect(seen.get('200')).toBeGreaterThan(3 * 96);
    expect(exited).toBeNull();

    // The ledger is clean (verify attaches to the server's running database).
    const v = await promisify(execFile)(launcher, ['verify'], { cwd: serverDir, env }).catch((e: { stdout: string; stderr: string }) => e);
    expect(`${v.stdout}${v.stderr}`).toContain('ledger OK');
  }, 240_000);
});
