/**
 * Memory and start-up of Kitty alone, in its own process, started the way README line 1 and
 * `pnpm start` start it: `./kitty serve` (one Node 24 process on the TypeScript sources, with the
 * launcher's V8 and malloc settings) on an embedded PostgreSQL in a fresh data folder.
 *
 *   start-up to the first `/health` 200 on a fresh data folder (initdb included) and on an existing one
 *   embedded PostgreSQL alone: initdb + start, and start on an existing folder (in this process)
 *   idle RSS, IDLE seconds after start-up                                     goal ≤ 150 MB
 *   RSS under load (REST get_me, list_currencies and add_expense mixed)       goal ≤ 250 MB
 *   one import_expenses of the documented maximum (2000 rows) under the heap cap, and the RSS after it
 *
 * RSS is VmRSS of /proc/<pid>/status in MiB, split into anonymous memory (heap, malloc) and file
 * pages (mostly the Node binary's own code and data, ~55 MiB for an empty `node -e`). Nothing here
 * fails on a slow machine: it reports.
 *
 * Alone: `pnpm --filter @kitty/server bench:memory`; env MEM_SECONDS (load, default 20),
 * MEM_IDLE_SECONDS (default 10), MEM_CONNECTIONS (default 10); BENCH_ONLY=startup: start-up and idle RSS only.
 * @returns markdown rows `| comparison | figure | goal | figures |` for the docs/benchmarks.md table
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { chmodSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import autocannon from 'autocannon';
import { startEmbeddedPostgres } from '@kitty/db';

const ROOT = path.resolve(import.meta.dirname, '..', '..', '..');
const LAUNCHER = path.join(ROOT, 'kitty');
const NODE = path.join(ROOT, 'node_modules', 'node', 'bin', 'node');
const MAIN = path.join(ROOT, 'apps', 'server', 'src', 'main.ts');
const MiB = 1024;

interface Rss {
  rss: number;
  anon: number;
  file: number;
  hwm: number;
}

/**
 * The V8 flags and malloc environment `./kitty` starts Node with, read from the launcher itself so
 * that the soak runs its target process with the settings users get.
 * @throws when the launcher no longer has the expected shape (`${KITTY_NODE_OPTIONS:-flags}`, `export MALLOC_…=n;`)
 */
export function launcherSettings(): { flags: string[]; env: Record<string, string> } {
  const text = readFileSync(LAUNCHER, 'utf8');
  const flags = /\$\{KITTY_NODE_OPTIONS:-([^}]+)\}/.exec(text)?.[1]?.split(/\s+/);
  const env = Object.fromEntries([...text.matchAll(/export (MALLOC_\w+)=(\d+);/g)].map((m) => [m[1]!, m[2]!]));
  if (!flags || Object.keys(env).length === 0) throw new Error(`${LAUNCHER}: Node flags or MALLOC_* defaults not found`);
  return { flags, env };
}

/** VmRSS, RssAnon, RssFile and VmHWM of `pid`, MiB. */
function rssOf(pid: number): Rss {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const kb = (field: string) => Number(new RegExp(`${field}:\\s+(\\d+)`).exec(status)?.[1] ?? 0) / MiB;
  return { rss: kb('VmRSS'), anon: kb('RssAnon'), file: kb('RssFile'), hwm: kb('VmHWM') };
}

const mib = (n: number) => `${n.toFixed(0)} MB`;
const sec = (ms: number) => `${(ms / 1000).toFixed(2)} s`;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function freePort(): Promise<number> {
  const s = createServer();
  await new Promise<void>((r) => s.listen(0, '127.0.0.1', r));
  const { port } = s.address() as { port: number };
  await new Promise((r) => s.close(r));
  return port;
}

interface Running {
  child: ChildProcess;
  url: string;
  /** ms from spawn to the first `/health` answering 200 */
  startMs: number;
  /** Kitty's own account of its start-up (the "Ready in …" line `serve` prints: module loading, database, migrations, …). */
  phases: Promise<string>;
}

/**
 * Kitty serving `dataDir`; resolves at the first `/health` 200.
 * @param plain true: `node main.ts serve` with Node's and glibc's defaults (no launcher settings), for comparison
 */
