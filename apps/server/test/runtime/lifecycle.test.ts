/**
 * The server as a user runs it: `./kitty serve` (README line 1), one Node process with the embedded
 * PostgreSQL (no DATABASE_URL). Two servers with two data folders side by side; `verify` next to a running
 * server; SIGTERM/SIGINT with requests in flight must drain them and exit 0 without error output.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { chmod, mkdtemp, rm } from 'node:fs/promises';
import http from 'node:http';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { SERVER_DIR } from '../paths.ts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const LAUNCHER = path.resolve(SERVER_DIR, '..', '..', 'kitty');

/** Environment for a child: nothing from the test run that would pick another database. */
function childEnv(extra: Record<string, string>): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...process.env, PORT: '0', KITTY_LOG: 'warn', KITTY_SCHEDULER: 'on', ...extra };
  delete env.DATABASE_URL;
  delete env.REDIS_URL;
  delete env.INIT_CWD;
  delete env.KITTY_EMBEDDED_PG_PORT;
  return env;
}

interface Proc {
  child: ChildProcess;
  stdout: () => string;
  stderr: () => string;
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null; at: number }>;
  /** Resolves when stdout contains `text`. */
  waitFor(text: string | RegExp): Promise<string>;
}

function run(args: string[], env: NodeJS.ProcessEnv): Proc {
  const child = spawn(LAUNCHER, args, {
    cwd: SERVER_DIR,
    env,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  let err = '';
  const waiters: Array<() => void> = [];
  child.stdout!.on('data', (d) => {
    out += d;
    for (const w of waiters.splice(0)) w();
  });
  child.stderr!.on('data', (d) => (err += d));
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null; at: number }>((resolve) =>
    child.once('exit', (code, signal) => {
      for (const w of waiters.splice(0)) w();
      resolve({ code, signal, at: performance.now() });
    }),
  );
  const waitFor = (text: string | RegExp) =>
    new Promise<string>((resolve, reject) => {
      const check = () => {
        const m = typeof text === 'string' ? out.includes(text) : text.test(out);
        if (m) return resolve(out);
        if (child.exitCode !== null || child.signalCode !== null) return reject(new Error(`exited before "${text}":\n${out}\n${err}`));
        waiters.push(check);
      };
      check();
    });
  return { child, stdout: () => out, stderr: () => err, exited, waitFor };
}

async function startServer(dataDir: string): Promise<{ proc: Proc; url: string; dbPort: number }> {
  const proc = run(['serve'], childEnv({ KITTY_DATA_DIR: dataDir }));
  const out = await proc.waitFor(/Database: .*\n/);
  const url = /Serving on (http:\/\/\S+)/.exec(out)![1]!;
  const dbPort = Number(/Database: embedded PostgreSQL at 127\.0\.0\.1:(\d+), data folder (.*), started by this process/.exec(out)![1]);
  expect(out).toContain(`data folder ${dataDir},`);
  return { proc, url, dbPort };
}

async function post(url: string, body: unknown, apiKey?: string): Promise<{ status: number; json: any }> {
  const res = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...(apiKey ? { authorization: `Bearer ${apiKey}` } : {}) },
    body: JSON.stringify(body),
  });
  return { status: res.status, json: await res.json() };
}

let n = 0;
async function register(url: string): Promise<string> {
  const r = await post(`${url}/v1/agents`, { handle: `life-${process.pid}-${n++}`, display_name: 'Life' });
  expect(r.status).toBe(200);
  return r.json.data.api_key as string;
}

/**
 * Starts a POST whose body is only half sent: the server has the request (it is in flight) and
 * cannot answer before `finish()` sends the rest.
 */
function halfSentRequest(url: string, pathName: string, body: unknown, apiKey: string) {
  const payload = Buffer.from(JSON.stringify(body));
  const u = new URL(pathName, url);
  const req = http.request({
    host: u.hostname,
    port: u.port,
    path: u.pathname,
    method: 'POST',
    agent: false,
    headers: { 'content-type': 'application/json', 'content-length': payload.length, authorization: `Bearer ${apiKey}` },
  });
  const response = new Promise<{ status: number; json: any }>((resolve, reject) => {
    req.on('response', (res) => {
      let text = '';
      res.on('data', (d) => (text += d));
      res.on('end', () => resolve({ status: res.statusCode!, json: JSON.parse(text) }));
    });
    req.on('error', reject);
  });
  req.write(payload.subarray(0, 10));
  return { response, finish: () => req.end(payload.subarray(10)) };
}

