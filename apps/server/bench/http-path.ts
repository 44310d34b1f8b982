/**
 * `pnpm --filter @kitty/server bench:http`: a hot write's whole Node path through Kitty's HTTP server — hooks,
 * authentication, rate limit, body parse, the tool in core, the answer and its serialisation — without PostgreSQL's
 * work, beside a bare Fastify route answering the same JSON. Kitty runs in this process (`startKitty`, a fresh database
 * on DATABASE_URL's server for the set-up, as the bench's target runs it: rate limits out of the way, logging off);
 * requests are injected (Fastify's `inject`: the same hooks and serialisation, no socket), 10 in flight, each into its own
 * group. Once warm, Kitty's batch statement (`kitty_apply_batch`) is answered at once with "applied" instead of being
 * sent. Prints process CPU (user + system) µs per request for both and their ratio (bare ÷ Kitty), and, with
 * `bench:core`'s figure beside it, how much of Kitty's is outside the tool's core path.
 *
 * Env: HTTP_WRITES (comma-separated; default all three), HTTP_CALLS (20000 per measurement), HTTP_ROUNDS (2, alternating), HTTP_PROFILE=<dir> (a V8 CPU profile of each
 * Kitty measurement, `http-<tool>-<round>.cpuprofile`). Run with the Node Kitty runs on. Reports; never fails on a slow
 * machine.
 */
import { randomUUID } from 'node:crypto';
import Fastify from 'fastify';
import pg from 'pg';
import { createTestDatabase } from '@kitty/db';
import { startKitty } from '../src/index.ts';
import { BENCH_KITTY_SETTINGS, inProcessCpu } from './measure.ts';

const CALLS = Number(process.env.HTTP_CALLS ?? 20_000);
const ROUNDS = Number(process.env.HTTP_ROUNDS ?? 2);
const IN_FLIGHT = 10;

const db = await createTestDatabase();
process.env.DATABASE_URL = db.databaseUrl;
const kitty = await startKitty(BENCH_KITTY_SETTINGS);
let answerAtOnce = false;
const clientProto = pg.Client.prototype as unknown as { query: (...args: unknown[]) => unknown };
const sendQuery = clientProto.query;
clientProto.query = function (this: unknown, ...args: unknown[]) {
  if (answerAtOnce && (args[0] as { name?: string } | null)?.name === 'kitty_apply_batch')
    return Promise.resolve({ rows: [{ answer: { status: 'applied', inbox: null } }] });
  return sendQuery.apply(this, args);
};

type Inject = (url: string, body: unknown, key?: string) => Promise<{ status: number; body: string }>;
const injectInto =
  (app: { inject: typeof kitty.app.inject }): Inject =>
  async (url, body, key) => {
    const r = await app.inject({
      method: 'POST',
      url,
      payload: body as object,
      headers: { 'content-type': 'application/json', ...(key ? { authorization: `Bearer ${key}` } : {}) },
    });
    return { status: r.statusCode, body: r.body };
  };
const viaKitty = injectInto(kitty.app);
const call = async (tool: string, args: Record<string, unknown>, key: string) => {
  const r = await viaKitty(`/v1/tools/${tool}`, { ...args, idempotency_key: `http-${randomUUID()}` }, key);
  if (r.status !== 200) throw new Error(`${tool}: ${r.body}`);
  return JSON.parse(r.body).data;
};
const register = async (name: string) => {
  const r = await viaKitty('/v1/agents', { handle: `${name}-${randomUUID().slice(0, 6)}`, display_name: name });
  return JSON.parse(r.body).data as { api_key: string; agent: { handle: string } };
};

const [payer, b] = [await register('payer'), await register('b')];
const groups: string[] = [];
for (let i = 0; i < IN_FLIGHT; i++) {
  const g = (await call('create_group', { name: `HTTP bench ${i}`, currency: 'EUR' }, payer.api_key)).group.group_id as string;
  const code = (await call('create_invite', { group_id: g, max_uses: 1 }, payer.api_key)).invite.code as string;
  await call('join_group', { code }, b.api_key);
  await call('add_expense', { group_id: g, description: 'Coffee', amount_minor: 100_000 }, payer.api_key);
  groups.push(g);
}
const chosen = process.env.HTTP_WRITES?.split(',');
const writes = (
  [
    ['record_payment', b.api_key, (g) => ({ group_id: g, to_handle: payer.agent.handle, amount_minor: 1 })],
    ['add_expense', payer.api_key, (g) => ({ group_id: g, description: 'Taxi', amount_minor: 1234 })],
    ['create_group', b.api_key, () => ({ name: 'Trip', currency: 'EUR' })],
  ] satisfies Array<[string, string, (g: string) => Record<string, unknown>]>
).filter(([tool]) => !chosen || chosen.includes(tool));
// The bare routes answer the JSON Kitty answered for the same write.
const bare = Fastify({ logger: false });
for (const [tool, key, args] of writes) {
  const r = await viaKitty(`/v1/tools/${tool}`, { ...args(groups[0]!), idempotency_key: `http-${randomUUID()}` }, key);
  const answer = JSON.parse(r.body);
  bare.post(`/bare/${tool}`, (_req, reply) => reply.send(answer));
}
await bare.ready();
const viaBare = injectInto(bare);

/** Process CPU µs per request of CALLS requests, IN_FLIGHT at a time (each loop into its own group). */
async function cpuPerRequest(send: (g: string) => Promise<unknown>, profile?: string): Promise<number> {
  const all = () =>
    Promise.all(
      groups.map(async (g) => {
        for (let i = 0; i < CALLS / IN_FLIGHT; i++) await send(g);
      }),
    );
  return (await inProcessCpu(all, profile)) / CALLS;
}

const median = (xs: number[]) => [...xs].sort((x, y) => x - y)[Math.floor(xs.length / 2)]!;
try {
  // Warm: every group read cached, the code optimised; then every batch answered at once.
  for (const [tool, key, args] of writes) for (const g of groups) await call(tool, args(g), key);
  answerAtOnce = true;
  const rows: string[] = [];
  for (const [tool, key, args] of writes) {
    const kittySide = (g: string) => viaKitty(`/v1/tools/${tool}`, { ...args(g), idempotency_key: `http-${randomUUID()}` }, key);
    const bareSide = (g: string) => viaBare(`/bare/${tool}`, { ...args(g), idempotency_key: `http-${randomUUID()}` }, key);
    await cpuPerRequest(kittySide);
    await cpuPerRequest(bareSide);
    const k: number[] = [];
    const r: number[] = [];
    for (let round = 1; round <= ROUNDS; round++) {
      const dir = process.env.HTTP_PROFILE;
      k.push(await cpuPerRequest(kittySide, dir ? `${dir}/http-${tool}-${round}.cpuprofile` : undefined));
      r.push(await cpuPerRequest(bareSide));
    }
    rows.push(`| ${tool} | ${median(k).toFixed(1)} | ${median(r).toFixed(1)} | ${(median(r) / median(k)).toFixed(2)}x |`);
  }
  console.log(
    `\nA hot write through Kitty's HTTP server without PostgreSQL's work (injected, ${IN_FLIGHT} in flight): process CPU µs per request\n`,
  );
  console.log('| write | Kitty (batch answered at once) | bare Fastify route, same JSON | ratio |');
  console.log('|---|---|---|---|');
  for (const row of rows) console.log(row);
} finally {
  answerAtOnce = false;
  await kitty.close();
  await db.drop();
}
