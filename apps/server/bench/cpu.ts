/**
 * CPU per call (`BENCH_ONLY=cpu`): where a request's time goes, measured as CPU time rather than throughput, so it
 * holds on a busy machine. Calls are sent one at a time over HTTP; Kitty's process CPU (utime + stime of the target
 * process, /proc/<pid>/stat) and the PostgreSQL CPU of every backend of the bench database are read before and after.
 *
 *   each tool's Kitty Node + PostgreSQL CPU   vs   its ceiling: the bare Fastify route's Node CPU + the hand-written
 *   limit's PostgreSQL CPU (the same rows in one statement, writes.ts)        ratio = ceiling ÷ Kitty (1.0x: no overhead)
 *
 * Figures are µs per call, means over BENCH_CPU_CALLS calls (default 2000) after 100 warm-up calls; /proc counts in
 * 10 ms ticks, so short runs are coarse. BENCH_CPU_DEBUG=1 also prints each backend's share (application name, last
 * statement). Responses are asked for uncompressed (as the load rows' autocannon does). Returns
 * docs/benchmarks.md rows.
 */
import { randomUUID } from 'node:crypto';
import { processCpu } from './measure.ts';
import pg from 'pg';
import {
  ADD_EXPENSE_LIMIT,
  CONFIRM_PAYMENT_LIMIT,
  LIMIT_SESSION,
  RECORD_PAYMENT_LIMIT,
  addExpenseLimitValues,
  response,
  seedPending,
} from './writes.ts';

type Post = (p: string, body: unknown, key?: string) => Promise<any>;
interface Agent {
  id: string;
  key: string;
  handle: string;
}
const CALLS = Number(process.env.BENCH_CPU_CALLS ?? 2000);
/** utime + stime of `pid` in µs. */
const cpuOf = (pid: number): number => processCpu(pid).us;

