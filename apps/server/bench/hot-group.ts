/**
 * One busy group, sustained: CONNECTIONS loops write add_expense into ONE group of HOT_MEMBERS (default 50) members
 * for HOT_SECONDS (default 60), and every HOT_EVERY seconds (default 5) it prints the window's writes, p50/p99 latency
 * and what the group's hot tables hold (memberships, agents, pair_debts): updates, HOT updates, dead and live row
 * versions, heap and index size, and the oldest snapshot (backend_xmin age) among the database's backends.
 *
 *   node --import tsx bench/hot-group.ts                  REST add_expense (autocannon) against a bench target
 *   HOT_MODE=raw node --import tsx bench/hot-group.ts     the batch document add_expense sends, replayed on raw pg
 *                                                         (SELECT kitty_apply_batch_quiet($1::jsonb))
 *
 * It creates its own database (hotgroup_<hex>, dropped at the end) on TEST_DATABASE_URL's server.
 * It reports; nothing here fails on a slow machine.
 */
import { spawn } from 'node:child_process';
import { randomBytes, randomUUID } from 'node:crypto';
import { createInterface } from 'node:readline';
import path from 'node:path';
import autocannon from 'autocannon';
import pg from 'pg';
import { applyMigrations } from '@kitty/db';
import { expenseDoc, type Agent } from './expense-doc.ts';
import { toolPoster } from './measure.ts';

const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 10);
const SECONDS = Number(process.env.HOT_SECONDS ?? 60);
const EVERY = Number(process.env.HOT_EVERY ?? 5);
const MEMBERS = Number(process.env.HOT_MEMBERS ?? 50);
const MODE = process.env.HOT_MODE ?? 'rest';
const PROBE = Number(process.env.HOT_PROBE ?? 20);
const ADMIN = process.env.TEST_DATABASE_URL ?? 'postgresql://postgres@127.0.0.1:5432/postgres';
const TABLES = ['memberships', 'agents', 'pair_debts'];

const STATS_SQL = `
  SELECT t.relname, t.n_tup_upd::int AS upd, t.n_tup_hot_upd::int AS hot, t.n_dead_tup::int AS dead, t.n_live_tup::int AS live,
    pg_relation_size(t.relid)::int / 8192 AS pages, pg_indexes_size(t.relid)::int / 8192 AS idx_pages,
    t.autovacuum_count::int AS av, t.vacuum_count::int AS v
  FROM pg_stat_user_tables t WHERE t.relname = ANY($1) ORDER BY t.relname`;
const XMIN_SQL = `
  SELECT coalesce(max(age(backend_xmin)), 0)::int AS xmin_age, count(*) FILTER (WHERE state = 'idle in transaction')::int AS idle_tx
  FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid()`;

