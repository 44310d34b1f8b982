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

/** Starts `./kitty serve` on a free port; resolves once it prints its address. */
export async function startServerProcess(env: NodeJS.ProcessEnv): Promise<ServerProcess> {
  const port = await freePort();
  const child = spawn(launcher, ['serve'], {
    cwd: serverDir,
    env: quiet({ PORT: String(port), ...env }),
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  child.stdout!.on('data', (d: Buffer) => (out += d.toString()));
  child.stderr!.on('data', (d: Buffer) => (out += d.toString()));
  const exited = new Promise<void>((r) => child.once('exit', () => r()));
  await new Promise<void>((resolve, reject) => {
    const timer = setInterval(() => {
      if (out.includes('Serving on')) {
        clearInterval(timer);
        resolve();
      }
    }, 50);
    void exited.then(() => {
      clearInterval(timer);
      reject(new Error(`kitty serve exited before serving:\n${out}`));
    });
  });
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
    printedUrl: /Serving on (\S+)/.exec(out)![1]!,
    output: () => out,
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