export async function benchCpu(kittyUrl: string, bareUrl: string, targetPid: number, databaseUrl: string, post: Post): Promise<string[]> {
  const pool = new pg.Pool({ connectionString: databaseUrl, max: 3, options: LIMIT_SESSION });
  // `admin` reads the backends' CPU (its own is left out); `sql` runs the limits (its backend is counted).
  const [admin, sql] = [await pool.connect(), await pool.connect()];
  const dbName = (await admin.query<{ d: string }>('SELECT current_database() AS d')).rows[0]!.d;
  const pgCpu = async () => {
    const { rows } = await admin.query<{ pid: number }>('SELECT pid FROM pg_stat_activity WHERE datname = $1 AND pid <> pg_backend_pid()', [
      dbName,
    ]);
    let t = 0;
    for (const r of rows) {
      try {
        t += cpuOf(r.pid);
      } catch {
        // the backend exited between the two reads
      }
    }
    return t;
  };
  /** CPU (µs) of each backend of the bench database, with its application name and last statement. */
  const perBackend = async () => {
    const { rows } = await admin.query<{ pid: number; app: string; q: string }>(
      'SELECT pid, application_name AS app, left(query, 60) AS q FROM pg_stat_activity WHERE datname = $1 AND pid <> pg_backend_pid()',
      [dbName],
    );
    const m = new Map<number, { t: number; d: string }>();
    for (const r of rows) {
      try {
        m.set(r.pid, { t: cpuOf(r.pid), d: `${r.app} | ${r.q.replace(/\s+/g, ' ')}` });
      } catch {
        // the backend exited
      }
    }
    return m;
  };
  /**
   * Node and PostgreSQL CPU per call of `once` (µs), CALLS sequential calls after 100 warm-up ones. With `profileAs` and
   * BENCH_PROFILE set, the target writes a CPU profile of the measured calls alone, `cpu-<profileAs>.cpuprofile`
   * (target.ts; the profiler's own cost is then in the Node figure).
   */
  const measure = async (once: (i: number) => Promise<unknown>, profileAs?: string) => {
    for (let i = 0; i < 100; i++) await once(CALLS + i);
    const profiling = Boolean(profileAs && process.env.BENCH_PROFILE);
    if (profiling) await fetch(`${bareUrl}/profile/start`, { method: 'POST' });
    const [n0, p0] = [cpuOf(targetPid), await pgCpu()];
    const b0 = process.env.BENCH_CPU_DEBUG ? await perBackend() : undefined;
    for (let i = 0; i < CALLS; i++) await once(i);
    const [n1, p1] = [cpuOf(targetPid), await pgCpu()];
    if (profiling) await fetch(`${bareUrl}/profile/stop/cpu-${profileAs}`, { method: 'POST' });
    if (b0)
      for (const [pid, x] of await perBackend()) {
        const d = x.t - (b0.get(pid)?.t ?? 0);
        if (d > 0) console.log(`   pid ${pid} ${(d / CALLS).toFixed(0).padStart(5)} µs/call  ${x.d}`);
      }
    return { node: (n1 - n0) / CALLS, pg: Math.max(0, p1 - p0) / CALLS };
  };
  const http = (url: string, body: unknown, key?: string) =>
    fetch(url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'accept-encoding': 'identity', ...(key ? { authorization: `Bearer ${key}` } : {}) },
      body: JSON.stringify(body),
    }).then(async (r) => {
      const text = await r.text();
      if (r.status !== 200) throw new Error(`${url}: ${r.status} ${text}`);
    });
  const register = async (name: string): Promise<Agent> => {
    const r = await post('/v1/agents', { handle: `${name}-${randomUUID().slice(0, 8)}`, display_name: name });
    return { id: r.agent.agent_id, key: r.api_key, handle: r.agent.handle };
  };
  const members = [await register('cpu-a'), await register('cpu-b'), await register('cpu-c'), await register('cpu-d')];
  const [payer, payee] = members as [Agent, Agent];
  const groupId = (await post('/v1/tools/create_group', { name: 'CPU bench', currency: 'EUR', idempotency_key: randomUUID() }, payer.key))
    .group.group_id as string;
  const inv = await post('/v1/tools/create_invite', { group_id: groupId, max_uses: 3, idempotency_key: randomUUID() }, payer.key);
  for (const m of members.slice(1)) await post('/v1/tools/join_group', { code: inv.invite.code, idempotency_key: randomUUID() }, m.key);
  const ids = members.map((m) => m.id).sort();
  const raw = (name: string, text: string, values: () => unknown[]) => () => sql.query({ name, text, values: values() });

  const bare = await measure(() => http(`${bareUrl}/bare`, {}));
  await fetch(`${bareUrl}/set-agent`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ agent_id: payer.id }),
  });
  const bareDb = await measure(() => http(`${bareUrl}/bare-db`, {}));
  const rows: string[] = [];
  const row = (tool: string, kitty: { node: number; pg: number }, ceiling: { node: number; pg: number }, ceilingName: string) => {
    const ratio = (ceiling.node + ceiling.pg) / (kitty.node + kitty.pg);
    console.log(
      `\n${tool}: CPU per call, one at a time\n  Kitty    Node ${kitty.node.toFixed(0).padStart(5)} µs  PostgreSQL ${kitty.pg.toFixed(0).padStart(5)} µs\n` +
        `  ceiling  Node ${ceiling.node.toFixed(0).padStart(5)} µs  PostgreSQL ${ceiling.pg.toFixed(0).padStart(5)} µs  (${ceilingName})\n  ratio ${ratio.toFixed(2)}x`,
    );
    rows.push(
      `| ${tool}: CPU per call vs its ceiling (${ceilingName}) | ${ratio.toFixed(2)}x | report | Kitty: Node ${kitty.node.toFixed(0)} + PostgreSQL ${kitty.pg.toFixed(0)} µs; ceiling: Node ${ceiling.node.toFixed(0)} + PostgreSQL ${ceiling.pg.toFixed(0)} µs |`,
    );
  };
  row(
    'get_me',
    await measure(() => http(`${kittyUrl}/v1/tools/get_me`, {}, payer.key), 'get_me'),
    bareDb,
    'bare Fastify route, same query',
  );
  row(
    'list_currencies',
    await measure(() => http(`${kittyUrl}/v1/tools/list_currencies`, {}, payer.key), 'list_currencies'),
    bare,
    'bare static route',
  );
  const expense = () => ({ group_id: groupId, description: 'Coffee', amount_minor: 1234, idempotency_key: randomUUID() });
  const expenseLimitValues = addExpenseLimitValues(payer.id, ids, 900);
  const expenseLimit = await measure(raw('cpu_limit_add_expense', ADD_EXPENSE_LIMIT, () => expenseLimitValues(groupId)));
  row(
    'add_expense',
    await measure(() => http(`${kittyUrl}/v1/tools/add_expense`, expense(), payer.key), 'add_expense'),
    { node: bare.node, pg: expenseLimit.pg },
    'bare route + limit',
  );
  const payment = () => ({
    group_id: groupId,
    to_handle: payee.handle,
    amount_minor: 100,
    allow_overpayment: true,
    idempotency_key: randomUUID(),
  });
  const recordLimit = await measure(
    raw('cpu_limit_record_payment', RECORD_PAYMENT_LIMIT, () => [
      payer.id,
      randomUUID(),
      'h'.repeat(64),
      response(900),
      groupId,
      randomUUID(),
      payee.id,
    ]),
  );
  row(
    'record_payment',
    await measure(() => http(`${kittyUrl}/v1/tools/record_payment`, payment(), payer.key), 'record_payment'),
    { node: bare.node, pg: recordLimit.pg },
    'bare route + limit',
  );
  const pending = await seedPending(pool, groupId, payer.id, payee.id, 2 * (CALLS + 100));
  const confirmLimit = await measure((i) =>
    sql.query({
      name: 'cpu_limit_confirm_payment',
      text: CONFIRM_PAYMENT_LIMIT,
      values: [payee.id, randomUUID(), 'h'.repeat(64), response(900), groupId, pending[i]],
    }),
  );
  const kittyConfirm = await measure(
    (i) => http(`${kittyUrl}/v1/tools/confirm_payment`, { payment_id: pending[CALLS + 100 + i], idempotency_key: randomUUID() }, payee.key),
    'confirm_payment',
  );
  row('confirm_payment', kittyConfirm, { node: bare.node, pg: confirmLimit.pg }, 'bare route + limit');
  admin.release();
  sql.release();
  await pool.end();
  return rows;
}
