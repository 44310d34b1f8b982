/**
 * get_group_stats at 10^5 expenses: one group of 4 members loaded with seedExpensesBulk (dates over
 * a year, categories spread over the published list), then get_group_stats by category, by month
 * and by member over REST, one call at a time: median, p95 and slowest time per call (ms), with the
 * number of rows. The three totals must agree (each is the sum of the same expenses).
 *
 * Part of `pnpm bench` (run.ts); only these rows: `BENCH_ONLY=stats pnpm bench`.
 * Env: BENCH_STATS_EXPENSES (default 100000), BENCH_STATS_CALLS (default 20): timed calls per grouping.
 */
import { randomUUID } from 'node:crypto';
import pg from 'pg';

const EXPENSES = Number(process.env.BENCH_STATS_EXPENSES ?? 100_000);
const CALLS = Number(process.env.BENCH_STATS_CALLS ?? 20);
const BY = ['category', 'month', 'member'] as const;

type Post = (p: string, body: unknown, key?: string) => Promise<any>;

const quantile = (xs: number[], q: number) => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.ceil(q * xs.length) - 1)]!;

/** Prints the timings and returns docs/benchmarks.md table rows (`| comparison | figure | goal | figures |`). */
export async function benchStats(post: Post, key: string, databaseUrl: string): Promise<string[]> {
  const { seedExpensesBulk } = await import('@kitty/core/testing');
  const group = (await post('/v1/tools/create_group', { name: 'Stats', currency: 'EUR', idempotency_key: randomUUID() }, key)).group;
  const members = [(await post('/v1/tools/get_me', {}, key)).agent.agent_id as string];
  for (let i = 0; i < 3; i++) {
    const o = await post('/v1/agents', { handle: `bench-s${i}-${randomUUID().slice(0, 6)}`, display_name: `S${i}` });
    const inv = await post('/v1/tools/create_invite', { group_id: group.group_id, idempotency_key: randomUUID() }, key);
    await post('/v1/tools/join_group', { code: inv.invite.code, idempotency_key: randomUUID() }, o.api_key);
    members.push(o.agent.agent_id);
  }
  const categories = ((await post('/v1/tools/list_categories', {}, key)).categories as Array<{ category_id: string }>).map(
    (c) => c.category_id,
  );
  const pool = new pg.Pool({ connectionString: databaseUrl, max: 2 });
  try {
    const t0 = performance.now();
    await seedExpensesBulk(pool, group.group_id, members, EXPENSES);
    await pool.query(
      `UPDATE expenses SET category_id = ($2::text[])[1 + abs(hashtext(id::text)) % cardinality($2::text[])] WHERE group_id = $1::uuid`,
      [group.group_id, categories],
    );
    await pool.query('ANALYZE expenses');
    console.log(
      `\nget_group_stats: seeded ${EXPENSES.toLocaleString('en')} expenses over ${categories.length} categories in ${((performance.now() - t0) / 1000).toFixed(1)} s`,
    );
  } finally {
    await pool.end();
  }

  const out: string[] = [];
  const totals = new Set<number>();
  for (const by of BY) {
    const call = () => post('/v1/tools/get_group_stats', { group_id: group.group_id, by }, key);
    await call(); // warm-up (plan cache, JIT)
    await call();
    const ms: number[] = [];
    let last: { rows: unknown[]; total_minor: number } | undefined;
    for (let i = 0; i < CALLS; i++) {
      const t = performance.now();
      last = await call();
      ms.push(performance.now() - t);
    }
    totals.add(last!.total_minor);
    const [p50, p95, max] = [quantile(ms, 0.5), quantile(ms, 0.95), Math.max(...ms)].map((x) => x.toFixed(1));
    console.log(`  by ${by.padEnd(8)} ${last!.rows.length} rows   median ${p50} ms  p95 ${p95} ms  slowest ${max} ms  (${CALLS} calls)`);
    out.push(
      `| get_group_stats by ${by}, ${EXPENSES.toLocaleString('en')} expenses (ms per call) | ${p50} ms | informational | p95 ${p95} ms, slowest ${max} ms, ${last!.rows.length} rows, ${CALLS} sequential calls over REST |`,
    );
  }
  if (totals.size !== 1) throw new Error(`get_group_stats totals disagree across groupings: ${[...totals].join(', ')}`);
  return out;
}
