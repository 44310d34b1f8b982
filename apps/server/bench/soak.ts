/**
 * `pnpm --filter @kitty/server soak [minutes]`: mixed traffic against a Kitty server process for
 * N minutes (default 10; SOAK_MINUTES) at SOAK_RATE requests/s (default 40), printing the server's
 * RSS every 15 s (SOAK_SAMPLE_MS) and, at the end, whether it ended within 10% of where it
 * levelled off (the median of the samples between 25% and 50% of the run). Not part of
 * `pnpm test`: it reports, it does not fail on a slow machine (exit code 0 either way, unless
 * the run itself breaks).
 *
 * Traffic (per request, by weight): register agents (new agents all along, so per-agent caches
 * are exercised), create groups, invite and join, add expenses, balances, expense lists, get_me,
 * MCP tools/call, /mcp/docs search, invite pages, wrong keys, key rotation.
 * Uses a fresh database on DATABASE_URL's server (default 127.0.0.1:5432, packages/db testing).
 * SOAK_HEAPSNAPSHOT=<dir> writes heap snapshots there (at warm-up and at the end: they inflate RSS); SOAK_SNAPSHOT_OVER_MB=<n>
 * one when the live heap passes n MB during the run, there or in the temporary folder (soak-target.ts).
 * KITTY_NODE_OPTIONS replaces the launcher's V8 flags for the server, as it does for `./kitty`.
 */
import { spawn } from 'node:child_process';
import { createInterface } from 'node:readline';
import { randomUUID } from 'node:crypto';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { createTestDatabase } from '@kitty/db';
import { generateApiKey } from '@kitty/core';
import { launcherSettings } from './memory.ts';

const MINUTES = Number(process.argv[2] ?? process.env.SOAK_MINUTES ?? 10);
const RATE = Number(process.env.SOAK_RATE ?? 40);
const SAMPLE_MS = Number(process.env.SOAK_SAMPLE_MS ?? 15_000);
const serverDir = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');

interface Sample {
  atS: number;
  rss: number;
  heapUsed: number;
  heapTotal: number;
  external: number;
  caches: Record<string, number>;
}

const db = await createTestDatabase();
// Node 24 on the sources with the launcher's V8 flags and malloc settings, as `./kitty serve` runs; KITTY_NODE_OPTIONS
// replaces the flags, as it does for the launcher (to compare settings).
const launcher = launcherSettings();
const flags = process.env.KITTY_NODE_OPTIONS ? process.env.KITTY_NODE_OPTIONS.split(/\s+/).filter(Boolean) : launcher.flags;
console.log(`soak: server flags ${flags.join(' ')}`);
const child = spawn(process.execPath, [...flags, '--expose-gc', 'bench/soak-target.ts'], {
  cwd: serverDir,
  env: { ...process.env, ...launcher.env, DATABASE_URL: db.databaseUrl, SOAK_SAMPLE_MS: String(SAMPLE_MS) },
  stdio: ['ignore', 'pipe', 'inherit'],
});
const samples: Sample[] = [];
const collected: Array<Omit<Sample, 'atS'>> = [];
/** Asks the target for a sample after a full GC and waits for it. */
async function collect(): Promise<void> {
  const n = collected.length;
  child.kill('SIGUSR2');
  while (collected.length === n) await new Promise((r) => setTimeout(r, 50));
}
let started = 0;
const url = await new Promise<string>((resolve, reject) => {
  child.once('exit', (code) => reject(new Error(`soak target exited (${code})`)));
  createInterface({ input: child.stdout! }).on('line', (line) => {
    let msg: { url?: string; sample?: Omit<Sample, 'atS'>; collected?: Omit<Sample, 'atS'> };
    try {
      msg = JSON.parse(line);
    } catch {
      return;
    }
    if (msg.url) resolve(msg.url);
    if (msg.collected) {
      collected.push(msg.collected);
      console.log(
        `        live heap after a full GC: ${(msg.collected.heapUsed / 1048576).toFixed(1)} MB (rss ${(msg.collected.rss / 1048576).toFixed(0)} MB)`,
      );
    }
    if (msg.sample) {
      const s = { atS: started ? Math.round((Date.now() - started) / 1000) : 0, ...msg.sample };
      samples.push(s);
      const mb = (n: number) => (n / 1048576).toFixed(0).padStart(5);
      const caches = Object.entries(s.caches)
        .map(([k, v]) => `${k}=${v}`)
        .join(' ');
      console.log(
        `${String(s.atS).padStart(5)} s  rss ${mb(s.rss)} MB  heap ${mb(s.heapUsed)}/${mb(s.heapTotal)} MB  external ${mb(s.external)} MB  ${caches}`,
      );
    }
  });
});