describe('the server process (embedded PostgreSQL)', () => {
  let tmp: string;
  let a: Awaited<ReturnType<typeof startServer>>;
  let b: Awaited<ReturnType<typeof startServer>>;
  const dirA = () => path.join(tmp, 'a');
  const dirB = () => path.join(tmp, 'b');

  beforeAll(async () => {
    tmp = await mkdtemp(path.join(tmpdir(), 'kitty-life-'));
    await chmod(tmp, 0o711); // as root, the "postgres" user must be able to enter it
    [a, b] = await Promise.all([startServer(dirA()), startServer(dirB())]);
  });
  afterAll(async () => {
    for (const s of [a, b]) if (s && s.proc.child.exitCode === null) s.proc.child.kill('SIGTERM');
    await Promise.all([a?.proc.exited, b?.proc.exited]);
    await rm(tmp, { recursive: true, force: true });
  });

  it('a taken port stops serve at once with the variable to change, before any database is made', async () => {
    const port = Number(new URL(a.url).port);
    const dir = path.join(tmp, 'taken');
    const proc = run(['serve'], childEnv({ KITTY_DATA_DIR: dir, PORT: String(port) }));
    const { code } = await proc.exited;
    expect(code).toBe(2);
    expect(proc.stderr()).toContain(`PORT=${port}: 127.0.0.1:${port} is already in use`);
    expect(proc.stderr()).toContain('Set PORT to a free port');
    expect(proc.stderr()).not.toMatch(/\n\s+at /); // no stack trace
    expect(existsSync(dir)).toBe(false); // no initdb ran
  });

  it('a start-up that fails after its database was started (while the modules loaded) stops that database', async () => {
    const dir = path.join(tmp, 'bad-clients');
    // Read when the OAuth server is set up, after the database and migrations: the embedded server is running by then.
    const proc = run(['serve'], childEnv({ KITTY_DATA_DIR: dir, KITTY_OAUTH_CLIENTS: 'not json' }));
    const { code } = await proc.exited;
    expect(code).toBe(1);
    expect(proc.stderr()).toContain('SyntaxError');
    expect(existsSync(path.join(dir, 'PG_VERSION'))).toBe(true); // the database was made and started…
    expect(existsSync(path.join(dir, 'postmaster.pid'))).toBe(false); // …and stopped before the process exited
  });

  it('runs two servers with two data folders side by side, each on its own database port', async () => {
    expect(a.dbPort).not.toBe(b.dbPort);
    expect(a.url).not.toBe(b.url);
    const keyA = await register(a.url);
    // The key exists only in A's database.
    expect((await post(`${a.url}/v1/tools/get_me`, {}, keyA)).status).toBe(200);
    expect((await post(`${b.url}/v1/tools/get_me`, {}, keyA)).status).toBe(401);
  });

  it('./kitty leaves one process: Node 24 running main.ts, with the launcher memory settings, no wrapper', () => {
    const pid = a.proc.child.pid!;
    const cmdline = readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').filter(Boolean);
    expect(path.basename(cmdline[0]!)).toBe('node');
    expect(cmdline).toContain('--max-semi-space-size=16');
    expect(cmdline).toContain('--heap-growing-percent=100');
    expect(cmdline.at(-2)).toMatch(/apps\/server\/src\/main\.ts$/);
    // The launcher's malloc settings reach Node, and Node keeps them from its children.
    const environ = readFileSync(`/proc/${pid}/environ`, 'utf8').split('\0');
    expect(environ).toContain('MALLOC_ARENA_MAX=2');
    // Its children are the embedded PostgreSQL only.
    const children = readFileSync(`/proc/${pid}/task/${pid}/children`, 'utf8').trim().split(/\s+/).filter(Boolean);
    expect(children.length).toBeGreaterThan(0);
    for (const c of children) {
      expect(readFileSync(`/proc/${c}/cmdline`, 'utf8')).toMatch(/postgres/);
      expect(readFileSync(`/proc/${c}/environ`, 'utf8')).not.toContain('MALLOC_ARENA_MAX');
    }
  });

  it('verify next to a running server checks its database, says which, leaves it running and exits at once', async () => {
    const key = await register(a.url);
    expect(
      (await post(`${a.url}/v1/tools/create_group`, { name: 'Verify', currency: 'EUR', idempotency_key: 'verify-group-1' }, key)).status,
    ).toBe(200);

    const v = run(['verify'], childEnv({ KITTY_DATA_DIR: dirA() }));
    await v.waitFor('ledger OK');
    const printedAt = performance.now();
    const { code, at } = await v.exited;
    expect(code).toBe(0);
    expect(v.stdout()).toContain(`verify: embedded PostgreSQL at 127.0.0.1:${a.dbPort}, data folder ${dirA()}, already running`);
    expect(v.stdout()).toMatch(/checked [1-9]\d* groups/);
    expect(v.stderr()).toBe('');
    // It used to linger ~10 s after printing; exiting is immediate now (generous bound).
    expect(at - printedAt).toBeLessThan(5_000);
    // The server's database is still up: a request that needs it succeeds.
    expect((await post(`${a.url}/v1/tools/get_me`, {}, key)).status).toBe(200);
  });

  it('verify refuses a data folder without a database instead of creating an empty one', async () => {
    const empty = path.join(tmp, 'empty');
    const v = run(['verify'], childEnv({ KITTY_DATA_DIR: empty }));
    const { code } = await v.exited;
    expect(code).toBe(2);
    expect(v.stderr()).toContain(`there is no Kitty database in ${empty}`);
    expect(existsSync(path.join(empty, 'PG_VERSION'))).toBe(false);
  });

  for (const signal of ['SIGTERM', 'SIGINT'] as const) {
    it(`${signal} with requests in flight: answers them, stops in order and exits 0 without error output`, async () => {
      const s = signal === 'SIGTERM' ? a : b;
      const dir = signal === 'SIGTERM' ? dirA() : dirB();
      const key = await register(s.url);
      // In flight: requests whose bodies are half sent when the signal arrives.
      const inFlight = Array.from({ length: 5 }, (_, i) =>
        halfSentRequest(
          s.url,
          '/v1/tools/create_group',
          { name: `In flight ${i}`, currency: 'EUR', idempotency_key: `${signal}-in-flight-${i}` },
          key,
        ),
      );
      // And a burst of ordinary requests racing the signal.
      const burst = Array.from({ length: 20 }, (_, i) =>
        post(`${s.url}/v1/tools/create_group`, { name: `Burst ${i}`, currency: 'EUR', idempotency_key: `${signal}-burst-${i}` }, key).catch(
          (e: Error) => e,
        ),
      );
      await post(`${s.url}/v1/tools/get_me`, {}, key); // a round trip: the half-sent requests have arrived
      s.proc.child.kill(signal);
      await s.proc.waitFor(`${signal}: shutting down`);
      for (const r of inFlight) r.finish();
      const answered = await Promise.all(inFlight.map((r) => r.response));
      for (const r of answered) {
        expect(r.status).toBe(200);
        expect(r.json.data.group.name).toMatch(/^In flight/);
      }
      for (const r of await Promise.all(burst)) {
        // Accepted before the close: answered (200), or 503 while closing; never a 500. Requests
        // the server never accepted fail to connect, which is the client's to retry.
        if (r instanceof Error) continue;
        expect([200, 503]).toContain(r.status);
      }
      const { code, signal: killedBy } = await s.proc.exited;
      expect({ code, killedBy, stderr: s.proc.stderr() }).toEqual({ code: 0, killedBy: null, stderr: '' });
      // The embedded database was stopped last (its pid file is gone).
      expect(existsSync(path.join(dir, 'postmaster.pid'))).toBe(false);
    });
  }
});