async function main() {
  const name = `hotgroup_${randomBytes(5).toString('hex')}`;
  const admin = new pg.Client({ connectionString: ADMIN });
  await admin.connect();
  await admin.query(`CREATE DATABASE "${name}"`);
  const u = new URL(ADMIN);
  u.pathname = `/${name}`;
  const databaseUrl = u.toString();
  const child = spawn(process.execPath, ['--import', 'tsx', path.join(import.meta.dirname, 'target.ts')], {
    env: { ...process.env, DATABASE_URL: databaseUrl, KITTY_LOG: 'silent' },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const pool = new pg.Pool({ connectionString: databaseUrl, max: CONNECTIONS + 2 });
  try {
    await applyMigrations(databaseUrl);
    const first = await new Promise<string>((resolve, reject) => {
      createInterface({ input: child.stdout! }).once('line', resolve);
      child.once('exit', (code) => reject(new Error(`bench target exited ${code}`)));
    });
    const { kittyUrl } = JSON.parse(first) as { kittyUrl: string };
    const post = toolPoster(kittyUrl);
    const register = async (n: string): Promise<Agent> => {
      const r = await post('/v1/agents', { handle: `${n}-${randomUUID().slice(0, 8)}`, display_name: n });
      return { id: r.agent.agent_id, key: r.api_key, handle: r.agent.handle };
    };
    const group = async (tag: string) => {
      const ms = [await register(`${tag}-0`)];
      const id = (await post('/v1/tools/create_group', { name: tag, currency: 'EUR', idempotency_key: randomUUID() }, ms[0]!.key)).group
        .group_id as string;
      const inv = await post('/v1/tools/create_invite', { group_id: id, max_uses: MEMBERS, idempotency_key: randomUUID() }, ms[0]!.key);
      for (let i = 1; i < MEMBERS; i++) {
        const a = await register(`${tag}-${i}`);
        await post('/v1/tools/join_group', { code: inv.invite.code, idempotency_key: randomUUID() }, a.key);
        ms.push(a);
      }
      return { id, members: ms };
    };
    const { id: gid, members } = await group('hot');
    const fresh = await group('fresh');
    /** One connection, PROBE writes over REST one after another: median ms per write. */
    const probe = async (g: { id: string; members: Agent[] }) => {
      const ms: number[] = [];
      for (let i = 0; i < PROBE; i++) {
        const t = performance.now();
        await post(
          '/v1/tools/add_expense',
          { group_id: g.id, description: 'Coffee', amount_minor: 5000, idempotency_key: randomUUID() },
          g.members[0]!.key,
        );
        ms.push(performance.now() - t);
      }
      return ms.sort((a, b) => a - b)[Math.floor(ms.length / 2)]!.toFixed(1);
    };
    const reloptions = await pool.query(`SELECT relname, reloptions FROM pg_class WHERE relname = ANY($1) ORDER BY 1`, [TABLES]);
    console.log(`database ${name}, mode ${MODE}, ${CONNECTIONS} connections, ${MEMBERS} members, ${SECONDS} s`);
    console.log(`reloptions: ${reloptions.rows.map((r) => `${r.relname}=${JSON.stringify(r.reloptions)}`).join(' ')}`);

    const latencies: number[] = [];
    const end = Date.now() + SECONDS * 1000;
    let done = false;
    const writer =
      MODE === 'raw'
        ? Promise.all(
            Array.from({ length: CONNECTIONS }, async () => {
              const c = await pool.connect();
              try {
                while (Date.now() < end) {
                  const t = performance.now();
                  await c.query({
                    name: 'hot',
                    text: 'SELECT kitty_apply_batch_quiet($1::jsonb)',
                    values: [expenseDoc(gid, members, true)],
                  });
                  latencies.push(performance.now() - t);
                }
              } finally {
                c.release();
              }
            }),
          )
        : new Promise<void>((resolve, reject) => {
            const inst = autocannon(
              {
                url: `${kittyUrl}/v1/tools/add_expense`,
                method: 'POST',
                connections: CONNECTIONS,
                duration: SECONDS,
                headers: { 'content-type': 'application/json', authorization: `Bearer ${members[0]!.key}` },
                requests: [
                  {
                    setupRequest: (req: any) => ({
                      ...req,
                      body: JSON.stringify({ group_id: gid, description: 'Coffee', amount_minor: 5000, idempotency_key: randomUUID() }),
                    }),
                  },
                ],
              },
              (err) => (err ? reject(err) : resolve()),
            );
            inst.on('response', (_c: unknown, status: number, _b: unknown, ms: number) => {
              if (status === 200) latencies.push(ms);
            });
          });
    void writer.then(() => (done = true));
    const t0 = Date.now();
    let seen = 0;
    console.log('  t(s)  writes/s  p50 ms  p99 ms | table: upd hot% dead live pages idx_pages av | oldest xmin age, idle-in-tx');
    while (!done) {
      await new Promise((r) => setTimeout(r, EVERY * 1000));
      const win = latencies.slice(seen).sort((a, b) => a - b);
      seen = latencies.length;
      const q = (p: number) => (win[Math.min(win.length - 1, Math.floor(win.length * p))] ?? 0).toFixed(1);
      const s = await pool.query(STATS_SQL, [TABLES]);
      const x = (await pool.query(XMIN_SQL)).rows[0];
      const tables = s.rows
        .map(
          (r) =>
            `${r.relname}: ${r.upd} ${r.upd ? ((100 * r.hot) / r.upd).toFixed(0) : '-'}% ${r.dead} ${r.live} ${r.pages} ${r.idx_pages} ${r.av}`,
        )
        .join(' | ');
      const t = ((Date.now() - t0) / 1000).toFixed(0).padStart(5);
      console.log(
        `${t} ${(win.length / EVERY).toFixed(0).padStart(8)} ${q(0.5).padStart(7)} ${q(0.99).padStart(7)} | ${tables} | ${x.xmin_age}, ${x.idle_tx}`,
      );
    }
    await writer;
    // The same single REST write into the busy group and into a fresh group of the same size, one at a time.
    console.log(
      `one REST add_expense at a time, median of ${PROBE}: busy group ${await probe({ id: gid, members })} ms, fresh group ${await probe(fresh)} ms`,
    );
    const s = await pool.query(STATS_SQL, [TABLES]);
    console.log(`after the probe: ${s.rows.map((r) => `${r.relname} dead ${r.dead} pages ${r.pages}`).join(', ')}`);
  } finally {
    await pool.end();
    child.kill('SIGTERM');
    await new Promise((r) => child.once('exit', r));
    if (!process.env.HOT_KEEP) await admin.query(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`);
    else console.log(`kept database ${name}`);
    await admin.end();
  }
}

await main();
