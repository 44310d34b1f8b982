/**
 * `./kitty` as its own process, for tests of the CLI: `kittyCli` runs a command to its end,
 * `startServerProcess` runs `serve` on a free port and gives REST helpers. The environment given is
 * laid over quiet test settings (no logs, no scheduler, no Redis, limits out of the way).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import net from 'node:net';
import path from 'node:path';
import { randomUUID } from 'node:crypto';
import { fileURLToPath } from 'node:url';

const serverDir = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const launcher = path.resolve(serverDir, '..', '..', 'kitty');

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

const quiet = (env: NodeJS.ProcessEnv): NodeJS.ProcessEnv => ({
  ...process.env,
  HOST: '127.0.0.1',
  KITTY_LOG: 'silent',
  KITTY_SCHEDULER: 'off',
  REDIS_URL: '',
  KITTY_RATE_LIMIT: '1000000',
  KITTY_RATE_LIMIT_ANON: '1000000',
  KITTY_REGISTER_LIMIT_HOUR: '0',
  KITTY_REGISTER_LIMIT_DAY: '0',
  ...env,
});

/** Runs `./kitty ARGS` to its end; `output` is stdout and stderr together. */
export async function kittyCli(args: string[], env: NodeJS.ProcessEnv): Promise<{ code: number | null; output: string }> {
  const child = spawn(launcher, args, { cwd: serverDir, env: quiet(env), stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  child.stdout.on('data', (d: Buffer) => (output += d.toString()));
  child.stderr.on('data', (d: Buffer) => (output += d.toString()));
  const code = await new Promise<number | null>((resolve) => child.once('close', resolve));
  return { code, output };
}

export interface ServerProcess {
  child: ChildProcess;
  /** Where the server listens: http://127.0.0.1:PORT. */
  url: string;
  /** The address the start-up banner prints ("Serving on …"): the base URL people are told to use. */
  printedUrl: string;
  output(): string;
  /** Registers an agent; returns its API key. */
  register(prefix: string): Promise<string>;
  /** POST /v1/tools/NAME; the parsed answer (the envelope). */
  call(name: string, args: unknown, apiKey: string): Promise<any>;
  /** SIGTERM and wait for the exit (idempotent). */
  stop(): Promise<void>;
}

/**
 * Waits until `child` (a `kitty serve` process) prints its address ("Serving on …"); rejects when it exits first or
 * has not served after 60 s. Resolves to a reader of its output (stdout and stderr together), which keeps growing.
 */
export function untilServing(child: ChildProcess): Promise<() => string> {
  let out = '';
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`server did not start:\n${out}`)), 60_000);
    const onData = (d: Buffer) => {
      out += d.toString();
      if (out.includes('Serving on')) {
        clearTimeout(timer);
        resolve(() => out);
      }
    };
    child.stdout!.on('data', onData);
    child.stderr!.on('data', onData);
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`server exited (${code}) before serving:\n${out}`));
    });
  });
}

/** Starts `./kitty serve` on a free port; resolves once it prints its address. */
export async function startServerProcess(env: NodeJS.ProcessEnv): Promise<ServerProcess> {
  const port = await freePort();
  const child = spawn(launcher, ['serve'], {
    cwd: serverDir,
    env: quiet({ PORT: String(port), ...env }),
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const exited = new Promise<void>((r) => child.once('exit', () => r()));
  const out = await untilServing(child);
  const url = `http://127.0.0.1:${port}`;
  const post = async (p: string, body: unknown, apiKey?: string) => {
    const res = await fetch(`${url}${p}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...(apiKey ? { authorization: `Bearer ${apiKey}` } : {}) },
      body: JSON.stringify(body),
    });
    return (await res.json()) as any;
  };
  let stopping: Promise<void> | undefined;
  return {
    child,
    url,
    printedUrl: /Serving on (\S+)/.exec(out())![1]!,
    output: out,
    async register(prefix) {
      const r = await post('/v1/agents', { handle: `${prefix}-${randomUUID().slice(0, 8)}`, display_name: prefix });
      if (!r.ok) throw new Error(`register failed: ${JSON.stringify(r)}`);
      return r.data.api_key as string;
    },
    call: (name, args, apiKey) => post(`/v1/tools/${name}`, args, apiKey),
    stop() {
      stopping ??= (async () => {
        if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
        await exited;
      })();
      return stopping;
    },
  };
}
