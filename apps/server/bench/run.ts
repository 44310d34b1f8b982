/**
 * `pnpm bench`: throughput and latency measured side by side in one run, printed as ratios
 * against their baselines (goals from issues 2 and 3). Nothing here fails on a slow machine:
 * it reports.
 *
 *   read tool over REST (get_me)            vs bare Fastify route running get_me's query on raw pg, same JSON   goal ≥ 0.45x
 *   list_currencies (no DB)                 vs bare Fastify route returning fixed JSON (framework overhead only)
 *   MCP tools/call get_me                   vs REST get_me                       goal ≥ 0.5x
 *   REST get_me with an OAuth access token  vs with an API key                   goal ≥ 1.0x (a token costs no more than a key)
 *   write tool over REST (create_group)     vs raw pg single-row transactions    goal ≥ 0.5x
 *   add_expense over REST                   vs raw pg single-row transactions    goal ≥ 0.5x
 *   get_balances with 10⁶ expenses          vs with 10 expenses (latency)        goal ≤ 1.2x
 *   authentication and inbox summary cost per request, next to a read tool
 *   peak RSS of the server process
 *
 * Each comparison alternates its two sides BENCH_ROUNDS times (default 3) and reports medians.
 * Env: BENCH_SECONDS (default 5), BENCH_CONNECTIONS (10), BENCH_BIG (1000000), BENCH_ROUNDS (3).
 */
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { randomUUID } from 'node:crypto';
import { createInterface } from 'node:readline';
import path from 'node:path';
import autocannon from 'autocannon';
import pg from 'pg';
import { createTestDatabase, createDb } from '@kitty/db';
import { appRouter, buildRegistry } from '@kitty/core';
import { ApiKeyAuthenticator } from '../src/auth.ts';
import { loadAuthServerKeys } from '../src/oauth/keys.ts';
import { OAuthTokenVerifier } from '../src/oauth/verify.ts';
import { oauthAccessToken } from './oauth-token.ts';
import { benchSettle } from './settle.ts';

const SECONDS = Number(process.env.BENCH_SECONDS ?? 5);
const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 10);
const BIG = Number(process.env.BENCH_BIG ?? 1_000_000);
/** Each comparison alternates A, B this many times and reports medians (drift and noise cancel). */
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);

interface Result {
  rps: number;
  p50: number;
  p99: number;
  errors: number;
}

async function load(opts: autocannon.Options): Promise<Result> {
  const r = await autocannon({ connections: CONNECTIONS, duration: SECONDS, ...opts });
  const non2xx = r.non2xx + r.errors + r.timeouts;
  return { rps: r.requests.average, p50: r.latency.p50, p99: r.latency.p99, errors: non2xx };
}

const fmt = (r: Result) =>
  `${r.rps.toFixed(0).padStart(7)} req/s  p50 ${String(r.p50).padStart(4)} ms  p99 ${String(r.p99).padStart(4)} ms${r.errors ? `  (${r.errors} non-2xx!)` : ''}`;
const rows: string[] = [];
const median = <T>(xs: T[], key: (x: T) => number): T => [...xs].sort((x, y) => key(x) - key(y))[Math.floor(xs.length / 2)]!;

/** Runs A and B alternately ROUNDS times; the median of each and the median of the per-round ratios. */
async function paired(a: () => Promise<Result>, b: () => Promise<Result>): Promise<[Result, Result, number]> {
  const as: Result[] = [];
  const bs: Result[] = [];
  const ratios: number[] = [];
  for (let i = 0; i < ROUNDS; i++) {
    const ra = await a();
    const rb = await b();
    as.push(ra);
    bs.push(rb);
    ratios.push(ra.rps / rb.rps);
  }
  return [median(as, (r) => r.rps), median(bs, (r) => r.rps), median(ratios, (r) => r)];
}

function compare(label: string, a: Result, aName: string, b: Result, bName: string, goal: string, medianRatio?: number) {
  const ratio = medianRatio ?? a.rps / b.rps;
  console.log(`\n${label}\n  ${aName.padEnd(34)} ${fmt(a)}\n  ${bName.padEnd(34)} ${fmt(b)}\n  ratio ${ratio.toFixed(2)}x  (goal ${goal})`);
  rows.push(
    `| ${label} | ${ratio.toFixed(2)}x | ${goal} | ${a.rps.toFixed(0)} vs ${b.rps.toFixed(0)} req/s; p99 ${a.p99} vs ${b.p99} ms |`,
  );
}