// ---- traffic -------------------------------------------------------------------------------
interface Agent {
  key: string;
  groups: string[];
}
const agents: Agent[] = [];
const invites: string[] = [];
const counts = { ok: 0, clientError: 0, serverError: 0, failed: 0 };

async function call(p: string, body?: unknown, key?: string, headers: Record<string, string> = {}): Promise<{ status: number; json: any }> {
  const res = await fetch(`${url}${p}`, {
    method: body === undefined ? 'GET' : 'POST',
    headers: {
      ...(body === undefined ? {} : { 'content-type': 'application/json' }),
      ...(key ? { authorization: `Bearer ${key}` } : {}),
      ...headers,
    },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  const text = await res.text();
  if (res.status < 400) counts.ok++;
  else if (res.status < 500) counts.clientError++;
  else counts.serverError++;
  try {
    return { status: res.status, json: JSON.parse(text) };
  } catch {
    return { status: res.status, json: undefined };
  }
}

const pick = <T>(xs: T[]): T | undefined => xs[Math.floor(Math.random() * xs.length)];
const key = () => `soak-${randomUUID()}`;

async function register(): Promise<void> {
  const r = await call('/v1/agents', { handle: `soak-${randomUUID().slice(0, 12)}`, display_name: 'Soak' });
  if (r.status === 200) agents.push({ key: r.json.data.api_key, groups: [] });
}

const actions: Array<[number, () => Promise<unknown>]> = [
  [4, register],
  [
    5,
    async () => {
      const a = pick(agents);
      if (!a) return register();
      const r = await call(
        '/v1/tools/create_group',
        { name: `G ${randomUUID().slice(0, 6)}`, currency: 'EUR', idempotency_key: key() },
        a.key,
      );
      if (r.status === 200) a.groups.push(r.json.data.group.group_id);
    },
  ],
  [
    4,
    async () => {
      const a = agents.find((x) => x.groups.length) ?? pick(agents);
      const g = a && pick(a.groups);
      if (!a || !g) return;
      const r = await call('/v1/tools/create_invite', { group_id: g, idempotency_key: key() }, a.key);
      if (r.status === 200) invites.push(r.json.data.invite.code);
      if (invites.length > 500) invites.shift();
    },
  ],
  [
    4,
    async () => {
      const a = pick(agents);
      const code = pick(invites);
      if (!a || !code) return;
      const r = await call('/v1/tools/join_group', { code, idempotency_key: key() }, a.key);
      if (r.status === 200) a.groups.push(r.json.data.group?.group_id ?? r.json.data.group_id);
    },
  ],
  [
    25,
    async () => {
      const a = pick(agents.filter((x) => x.groups.length));
      const g = a && pick(a.groups);
      if (!a || !g) return;
      await call(
        '/v1/tools/add_expense',
        { group_id: g, description: 'Soak', amount_minor: 100 + Math.floor(Math.random() * 10_000), idempotency_key: key() },
        a.key,
      );
    },
  ],
  [
    12,
    async () => {
      const a = pick(agents.filter((x) => x.groups.length));
      const g = a && pick(a.groups);
      if (a && g) await call('/v1/tools/get_balances', { group_id: g }, a.key);
    },
  ],
  [
    8,
    async () => {
      const a = pick(agents.filter((x) => x.groups.length));
      const g = a && pick(a.groups);
      if (a && g) await call('/v1/tools/list_expenses', { group_id: g }, a.key);
    },
  ],
  [
    12,
    async () => {
      const a = pick(agents);
      if (a) await call('/v1/tools/get_me', {}, a.key);
    },
  ],
  [
    10,
    async () => {
      const a = pick(agents);
      if (!a) return;
      const tool = Math.random() < 0.5 ? 'get_me' : 'list_groups';
      await call('/mcp', { jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: tool, arguments: {} } }, a.key, {
        accept: 'application/json, text/event-stream',
      });
    },
  ],
  [
    4,
    () =>
      call(
        '/mcp/docs',
        {
          jsonrpc: '2.0',
          id: 1,
          method: 'tools/call',
          params: { name: 'search_docs', arguments: { query: pick(['split', 'invite', 'balance', 'rotate key', 'idempotency']) } },
        },
        undefined,
        { accept: 'application/json, text/event-stream' },
      ),
  ],
  [
    4,
    async () => {
      const code = pick(invites);
      if (code) await call(`/i/${code}`, undefined, undefined, { accept: pick(['text/html', 'application/json', 'text/plain'])! });
    },
  ],
  [4, () => call('/v1/tools/get_me', {}, generateApiKey().key)],
  [
    1,
    async () => {
      const a = pick(agents);
      if (!a) return;
      const r = await call('/v1/tools/rotate_api_key', { idempotency_key: key() }, a.key);
      if (r.status === 200) a.key = r.json.data.api_key;
    },
  ],
  [3, () => call('/v1/tools')],
];
const total = actions.reduce((n, [w]) => n + w, 0);
const next = () => {
  let r = Math.random() * total;
  for (const [w, fn] of actions) if ((r -= w) < 0) return fn;
  return actions[0]![1];
};

for (let i = 0; i < 5; i++) await register();
console.log(`soak: ${MINUTES} min at ${RATE} req/s against ${url} (server pid ${child.pid}); RSS every ${SAMPLE_MS / 1000} s`);
started = Date.now();
const end = started + MINUTES * 60_000;
// Live heap after one minute of traffic (warm: caches, compiled code, pools) and again at the end.
setTimeout(() => void collect(), Math.min(60_000, (MINUTES * 60_000) / 4)).unref();
let inFlight = 0;
await new Promise<void>((resolve) => {
  const timer = setInterval(() => {
    if (Date.now() >= end) {
      clearInterval(timer);
      resolve();
      return;
    }
    if (inFlight >= RATE * 2) return; // the server is behind: do not pile up
    inFlight++;
    next()()
      .catch(() => void counts.failed++)
      .finally(() => void inFlight--);
  }, 1000 / RATE);
});
// The end: the RSS curve's last sample was taken under load. The live heap is collected once the requests still in
// flight have been answered (up to 30 s): collected with them in flight it counted their work as retained memory (a
// run that fell behind ended with up to RATE * 2 requests open).
const openAtEnd = inFlight;
const drainBy = Date.now() + 30_000;
while (inFlight > 0 && Date.now() < drainBy) await new Promise((r) => setTimeout(r, 50));
await collect();

// ---- verdict -------------------------------------------------------------------------------
const run = samples.filter((s) => s.atS > 0);
const window = run.filter((s) => s.atS >= MINUTES * 60 * 0.25 && s.atS <= MINUTES * 60 * 0.5);
const sorted = [...(window.length ? window : run)].map((s) => s.rss).sort((a, b) => a - b);
const level = sorted[Math.floor(sorted.length / 2)] ?? 0;
const last = run[run.length - 1]?.rss ?? 0;
const mb = (n: number) => `${(n / 1048576).toFixed(0)} MB`;
console.log(
  `requests: ${counts.ok} ok, ${counts.clientError} 4xx, ${counts.serverError} 5xx, ${counts.failed} failed; agents ${agents.length}; ` +
    `${openAtEnd} in flight when the traffic stopped, ${inFlight} still open when the heap was collected`,
);
if (collected.length >= 2) {
  const [a, b] = [collected[0]!.heapUsed, collected[collected.length - 1]!.heapUsed];
  console.log(`live heap after a full GC: ${mb(a)} after warm-up → ${mb(b)} at the end (${((b / a - 1) * 100).toFixed(1)}%)`);
}
console.log(
  `RSS levelled off at ${mb(level)} (median of 25-50% of the run), ended at ${mb(last)}: ${((last / level - 1) * 100).toFixed(1)}% → ${last <= level * 1.1 ? 'within 10%' : 'NOT within 10%'}`,
);
child.kill('SIGTERM');
await new Promise((r) => child.once('exit', r));
await db.drop();
