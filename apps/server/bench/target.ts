/**
 * Benchmark target process: Kitty on DATABASE_URL plus a bare Fastify route serving a fixed
 * JSON body (the baseline for "REST vs bare Fastify"). Prints one JSON line with both URLs.
 */
import { writeFileSync } from 'node:fs';
import { Session } from 'node:inspector/promises';
import path from 'node:path';
import { PerformanceObserver, constants } from 'node:perf_hooks';
import Fastify from 'fastify';
import pg from 'pg';
import { GET_ME_SQL } from '@kitty/core';
import { startKitty } from '../src/index.ts';
import { BENCH_KITTY_SETTINGS } from './measure.ts';

const kitty = await startKitty(BENCH_KITTY_SETTINGS);
// Objects the bare routes send (serialised per request, as Kitty does): the same JSON Kitty answers (set by the driver).
const bodies: Record<'static' | 'db', unknown> = { static: { ok: true, data: {} }, db: { ok: true, data: {} } };
const bare = Fastify({ logger: false });
bare.post('/bare', (_req, reply) => reply.send(bodies.static));
bare.post('/set-body/:which', (req, reply) => {
  bodies[(req.params as { which: 'static' | 'db' }).which] = req.body;
  reply.send({ ok: true });
});
// The hand-written minimum for the same DB-backed read: get_me's own query as a prepared
// statement on raw pg (as Kitty runs it), and the same JSON out.
const pool = new pg.Pool({ connectionString: process.env.DATABASE_URL, max: 10 });
let agentId = '';
bare.post('/set-agent', (req, reply) => {
  agentId = (req.body as { agent_id: string }).agent_id;
  reply.send({ ok: true });
});
bare.post('/bare-db', async (_req, reply) => {
  const r = await pool.query({ name: 'bare_get_me', text: GET_ME_SQL, values: [agentId, new Date()] });
  if (!r.rows[0]) throw new Error('no agent');
  return reply.send(bodies.db);
});
// A hot write's measured HTTP ceiling (writes.ts `viaBareRoute`): a bare Fastify route that runs the write's hand-written
// limit statement on raw pg and answers the JSON Kitty answers for that write. `/limit/:name/set` stores the statement,
// its pg session options (set once: the first call's), the values that are the same on every call (by position; the
// stored response, kilobytes) and the answer; each `/limit/:name` call carries the other values.
let limitPool: pg.Pool | undefined;
const limits = new Map<string, { text: string; fixed: Record<string, unknown>; body: unknown }>();
bare.post('/limit/:name/set', (req, reply) => {
  const { text, fixed, body, session } = req.body as { text: string; fixed: Record<string, unknown>; body: unknown; session: string };
  limitPool ??= new pg.Pool({ connectionString: process.env.DATABASE_URL, max: 10, idleTimeoutMillis: 0, options: session });
  limits.set((req.params as { name: string }).name, { text, fixed, body });
  reply.send({ ok: true });
});
bare.post('/limit/:name', async (req, reply) => {
  const name = (req.params as { name: string }).name;
  const limit = limits.get(name)!;
  const values = (req.body as { values: unknown[] }).values;
  for (const [i, v] of Object.entries(limit.fixed)) values[Number(i)] = v;
  // A hand-written CTE locks rows in plan order: a deadlock costs a retry, as in the raw loops (writes.ts rawLoop).
  for (;;) {
    try {
      await limitPool!.query({ name: `limit_${name}`, text: limit.text, values });
      break;
    } catch (e) {
      if ((e as { code?: string }).code !== '40P01') throw e;
    }
  }
  return reply.send(limit.body);
});
// Garbage collection so far: the main thread's pauses (ms) and their count, minor (scavenges) and major (mark-compact,
// incremental marking steps and weak callbacks); V8's concurrent marking on its worker threads is in the CPU time only.
const gc = { minorMs: 0, minor: 0, majorMs: 0, major: 0 };
new PerformanceObserver((list) => {
  for (const e of list.getEntries()) {
    const { kind } = ((e as { detail?: unknown }).detail ?? {}) as { kind?: number };
    if (kind === constants.NODE_PERFORMANCE_GC_MINOR) {
      gc.minorMs += e.duration;
      gc.minor++;
    } else {
      gc.majorMs += e.duration;
      gc.major++;
    }
  }
}).observe({ entryTypes: ['gc'] });
// Kitty's named statements sent so far, by name (`kitty_apply_batch`, `kitty_read_payment`, …): the driver reports them per
// request, so a write that makes more round trips than it should (a cache that stopped hitting) shows in its row. Counted
// on every pg client of the process by the statement's name; the bare routes' statements are not named `kitty_…`.
const statements: Record<string, number> = {};
const clientProto = pg.Client.prototype as unknown as { query: (...args: unknown[]) => unknown };
const sendQuery = clientProto.query;
clientProto.query = function (this: unknown, ...args: unknown[]) {
  const name = (args[0] as { name?: unknown } | null)?.name;
  if (typeof name === 'string' && name.startsWith('kitty_')) statements[name] = (statements[name] ?? 0) + 1;
  return sendQuery.apply(this, args);
};
// The process's CPU time so far (µs, user + system; and system alone), its GC, Kitty's statements and how its batched
// writes got their caller's inbox summary without reading it (from the cache as it was, or the cached one their statement
// brought up to date; runtime/inbox-cache.ts): the driver reads them around each measured load.
bare.get('/cpu', (_req, reply) => {
  const { user, system } = process.cpuUsage();
  const summaries = { cached: kitty.inboxCache.stats.writeHits, kept: kitty.inboxCache.stats.writeKept };
  reply.send({ us: user + system, systemUs: system, gc, statements, summaries });
});
// BENCH_PROFILE=<dir>: the driver brackets each Kitty load of the read, write and MCP rows with these, one CPU profile per load.
// With BENCH_PROFILE_ALLOCATIONS=1 they record V8's sampling heap profile instead (`<name>.heapprofile`, for Chrome DevTools):
// every allocation sampled, also those collected since (what the garbage collector had to do), not only what stayed live.
// BENCH_PROFILE_ALLOCATIONS=promoted samples only what survived a young-generation collection (what was moved to the old
// generation, so what its collections must find and free).
const profileDir = process.env.BENCH_PROFILE;
if (profileDir) {
  const allocations = ['1', 'promoted'].includes(process.env.BENCH_PROFILE_ALLOCATIONS ?? '');
  const session = new Session();
  session.connect();
  await session.post(allocations ? 'HeapProfiler.enable' : 'Profiler.enable');
  if (!allocations) await session.post('Profiler.setSamplingInterval', { interval: 250 });
  bare.post('/profile/start', async () => {
    if (allocations)
      await session.post('HeapProfiler.startSampling', {
        samplingInterval: 4096,
        includeObjectsCollectedByMajorGC: true,
        includeObjectsCollectedByMinorGC: process.env.BENCH_PROFILE_ALLOCATIONS !== 'promoted',
      });
    else await session.post('Profiler.start');
    return { ok: true };
  });
  bare.post('/profile/stop/:name', async (req) => {
    const name = (req.params as { name: string }).name;
    if (allocations) {
      const { profile } = await session.post('HeapProfiler.stopSampling');
      writeFileSync(path.join(profileDir, `${name}.heapprofile`), JSON.stringify(profile));
    } else {
      const { profile } = await session.post('Profiler.stop');
      writeFileSync(path.join(profileDir, `${name}.cpuprofile`), JSON.stringify(profile));
    }
    return { ok: true };
  });
}
await bare.listen({ port: 0, host: '127.0.0.1' });
const addr = bare.server.address() as { port: number };
console.log(JSON.stringify({ kittyUrl: kitty.url, bareUrl: `http://127.0.0.1:${addr.port}` }));
process.on('SIGTERM', () => {
  void (async () => {
    await kitty.close();
    await bare.close();
    await pool.end();
    await limitPool?.end();
  })().then(
    () => process.exit(0),
    (e: unknown) => {
      console.error(e);
      process.exit(1);
    },
  );
});