/** Raw pg single-row transactions: BEGIN; INSERT one row; COMMIT — CONNECTIONS loops for SECONDS. */
async function rawPgTransactions(url: string): Promise<Result> {
  const pool = new pg.Pool({ connectionString: url, max: CONNECTIONS });
  await pool.query(
    'CREATE TABLE IF NOT EXISTS bench_rows (id uuid PRIMARY KEY, payload text NOT NULL, created_at timestamptz NOT NULL DEFAULT now())',
  );
  const latencies: number[] = [];
  const end = Date.now() + SECONDS * 1000;
  await Promise.all(
    Array.from({ length: CONNECTIONS }, async () => {
      const client = await pool.connect();
      try {
        while (Date.now() < end) {
          const t0 = performance.now();
          await client.query('BEGIN');
          await client.query('INSERT INTO bench_rows (id, payload) VALUES ($1, $2)', [randomUUID(), 'x'.repeat(40)]);
          await client.query('COMMIT');
          latencies.push(performance.now() - t0);
        }
      } finally {
        client.release();
      }
    }),
  );
  await pool.end();
  latencies.sort((x, y) => x - y);
  const q = (p: number) => Math.round(latencies[Math.min(latencies.length - 1, Math.floor(latencies.length * p))]!);
  return { rps: latencies.length / SECONDS, p50: q(0.5), p99: q(0.99), errors: 0 };
}

function peakRssMiB(pid: number): number {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const kb = Number(/VmHWM:\s+(\d+)/.exec(status)?.[1] ?? 0);
  return kb / 1024;
}