async function startKitty(dataDir: string, plain = false): Promise<Running> {
  const port = await freePort();
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    PORT: String(port),
    KITTY_DATA_DIR: dataDir,
    KITTY_LOG: 'silent',
    KITTY_RATE_LIMIT: '1000000000',
    KITTY_RATE_LIMIT_ANON: '1000000000',
    KITTY_REGISTER_LIMIT_HOUR: '0',
    KITTY_REGISTER_LIMIT_DAY: '0',
  };
  delete env.DATABASE_URL; // the embedded PostgreSQL, as README line 1 runs it
  const [cmd, args] = plain ? [NODE, [MAIN, 'serve']] : [LAUNCHER, ['serve']];
  const t0 = performance.now();
  const child = spawn(cmd, args, { env, stdio: ['ignore', 'pipe', 'inherit'] });
  const phases = new Promise<string>((resolve) => {
    let out = '';
    child.stdout!.on('data', (chunk: Buffer) => {
      out += chunk.toString();
      const line = /^Ready in .*$/m.exec(out)?.[0];
      if (line) resolve(line);
    });
    child.once('exit', () => resolve('(no "Ready in" line)'));
  });
  const url = `http://127.0.0.1:${port}`;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`${cmd} serve exited ${child.exitCode} before answering`);
    const ok = await fetch(`${url}/health`).then(
      (r) => r.status === 200,
      () => false,
    );
    if (ok) return { child, url, startMs: performance.now() - t0, phases };
    await sleep(20);
  }
}

/** SIGTERM, then the exit code (0 = clean ordered shutdown). */
async function stop(child: ChildProcess): Promise<number | null> {
  if (child.exitCode !== null) return child.exitCode;
  const exited = new Promise<number | null>((r) => child.once('exit', (code) => r(code)));
  child.kill('SIGTERM');
  return exited;
}

