/**
 * N Kitty server processes (`main.ts serve`, Node 24 + tsx) on one PostgreSQL database and one
 * Redis, with Debian's HAProxy in front (round robin, per request): what docs/scaling.md ("Running N
 * instances") describes, for test/runtime/two-instances.test.ts and bench/instances.ts.
 *
 * HAProxy's configuration is written to a temporary folder and run in the foreground
 * (`haproxy -f cfg -db`) as a child process; it adds `X-Served-By: k1|k2|…` to every response so a
 * test can tell which instance answered. Every port is a free loopback port.
 */
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import net from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const SERVER_DIR = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');

/** The haproxy binary (on PATH, or Debian's /usr/sbin/haproxy when /usr/sbin is not on PATH), or undefined. */
export function findHaproxy(): string | undefined {
  try {
    const found = execFileSync('sh', ['-c', 'command -v haproxy'], { encoding: 'utf8' }).trim();
    if (found) return found;
  } catch {
    // not on PATH
  }
  return existsSync('/usr/sbin/haproxy') ? '/usr/sbin/haproxy' : undefined;
}

async function freePort(): Promise<number> {
  return new Promise<number>((resolve, reject) => {
    const srv = net.createServer();
    srv.once('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const p = (srv.address() as { port: number }).port;
      srv.close(() => resolve(p));
    });
  });
}

interface Instance {
  /** k1, k2, …: the HAProxy server name (X-Served-By). */
  name: string;
  /** Direct address of this process, bypassing the balancer. */
  url: string;
  child: ChildProcess;
  stderr(): string;
}

export interface Cluster {
  /** The balancer's address = every instance's KITTY_BASE_URL. */
  url: string;
  instances: Instance[];
  /** Stops HAProxy, then every instance (SIGTERM, ordered shutdown), and removes the config folder. */
  stop(): Promise<void>;
}

/** Starts one `main.ts serve` on `port`; resolves when it prints "Serving on". */
function startInstance(name: string, port: number, env: NodeJS.ProcessEnv): Promise<Instance> {
  const child = spawn(process.execPath, ['--import', 'tsx', 'src/main.ts', 'serve'], {
    cwd: SERVER_DIR,
    env: { ...env, PORT: String(port), HOST: '127.0.0.1' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  let err = '';
  child.stderr!.on('data', (d) => (err += d));
  return new Promise<Instance>((resolve, reject) => {
    child.stdout!.on('data', (d) => {
      out += d;
      if (out.includes('Serving on')) resolve({ name, url: `http://127.0.0.1:${port}`, child, stderr: () => err });
    });
    child.once('exit', (code) => reject(new Error(`instance ${name} exited ${code} before serving:\n${out}\n${err}`)));
  });
}

async function stopChild(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise((r) => child.once('exit', r));
  child.kill('SIGTERM');
  const timer = setTimeout(() => child.kill('SIGKILL'), 15_000);
  await exited;
  clearTimeout(timer);
}

/** HAProxy configuration: one frontend on `lbPort`, round robin over `ports` per request. */
function haproxyConfig(lbPort: number, ports: number[]): string {
  return [
    'global',
    '  maxconn 4096',
    'defaults',
    '  mode http',
    '  timeout connect 5s',
    '  timeout client 60s',
    '  timeout server 60s',
    'frontend kitty',
    `  bind 127.0.0.1:${lbPort}`,
    '  default_backend kitty',
    'backend kitty',
    '  balance roundrobin',
    // Which instance answered (tests); the client's address appended to X-Forwarded-For (KITTY_TRUST_PROXY).
    '  http-response set-header X-Served-By %[srv_name]',
    '  option forwardfor',
    ...ports.map((p, i) => `  server k${i + 1} 127.0.0.1:${p}`),
    '',
  ].join('\n');
}

/**
 * Starts `n` instances at once (so they race on migrations and key creation, as a deployment does)
 * and HAProxy in front. `env` is every instance's environment (DATABASE_URL, REDIS_URL, …);
 * KITTY_BASE_URL, PORT and HOST are set here.
 */
export async function startCluster(opts: {
  n: number;
  env: NodeJS.ProcessEnv;
  haproxy: string;
  /** Variables of instance `i` (0-based) on top of `env`. */
  envFor?: (i: number) => NodeJS.ProcessEnv;
}): Promise<Cluster> {
  const lbPort = await freePort();
  const url = `http://127.0.0.1:${lbPort}`;
  const ports: number[] = [];
  for (let i = 0; i < opts.n; i++) ports.push(await freePort());
  const env = { ...opts.env, KITTY_BASE_URL: url };
  const dir = await mkdtemp(path.join(tmpdir(), 'kitty-haproxy-'));
  const started = await Promise.allSettled(ports.map((p, i) => startInstance(`k${i + 1}`, p, { ...env, ...opts.envFor?.(i) })));
  const instances = started.flatMap((s) => (s.status === 'fulfilled' ? [s.value] : []));
  let haproxy: ChildProcess | undefined;
  const stop = async () => {
    if (haproxy) await stopChild(haproxy);
    await Promise.all(instances.map((i) => stopChild(i.child)));
    await rm(dir, { recursive: true, force: true });
  };
  try {
    const failed = started.find((s) => s.status === 'rejected');
    if (failed) throw (failed as PromiseRejectedResult).reason;
    const cfg = path.join(dir, 'haproxy.cfg');
    await writeFile(cfg, haproxyConfig(lbPort, ports));
    let log = '';
    haproxy = spawn(opts.haproxy, ['-f', cfg, '-db'], { stdio: ['ignore', 'pipe', 'pipe'] });
    haproxy.stdout!.on('data', (d) => (log += d));
    haproxy.stderr!.on('data', (d) => (log += d));
    const hp = haproxy;
    // Ready when a request through it reaches an instance.
    for (let i = 0; ; i++) {
      if (hp.exitCode !== null) throw new Error(`haproxy exited ${hp.exitCode}:\n${log}`);
      const ok = await fetch(`${url}/health`).then(
        (r) => r.headers.has('x-served-by'),
        () => false,
      );
      if (ok) break;
      if (i > 100) throw new Error(`haproxy did not answer on ${url}:\n${log}`);
      await new Promise((r) => setTimeout(r, 100));
    }
    return { url, instances, stop };
  } catch (e) {
    await stop();
    throw e;
  }
}