async function main() {
  const db = await createTestDatabase();
  console.log(
    `Kitty benchmark — ${SECONDS}s per measurement, ${CONNECTIONS} connections, Node ${process.version}, database ${db.databaseUrl.replace(/\/\/[^@]*@/, '//')}`,
  );
  const child = spawn(process.execPath, ['--import', 'tsx', path.join(import.meta.dirname, 'target.ts')], {
    env: { ...process.env, DATABASE_URL: db.databaseUrl, KITTY_LOG: 'silent' },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const first = await new Promise<string>((resolve, reject) => {
    const rl = createInterface({ input: child.stdout! });
    rl.once('line', resolve);
    child.once('exit', (code) => reject(new Error(`bench target exited ${code}`)));
  });
  const { kittyUrl, bareUrl } = JSON.parse(first) as { kittyUrl: string; bareUrl: string };
  try {
    const post = async (p: string, body: unknown, key?: string) => {
      const res = await fetch(`${kittyUrl}${p}`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', ...(key ? { authorization: `Bearer ${key}` } : {}) },
        body: JSON.stringify(body),
      });
      const j = (await res.json()) as any;
      if (!j.ok) throw new Error(`${p}: ${JSON.stringify(j.error)}`);
      return j.data;
    };
    const reg = await post('/v1/agents', { handle: `bench-${randomUUID().slice(0, 8)}`, display_name: 'Bench' });
    const key: string = reg.api_key;
    const auth = { authorization: `Bearer ${key}`, 'content-type': 'application/json' };
    const me = await post('/v1/tools/get_me', {}, key);
    const setBody = (which: string, data: unknown) =>
      fetch(`${bareUrl}/set-body/${which}`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ ok: true, data }),
      });
    await setBody('db', me);
    await setBody('static', await post('/v1/tools/list_currencies', {}, key));

    // Warm up both paths.
    await load({ url: `${bareUrl}/bare`, method: 'POST', duration: 1 });
    await load({ url: `${kittyUrl}/v1/tools/get_me`, method: 'POST', headers: auth, body: '{}', duration: 1 });

    await fetch(`${bareUrl}/set-agent`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ agent_id: me.agent.agent_id }),
    });
    const loadRest = () => load({ url: `${kittyUrl}/v1/tools/get_me`, method: 'POST', headers: auth, body: '{}' });
    const [rest, bareDb, readRatio] = await paired(loadRest, () =>
      load({ url: `${bareUrl}/bare-db`, method: 'POST', body: '{}', headers: { 'content-type': 'application/json' } }),
    );
    compare(
      'Read tool over REST vs bare Fastify (same DB read)',
      rest,
      'REST POST /v1/tools/get_me',
      bareDb,
      'bare Fastify + raw pg, same query & JSON',
      '≥ 0.45x',
      readRatio,
    );
    const [currencies, bare, staticRatio] = await paired(
      () => load({ url: `${kittyUrl}/v1/tools/list_currencies`, method: 'POST', headers: auth, body: '{}' }),
      () => load({ url: `${bareUrl}/bare`, method: 'POST', body: '{}', headers: { 'content-type': 'application/json' } }),
    );
    compare(
      'Static read tool vs bare static route (framework only)',
      currencies,
      'REST list_currencies (no DB)',
      bare,
      'bare Fastify route, fixed JSON',
      'informational',
      staticRatio,
    );

    // OAuth access token vs API key on the hot path (same tool, same run, alternating).
    const token = await oauthAccessToken(kittyUrl, db.databaseUrl);
    const tokenAuth = { authorization: `Bearer ${token}`, 'content-type': 'application/json' };
    await load({ url: `${kittyUrl}/v1/tools/get_me`, method: 'POST', headers: tokenAuth, body: '{}', duration: 1 });
    const [withToken, withKey, tokenRatio] = await paired(
      () => load({ url: `${kittyUrl}/v1/tools/get_me`, method: 'POST', headers: tokenAuth, body: '{}' }),
      loadRest,
    );
    compare(
      'get_me with an OAuth access token vs with an API key',
      withToken,
      'REST get_me, OAuth token',
      withKey,
      'REST get_me, API key',
      '≥ 1.0x (±noise)',
      tokenRatio,
    );

    const mcpBody = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'get_me', arguments: {} } });
    const mcpHeaders = { ...auth, accept: 'application/json, text/event-stream', 'mcp-protocol-version': '2025-11-25' };
    const probe = await fetch(`${kittyUrl}/mcp`, { method: 'POST', headers: mcpHeaders, body: mcpBody });
    if (probe.status === 200) {
      await load({ url: `${kittyUrl}/mcp`, method: 'POST', headers: mcpHeaders, body: mcpBody, duration: 1 });
      const [mcp, rest2, mcpRatio] = await paired(
        () => load({ url: `${kittyUrl}/mcp`, method: 'POST', headers: mcpHeaders, body: mcpBody }),
        loadRest,
      );
      compare('MCP tools/call vs REST (get_me)', mcp, 'MCP tools/call get_me', rest2, 'REST get_me', '≥ 0.5x', mcpRatio);
    } else console.log(`\nMCP: /mcp answered ${probe.status}; skipped`);

    const loadRaw = () => rawPgTransactions(db.databaseUrl);
    const [writes, raw, writeRatio] = await paired(
      () =>
        load({
          url: `${kittyUrl}/v1/tools/create_group`,
          method: 'POST',
          headers: auth,
          requests: [
            {
              setupRequest: (req) => ({
                ...req,
                body: JSON.stringify({ name: 'Bench group', currency: 'EUR', idempotency_key: randomUUID() }),
              }),
            },
          ],
        }),
      loadRaw,
    );
    compare(
      'Write tool vs raw pg single-row transactions',
      writes,
      'REST create_group',
      raw,
      'raw pg BEGIN/INSERT/COMMIT',
      '≥ 0.5x',
      writeRatio,
    );

    const registry = buildRegistry(appRouter);
    if (registry.has('add_expense') && registry.has('get_balances')) {
      // One group per connection: writes to one group serialise on its row lock (by design), so
      // throughput against uncontended single-row transactions is measured across groups; the
      // single-group figure is printed too.
      const gids: string[] = [];
      for (let i = 0; i < CONNECTIONS; i++)
        gids.push(
          (await post('/v1/tools/create_group', { name: `Ledger bench ${i}`, currency: 'EUR', idempotency_key: randomUUID() }, key)).group
            .group_id,
        );
      let next = 0;
      const [expenses, raw2, expenseRatio] = await paired(
        () =>
          load({
            url: `${kittyUrl}/v1/tools/add_expense`,
            method: 'POST',
            headers: auth,
            requests: [
              {
                setupRequest: (req) => ({
                  ...req,
                  body: JSON.stringify({
                    group_id: gids[next++ % gids.length],
                    description: 'Coffee',
                    amount_minor: 1234,
                    idempotency_key: randomUUID(),
                  }),
                }),
              },
            ],
          }),
        loadRaw,
      );
      const oneGroup = await load({
        url: `${kittyUrl}/v1/tools/add_expense`,
        method: 'POST',
        headers: auth,
        requests: [
          {
            setupRequest: (req) => ({
              ...req,
              body: JSON.stringify({ group_id: gids[0], description: 'Coffee', amount_minor: 1234, idempotency_key: randomUUID() }),
            }),
          },
        ],
      });
      console.log(`\nadd_expense all into ONE group (serialised by the group lock): ${fmt(oneGroup)}`);
      compare(
        'add_expense vs raw pg single-row transactions',
        expenses,
        `REST add_expense (${CONNECTIONS} groups)`,
        raw2,
        'raw pg BEGIN/INSERT/COMMIT',
        '≥ 0.5x',
        expenseRatio,
      );
      await benchBalances(post, key, kittyUrl, auth, db.databaseUrl);
    } else console.log('\n(ledger tools not present: add_expense / get_balances benchmarks skipped)');

    await microbench(db.databaseUrl, key, rest, token);
    rows.push(...(await benchSettle()));
    console.log(
      `\nPeak RSS of the server process: ${peakRssMiB(child.pid!).toFixed(0)} MiB (bench driver: ${(process.resourceUsage().maxRSS / 1024).toFixed(0)} MiB)`,
    );
    console.log('\n| comparison | ratio | goal | figures |\n|---|---|---|---|\n' + rows.join('\n'));
  } finally {
    child.kill('SIGTERM');
    await new Promise((r) => child.once('exit', r));
    await db.drop();
  }
}

