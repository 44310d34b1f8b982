/**
 * One instance vs two behind HAProxy (docs/scaling.md): the same database, the same
 * Redis, the same balancer set-up, measured alternately in one run.
 *
 *   read tool  (get_me)                          2 instances vs 1, both through HAProxy
 *   write tool (add_expense over CONNECTIONS groups)   2 instances vs 1, both through HAProxy
 *
 * On a 2-core machine the balancer, PostgreSQL, the load generator and the instances share the
 * same two cores, so little gain is expected: the figure is reported as measured, not as a goal.
 * Env: BENCH_SECONDS (5), BENCH_CONNECTIONS (10), BENCH_ROUNDS (3). Alone, with short settings:
 *   BENCH_SECONDS=2 BENCH_ROUNDS=1 node --import tsx bench/instances.ts
 */
import { randomUUID } from 'node:crypto';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { createTestDatabase } from '@kitty/db';
import { findHaproxy, startCluster, type Cluster } from '../test/cluster-harness.ts';
import { CONNECTIONS, fmt, load, paired } from './measure.ts';

/**
 * Starts one Kitty instance and two (each group behind its own HAProxy) on one fresh database and
 * the tests' Redis, and measures get_me and add_expense through each balancer, alternating
 * BENCH_ROUNDS times. Prints the comparison.
 * @returns docs/benchmarks.md table rows `| comparison | ratio | goal | figures |` (ratio = 2 instances / 1)
 */
export async function benchInstances(): Promise<string[]> {
  const haproxy = findHaproxy();
  if (!haproxy) {
    console.log('\n1 vs 2 instances: skipped (no haproxy binary; apt-get install haproxy)');
    return [];
  }
  const db = await createTestDatabase();
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    DATABASE_URL: db.databaseUrl,
    REDIS_URL: process.env.REDIS_URL_FOR_TESTS ?? process.env.REDIS_URL ?? 'redis://127.0.0.1:6379',
    KITTY_REDIS_PREFIX: `kitty-bench-${randomUUID().slice(0, 8)}`,
    KITTY_LOG: 'silent',
    KITTY_SCHEDULER: 'off',
    KITTY_RATE_LIMIT: '1000000000',
    KITTY_RATE_LIMIT_ANON: '1000000000',
    KITTY_AUTH_FAIL_LIMIT: '0',
    KITTY_REGISTER_LIMIT_HOUR: '0',
    KITTY_REGISTER_LIMIT_DAY: '0',
    INIT_CWD: '',
  };
  const clusters: Cluster[] = [];
  try {
    // Started one after the other: both migrate/boot on the same database.
    const one = await startCluster({ n: 1, env, haproxy });
    clusters.push(one);
    const two = await startCluster({ n: 2, env, haproxy });
    clusters.push(two);
    const post = async (p: string, body: unknown, key?: string) => {
      const res = await fetch(`${one.url}${p}`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', ...(key ? { authorization: `Bearer ${key}` } : {}) },
        body: JSON.stringify(body),
      });
      const j = (await res.json()) as { ok: boolean; data: any; error?: unknown };
      if (!j.ok) throw new Error(`${p}: ${JSON.stringify(j.error)}`);
      return j.data;
    };
    const key: string = (await post('/v1/agents', { handle: `bench-n-${randomUUID().slice(0, 8)}`, display_name: 'Bench' })).api_key;
    const auth = { authorization: `Bearer ${key}`, 'content-type': 'application/json' };
    const gids: string[] = [];
    for (let i = 0; i < CONNECTIONS; i++)
      gids.push(
        (await post('/v1/tools/create_group', { name: `Instances bench ${i}`, currency: 'EUR', idempotency_key: randomUUID() }, key)).group
          .group_id,
      );
    const getMe = (base: string) => () => load({ url: `${base}/v1/tools/get_me`, method: 'POST', headers: auth, body: '{}' });
    let next = 0;
    const addExpense = (base: string) => () =>
      load({
        url: `${base}/v1/tools/add_expense`,
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
      });
    // Warm up every instance (JIT, pools, caches) through both balancers.
    for (const c of [one, two]) await load({ url: `${c.url}/v1/tools/get_me`, method: 'POST', headers: auth, body: '{}', duration: 1 });

    const rows: string[] = [];
    for (const [label, run] of [
      ['get_me (read) through HAProxy: 2 instances vs 1', getMe],
      [`add_expense (write, ${CONNECTIONS} groups) through HAProxy: 2 instances vs 1`, addExpense],
    ] as const) {
      const [twoRes, oneRes, ratio] = await paired(run(two.url), run(one.url));
      console.log(
        `\n${label}\n  2 instances  ${fmt(twoRes)}\n  1 instance   ${fmt(oneRes)}\n  ratio ${ratio.toFixed(2)}x  (informational: 2 cores shared by the balancer, PostgreSQL, the load and the instances)`,
      );
      rows.push(
        `| ${label} | ${ratio.toFixed(2)}x | informational (2 cores) | ${twoRes.rps.toFixed(0)} vs ${oneRes.rps.toFixed(0)} req/s; p99 ${twoRes.p99} vs ${oneRes.p99} ms |`,
      );
    }
    return rows;
  } finally {
    for (const c of clusters) await c.stop();
    await db.drop();
  }
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const rows = await benchInstances();
  console.log('\n| comparison | ratio | goal | figures |\n|---|---|---|---|\n' + rows.join('\n'));
}