async function post(url: string, tool: string, body: unknown, key?: string): Promise<any> {
  const res = await fetch(`${url}${tool}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...(key ? { authorization: `Bearer ${key}` } : {}) },
    body: JSON.stringify(body),
  });
  const j = (await res.json()) as { ok: boolean; data?: unknown; error?: unknown };
  if (!j.ok) throw new Error(`${tool}: ${JSON.stringify(j.error)}`);
  return j.data;
}

/** A Splitwise export of `rows` expenses between two people (the documented maximum is 2000 rows, 1,000,000 chars). */
function splitwiseCsv(rows: number): string {
  const lines = ['Date,Description,Category,Cost,Currency,Ann,Ben'];
  for (let i = 0; i < rows; i++) {
    const cents = 1000 + (i % 500) * 2;
    const half = (cents / 200).toFixed(2);
    lines.push(
      `2024-${String((i % 12) + 1).padStart(2, '0')}-01,Shared item ${i},General,${(cents / 100).toFixed(2)},EUR,${half},-${half}`,
    );
  }
  return lines.join('\n');
}

interface Loaded {
  idle: Rss;
  loadMax: number;
  rps: number;
  errors: number;
  samples: number;
}

/** Idle RSS `idleSeconds` after start-up, then RSS sampled every 250 ms under a mixed load of one agent. */
async function idleAndLoad(kitty: Running, idleSeconds: number, seconds: number, connections: number): Promise<Loaded> {
  await sleep(idleSeconds * 1000);
  const pid = kitty.child.pid!;
  const idle = rssOf(pid);
  const handle = `mem-${randomUUID().slice(0, 8)}`;
  const reg = await post(kitty.url, '/v1/agents', { handle, display_name: 'Memory bench' });
  const key: string = reg.api_key;
  // One group per connection, as agents spread over groups (writes to one group queue on its lock).
  const groupIds: string[] = [];
  for (let i = 0; i < connections; i++) {
    const g = await post(kitty.url, '/v1/tools/create_group', { name: `Memory ${i}`, currency: 'EUR', idempotency_key: randomUUID() }, key);
    groupIds.push(g.group.group_id);
  }
  let nextGroup = 0;
  const headers = { authorization: `Bearer ${key}`, 'content-type': 'application/json' };
  const samples: number[] = [];
  const sampler = setInterval(() => samples.push(rssOf(pid).rss), 250);
  const result = await autocannon({
    url: kitty.url,
    connections,
    duration: seconds,
    requests: [
      { method: 'POST', path: '/v1/tools/get_me', headers, body: '{}' },
      { method: 'POST', path: '/v1/tools/list_currencies', headers, body: '{}' },
      {
        method: 'POST',
        path: '/v1/tools/add_expense',
        headers,
        setupRequest: (req) => ({
          ...req,
          body: JSON.stringify({
            group_id: groupIds[nextGroup++ % connections],
            description: 'Coffee',
            amount_minor: 350,
            idempotency_key: randomUUID(),
          }),
        }),
      },
    ],
  });
  clearInterval(sampler);
  return {
    idle,
    loadMax: Math.max(...samples),
    rps: result.requests.average,
    errors: result.non2xx + result.errors + result.timeouts,
    samples: samples.length,
  };
}

/** One import_expenses of the documented maximum (2000 rows) by a new agent pair; ms taken. */
async function bigImport(url: string): Promise<{ ms: number; imported: number; chars: number }> {
  const [ann, ben] = [`mem-${randomUUID().slice(0, 8)}`, `mem-${randomUUID().slice(0, 8)}`];
  const keyA: string = (await post(url, '/v1/agents', { handle: ann, display_name: 'Ann' })).api_key;
  const keyB: string = (await post(url, '/v1/agents', { handle: ben, display_name: 'Ben' })).api_key;
  const g = await post(url, '/v1/tools/create_group', { name: 'Import', currency: 'EUR', idempotency_key: randomUUID() }, keyA);
  const groupId: string = g.group.group_id;
  const invite = await post(url, '/v1/tools/create_invite', { group_id: groupId, max_uses: 1, idempotency_key: randomUUID() }, keyA);
  await post(url, '/v1/tools/join_group', { code: invite.invite.code, idempotency_key: randomUUID() }, keyB);
  const csv = splitwiseCsv(2000);
  const t = performance.now();
  const r = await post(
    url,
    '/v1/tools/import_expenses',
    { group_id: groupId, format: 'splitwise', csv, mapping: { Ann: ann, Ben: ben }, idempotency_key: randomUUID() },
    keyA,
  );
  return { ms: performance.now() - t, imported: r.imported_expenses as number, chars: csv.length };
}

/**
 * Runs the memory and start-up comparison, printing each figure next to its goal, and the same idle
 * and load against `node main.ts serve` without the launcher's settings (Node's and glibc's defaults).
 * @returns markdown table rows
 */
export async function benchMemory(): Promise<string[]> {
  const seconds = Number(process.env.MEM_SECONDS ?? 20);
  const idleSeconds = Number(process.env.MEM_IDLE_SECONDS ?? 10);
  const connections = Number(process.env.MEM_CONNECTIONS ?? 10);
  const tmp = mkdtempSync(path.join(os.tmpdir(), 'kitty-mem-'));
  chmodSync(tmp, 0o755); // the embedded PostgreSQL runs as the postgres user when we are root
  let kitty: Running | undefined;
  try {
    console.log(`\nMemory and start-up of Kitty alone (./kitty serve: one Node process, embedded PostgreSQL), Node ${process.version}`);

    // Embedded PostgreSQL alone, to separate initdb from Kitty's own start-up.
    const pgDir = path.join(tmp, 'pg-only');
    let t = performance.now();
    const pgFresh = await startEmbeddedPostgres({ dataDir: pgDir, create: true });
    const pgInitMs = performance.now() - t;
    await pgFresh.stop();
    t = performance.now();
    const pgAgain = await startEmbeddedPostgres({ dataDir: pgDir });
    const pgStartMs = performance.now() - t;
    await pgAgain.stop();

    const dataDir = path.join(tmp, 'data');
    kitty = await startKitty(dataDir);
    const freshMs = kitty.startMs;
    const freshExit = await stop(kitty.child);
    kitty = await startKitty(dataDir);
    const existingMs = kitty.startMs;
    const existingPhases = await kitty.phases;
    console.log(
      `  start-up to first /health 200, fresh data folder     ${sec(freshMs)}  (embedded PostgreSQL alone: initdb + start ${sec(pgInitMs)})`,
    );
    console.log(
      `  start-up to first /health 200, existing data folder  ${sec(existingMs)}  goal ≤ 1.5 s  (embedded PostgreSQL alone: start ${sec(pgStartMs)})`,
    );
    console.log(`  Kitty's own account of that start: ${existingPhases}`);
    if (process.env.BENCH_ONLY === 'startup') {
      // Start-up and idle RSS only: `BENCH_ONLY=startup pnpm bench` (or bench:memory).
      await sleep(idleSeconds * 1000);
      const idle = rssOf(kitty.child.pid!);
      console.log(
        `  idle RSS ${idleSeconds} s after start-up       ${mib(idle.rss).padStart(7)}  goal ≤ 150 MB  (anonymous ${mib(idle.anon)} + file pages ${mib(idle.file)})`,
      );
      return [
        `| Kitty idle RSS (\`./kitty serve\` alone, ${idleSeconds} s after start) | ${mib(idle.rss)} | ≤ 150 MB | anonymous ${mib(idle.anon)} + file pages ${mib(idle.file)} (the Node binary) |`,
        `| start-up to first \`/health\` 200, existing data folder | ${sec(existingMs)} | ≤ 1.5 s | ${existingPhases} |`,
      ];
    }

    const tuned = await idleAndLoad(kitty, idleSeconds, seconds, connections);
    const imp = await bigImport(kitty.url);
    const afterImport = rssOf(kitty.child.pid!);
    const exitCode = await stop(kitty.child);
    kitty = await startKitty(dataDir, true);
    const plain = await idleAndLoad(kitty, idleSeconds, seconds, connections);
    await stop(kitty.child);
    kitty = undefined;

    const mix = `get_me/list_currencies/add_expense, ${connections} connections, ${seconds} s`;
    console.log(
      `  idle RSS ${idleSeconds} s after start-up       ${mib(tuned.idle.rss).padStart(7)}  goal ≤ 150 MB  (anonymous ${mib(tuned.idle.anon)} + file pages ${mib(tuned.idle.file)}; Node defaults ${mib(plain.idle.rss)})`,
    );
    console.log(
      `  RSS under load (max of ${tuned.samples} samples) ${mib(tuned.loadMax).padStart(7)}  goal ≤ 250 MB  (${mix}; Node defaults ${mib(plain.loadMax)})`,
    );
    console.log(
      `  throughput of that load                ${tuned.rps.toFixed(0).padStart(5)} req/s vs ${plain.rps.toFixed(0)} req/s with Node defaults: ${(tuned.rps / plain.rps).toFixed(2)}x${tuned.errors + plain.errors ? `  (${tuned.errors + plain.errors} errors!)` : ''}`,
    );
    console.log(
      `  import_expenses, 2000 rows (${(imp.chars / 1000).toFixed(0)} kB)  ${sec(imp.ms)}, ${imp.imported} expenses; RSS after ${mib(afterImport.rss)}, peak since start ${mib(afterImport.hwm)}`,
    );
    console.log(`  SIGTERM: exit code ${freshExit} (fresh), ${exitCode} (after the load and the import)`);

    return [
      `| Kitty idle RSS (\`./kitty serve\` alone, ${idleSeconds} s after start) | ${mib(tuned.idle.rss)} | ≤ 150 MB | anonymous ${mib(tuned.idle.anon)} + file pages ${mib(tuned.idle.file)} (the Node binary); ${mib(plain.idle.rss)} with Node's defaults |`,
      `| Kitty RSS under load (${mix}) | ${mib(tuned.loadMax)} | ≤ 250 MB | ${mib(plain.loadMax)} with Node's defaults; ${tuned.rps.toFixed(0)} vs ${plain.rps.toFixed(0)} req/s (${(tuned.rps / plain.rps).toFixed(2)}x); peak incl. a 2000-row import (${sec(imp.ms)}) ${mib(afterImport.hwm)} |`,
      `| start-up to first \`/health\` 200, fresh data folder | ${sec(freshMs)} | report | embedded PostgreSQL initdb + start alone ${sec(pgInitMs)} |`,
      `| start-up to first \`/health\` 200, existing data folder | ${sec(existingMs)} | ≤ 1.5 s | embedded PostgreSQL start alone ${sec(pgStartMs)}; ${existingPhases} |`,
    ];
  } finally {
    if (kitty) await stop(kitty.child);
    rmSync(tmp, { recursive: true, force: true });
  }
}

if (import.meta.main) {
  const rows = await benchMemory();
  console.log('\n| comparison | figure | goal | figures |\n|---|---|---|---|\n' + rows.join('\n'));
}