/** get_balances latency with 10 vs BIG expenses in the group (balances are maintained, not summed). */
async function benchBalances(
  post: (p: string, b: unknown, k?: string) => Promise<any>,
  key: string,
  kittyUrl: string,
  auth: Record<string, string>,
  url: string,
) {
  const { seedExpensesBulk: seed } = await import('@kitty/core/testing');
  const small = await post('/v1/tools/create_group', { name: 'Small', currency: 'EUR', idempotency_key: randomUUID() }, key);
  const big = await post('/v1/tools/create_group', { name: 'Big', currency: 'EUR', idempotency_key: randomUUID() }, key);
  const others = [];
  for (let i = 0; i < 3; i++) {
    const o = await post('/v1/agents', { handle: `bench-m${i}-${randomUUID().slice(0, 6)}`, display_name: `M${i}` });
    others.push(o);
    for (const g of [small, big]) {
      const inv = await post('/v1/tools/create_invite', { group_id: g.group.group_id, idempotency_key: randomUUID() }, key);
      await post('/v1/tools/join_group', { code: inv.invite.code, idempotency_key: randomUUID() }, o.api_key);
    }
  }
  for (let i = 0; i < 10; i++)
    await post(
      '/v1/tools/add_expense',
      { group_id: small.group.group_id, description: `E${i}`, amount_minor: 1000 + i, idempotency_key: randomUUID() },
      key,
    );
  if (!seed) {
    console.log('\n(seedExpensesBulk not exported by core: get_balances 10 vs 10⁶ skipped)');
    return;
  }
  const pool = new pg.Pool({ connectionString: url, max: 4 });
  const me = await post('/v1/tools/get_me', {}, key);
  const t0 = performance.now();
  await seed(pool, big.group.group_id, [me.agent.agent_id, ...others.map((o) => o.agent.agent_id)], BIG);
  console.log(`\nSeeded ${BIG.toLocaleString('en')} expenses in ${((performance.now() - t0) / 1000).toFixed(1)} s`);
  await pool.end();
  const run = (gid: string) =>
    load({ url: `${kittyUrl}/v1/tools/get_balances`, method: 'POST', headers: auth, body: JSON.stringify({ group_id: gid }) });
  await run(small.group.group_id);
  const s = await run(small.group.group_id);
  const b = await run(big.group.group_id);
  console.log(
    `\nget_balances latency, 10 vs ${BIG.toLocaleString('en')} expenses\n  10 expenses                        ${fmt(s)}\n  ${BIG.toLocaleString('en')} expenses${' '.repeat(Math.max(1, 25 - BIG.toLocaleString('en').length))}${fmt(b)}\n  p50 ratio ${(b.p50 / Math.max(1, s.p50)).toFixed(2)}x, mean-throughput ratio ${(s.rps / b.rps).toFixed(2)}x  (goal ≤ 1.2x)`,
  );
  rows.push(
    `| get_balances ${BIG.toLocaleString('en')} vs 10 expenses (throughput ratio) | ${(s.rps / b.rps).toFixed(2)}x | ≤ 1.2x | p50 ${b.p50} vs ${s.p50} ms; p99 ${b.p99} vs ${s.p99} ms |`,
  );
}

/** Per-request costs next to a read tool: authentication (cached / uncached) and the inbox summary. */
async function microbench(url: string, key: string, rest: Result, token: string) {
  const db = createDb(url, { poolMax: 4 });
  try {
    const time = async (n: number, fn: () => Promise<unknown>) => {
      for (let i = 0; i < Math.min(100, n); i++) await fn();
      const t0 = performance.now();
      for (let i = 0; i < n; i++) await fn();
      return ((performance.now() - t0) * 1000) / n;
    };
    const cached = new ApiKeyAuthenticator(db.prisma);
    const uncached = new ApiKeyAuthenticator(db.prisma, () => new Date(), 1);
    const tCached = await time(20000, () => cached.authenticate(key));
    const tUncached = await time(500, async () => {
      uncached.invalidate((await uncached.authenticate(key)).agentId);
    });
    const issuer = JSON.parse(Buffer.from(token.split('.')[1]!, 'base64url').toString()).iss as string;
    const { jwks } = await loadAuthServerKeys(db.prisma, {});
    const verifier = new OAuthTokenVerifier(db.prisma, issuer, jwks);
    const tToken = await time(20000, () => verifier.authenticate(token));
    // A fresh verifier per call: the signature check and the connection read every time.
    const tTokenFirst = await time(200, () => new OAuthTokenVerifier(db.prisma, issuer, jwks).authenticate(token));
    const { inboxSummaryFor } = await import('@kitty/core');
    const { InboxSummaryCache } = await import('../src/inbox-cache.ts');
    const agent = await cached.authenticate(key);
    const tInboxDb = await time(500, () => inboxSummaryFor(db.prisma, agent.agentId));
    const inboxCache = new InboxSummaryCache(url, db.prisma);
    await inboxCache.start();
    const tInbox = await time(20000, () => inboxCache.get(agent.agentId, { fresh: false }));
    await inboxCache.stop();
    const perRequestUs = (1e6 / rest.rps) * CONNECTIONS;
    console.log(`\nPer-request costs (sequential, µs) next to a REST get_me at ~${perRequestUs.toFixed(0)} µs per request under load:`);
    console.log(
      `  authentication, cached key          ${tCached.toFixed(1).padStart(8)} µs  (${((tCached / perRequestUs) * 100).toFixed(2)}% of a read)`,
    );
    console.log(`  authentication, cache miss (DB)     ${tUncached.toFixed(1).padStart(8)} µs  (first request of a key within 30 s)`);
    console.log(
      `  authentication, cached OAuth token  ${tToken.toFixed(1).padStart(8)} µs  (JWT verified once, then digest + cache; connection re-read every 5 s)`,
    );
    console.log(`  authentication, first use of token  ${tTokenFirst.toFixed(1).padStart(8)} µs  (ES256 verification + connection row)`);
    console.log(`  inbox summary, cached (reads)       ${tInbox.toFixed(1).padStart(8)} µs`);
    console.log(`  inbox summary, database (writes)    ${tInboxDb.toFixed(1).padStart(8)} µs  (counters + top lines, one statement)`);
    rows.push(
      `| authentication per request (cached) | ${tCached.toFixed(1)} µs | small next to a read | ${((tCached / perRequestUs) * 100).toFixed(2)}% of a get_me |`,
    );
    rows.push(
      `| authentication per request, OAuth token (cached) | ${tToken.toFixed(1)} µs | ≤ API key (${tCached.toFixed(1)} µs) | first use ${tTokenFirst.toFixed(0)} µs (ES256 + connection row) |`,
    );
    rows.push(
      `| inbox summary per read request | ${tInbox.toFixed(1)} µs | next to nothing | cache invalidated by NOTIFY; ${tInboxDb.toFixed(0)} µs when read from the database (write tools) |`,
    );
  } finally {
    await db.close();
  }
}

main().catch((e) => {
  console.error(e);
  process.exit(1);
});
