/**
 * `pnpm --filter @kitty/server bench:batch`: where a batched write's PostgreSQL time goes, set against its hand-written
 * limit (writes.ts: the same rows in one statement). Each hot write tool is called once in process (core's test
 * harness, a fresh database on DATABASE_URL's server); its batch document is taken on its way to the database and,
 * before it is applied, measured two ways, each beside the limit for the same write:
 *
 *   body            the statement's own execution, µs by PostgreSQL's clock: kitty_apply_batch(doc) and the limit's
 *                   statement (in a plpgsql function, on the same generic plan), each BATCH_LOOP times in one
 *                   transaction, every call in a subtransaction that is rolled back (relation locks are then held
 *                   and plans made: what is left is the statement's own work)
 *   per transaction the backend's CPU (utime + stime, /proc) per BEGIN; statement; ROLLBACK over BATCH_CALLS round trips
 *                   on a connection of its own: the statement as Kitty sends it, the same with the caller's cached
 *                   summary to bring up to date (a write that resolves the caller's own item below its top ones,
 *                   `summary_kept`), with the caller's inbox summary cached (as the server answers a write that leaves
 *                   the caller's inbox alone), the limit;
 *                   beside them the same round trip with SELECT 1, and with the document only parsed into jsonb
 *
 * The backend's CPU is read from /proc, so PostgreSQL must run on this machine. Reports; never fails on a slow
 * machine. Prints a docs/benchmarks.md table.
 */
import { randomUUID } from 'node:crypto';
import pg from 'pg';
import { createHarness, type TestAgent } from '../../../packages/core/test/harness.ts';
import { poolWithQuery, sentDocument, statementName } from '../../../packages/core/test/pool-proxy.ts';
import { processCpu } from './measure.ts';
import {
  ADD_EXPENSE_LIMIT,
  CANCEL_PAYMENT_LIMIT,
  CONFIRM_PAYMENT_LIMIT,
  CREATE_GROUP_LIMIT,
  LIMIT_SESSION,
  RECORD_PAYMENT_LIMIT,
  addExpenseLimitValues,
} from './writes.ts';

const LOOP = Number(process.env.BATCH_LOOP ?? 2000);
const CALLS = Number(process.env.BATCH_CALLS ?? 3000);

type Run = (sql: string, values?: unknown[]) => Promise<{ rows: Array<Record<string, unknown>> }>;

/** The limit of a captured write: its statement and values (the stored response as long as Kitty's). */
interface Limit {
  sql: string;
  values: unknown[];
}

/**
 * A pg_temp function `name(n int, params)` on the connection it is created on: runs `call` (a PL/pgSQL expression over
 * `params`) n times, each in a subtransaction rolled back, and returns µs per call by PostgreSQL's clock.
 */
const timedLoop = (name: string, params: string, call: string) => `
  CREATE OR REPLACE FUNCTION pg_temp.${name}(n int, ${params}) RETURNS float8 LANGUAGE plpgsql AS $f$
  DECLARE t0 timestamptz; ignored text;
  BEGIN
    PERFORM set_config('kitty.notify_after_commit', 'on', false);
    t0 := clock_timestamp();
    FOR i IN 1..n LOOP
      BEGIN
        ignored := (${call})::text;
        RAISE EXCEPTION 'rolled back' USING ERRCODE = 'KB999';
      EXCEPTION WHEN SQLSTATE 'KB999' THEN NULL;
      END;
    END LOOP;
    RETURN extract(epoch FROM clock_timestamp() - t0) * 1e6 / n;
  END $f$`;

/** The body loop over kitty_apply_batch: `SELECT pg_temp.loop_apply(n, doc)`. */
const LOOP_APPLY = timedLoop('loop_apply', 'doc jsonb', 'kitty_apply_batch(doc)');

/**
 * The limit's statement inside a plpgsql function with typed parameters (the types PostgreSQL infers for it), and a
 * timed loop over it; returns the loop's call for `values`.
 */
async function limitLoop(run: Run, limit: Limit): Promise<{ sql: string; values: unknown[] }> {
  await run(`PREPARE kitty_bench_limit AS ${limit.sql}`);
  const types = (await run(`SELECT parameter_types::text[] AS t FROM pg_prepared_statements WHERE name = 'kitty_bench_limit'`)).rows[0]!
    .t as string[];
  await run('DEALLOCATE kitty_bench_limit');
  const params = types.map((t, i) => `p${i + 1} ${t}`).join(', ');
  const body = limit.sql.replace(/\$(\d+)/g, (_, n: string) => `p${n}`);
  await run(`CREATE OR REPLACE FUNCTION pg_temp.limit_once(${params}) RETURNS bigint LANGUAGE plpgsql
    SET plan_cache_mode = force_generic_plan AS $f$ DECLARE w bigint; BEGIN ${body} INTO w; RETURN w; END $f$`);
  await run(timedLoop('loop_limit', params, `pg_temp.limit_once(${types.map((_, i) => `p${i + 1}`).join(', ')})`));
  return {
    sql: `SELECT pg_temp.loop_limit($1, ${types.map((t, i) => `$${i + 2}::${t}`).join(', ')}) AS us`,
    values: [LOOP, ...limit.values],
  };
}

/** Backend CPU (µs) per BEGIN; `statement`; ROLLBACK, on a connection of its own (after 200 unmeasured round trips). */
async function perTransaction(pool: pg.Pool, statement: { name: string; text: string; values: unknown[] }): Promise<number> {
  const c = await pool.connect();
  try {
    const pid = (await c.query<{ pid: number }>('SELECT pg_backend_pid() AS pid')).rows[0]!.pid;
    const once = async () => {
      await c.query('BEGIN');
      await c.query(statement);
      await c.query('ROLLBACK');
    };
    for (let i = 0; i < 200; i++) await once();
    const before = processCpu(pid).us;
    for (let i = 0; i < CALLS; i++) await once();
    return (processCpu(pid).us - before) / CALLS;
  } finally {
    c.release();
  }
}

interface Row {
  tool: string;
  bytes: number;
  body: number;
  bodyKept: number | undefined;
  bodyCached: number | undefined;
  limitBody: number;
  sent: number;
  kept: number | undefined;
  cached: number | undefined;
  limit: number;
  select1: number;
  parsed: number;
}

/** The caller's counts as its agent row holds them, and no top items: what `summary_kept` says when the cached summary holds. */
async function keptOf(run: Run, doc: Record<string, any>): Promise<{ unread: number; requires_action: number; top: string[] }> {
  const row = (
    await run('SELECT inbox_unread AS unread, inbox_requires_action AS requires_action FROM agents WHERE id = $1', [
      doc.idempotency.agent_id,
    ])
  ).rows[0]!;
  return { unread: Number(row.unread), requires_action: Number(row.requires_action), top: [] };
}

async function measure(run: Run, pool: pg.Pool, tool: string, doc: string, limit: Limit): Promise<Row> {
  await run(LOOP_APPLY);
  const loop = await limitLoop(run, limit);
  const parsedDoc = JSON.parse(doc) as Record<string, unknown>;
  const cachedDoc = parsedDoc.summary_cached ? undefined : JSON.stringify({ ...parsedDoc, summary_cached: true });
  // A write that resolves the caller's own item, sent with the caller's cached summary to bring up to date
  // (summary_kept: the counts the caller's row holds, no top item resolved): the statement reads no summary.
  const ownResolve = ((parsedDoc.resolve ?? []) as Array<{ agent_id?: string }>).some(
    (r) => r.agent_id === (parsedDoc.idempotency as { agent_id: string }).agent_id,
  );
  const keptDoc =
    ownResolve && !parsedDoc.summary_cached ? JSON.stringify({ ...parsedDoc, summary_kept: await keptOf(run, parsedDoc) }) : undefined;
  const inLoop = async (d: string) => Number((await run('SELECT pg_temp.loop_apply($1, $2::jsonb) AS us', [LOOP, d])).rows[0]!.us);
  const body = await inLoop(doc);
  const bodyCached = cachedDoc === undefined ? undefined : await inLoop(cachedDoc);
  const bodyKept = keptDoc === undefined ? undefined : await inLoop(keptDoc);
  const limitBody = Number((await run(loop.sql, loop.values)).rows[0]!.us);
  const apply = (d: string) => ({ name: 'bench_apply', text: 'SELECT kitty_apply_batch_quiet($1::jsonb)', values: [d] });
  return {
    tool,
    bytes: Buffer.byteLength(doc),
    body,
    limitBody,
    sent: await perTransaction(pool, apply(doc)),
    bodyKept,
    kept: keptDoc === undefined ? undefined : await perTransaction(pool, apply(keptDoc)),
    bodyCached,
    cached: cachedDoc === undefined ? undefined : await perTransaction(pool, apply(cachedDoc)),
    limit: await perTransaction(pool, { name: `bench_limit_${tool}`, text: limit.sql, values: limit.values }),
    select1: await perTransaction(pool, { name: 'bench_select1', text: 'SELECT 1', values: [] }),
    parsed: await perTransaction(pool, { name: 'bench_parse', text: 'SELECT jsonb_typeof($1::jsonb)', values: [doc] }),
  };
}

async function main() {
  const h = await createHarness();
  const realPool = h.services.pool;
  // The limits run as in the write rows (writes.ts): kitty.notify_after_commit on, so no NOTIFY inside them.
  const limitPool = new pg.Pool({ connectionString: realPool.options.connectionString, max: 2, options: LIMIT_SESSION });
  const rows: Row[] = [];
  let pending: { tool: string; limit: (doc: Record<string, any>) => Limit } | undefined;
  try {
    h.services.pool = poolWithQuery(realPool, async (real, args) => {
      if (pending && statementName(args) === 'kitty_apply_batch') {
        const doc = sentDocument(args);
        const { tool, limit } = pending;
        pending = undefined;
        rows.push(await measure(real as Run, limitPool, tool, doc, limit(JSON.parse(doc))));
      }
      return real(...args);
    });
    const [payer, b, c, d] = [await h.agent('payer'), await h.agent('b'), await h.agent('c'), await h.agent('d')];
    const group = (await h.call(payer, 'create_group', { name: 'Ledger bench', currency: 'EUR' })).group.group_id as string;
    const invite = await h.call(payer, 'create_invite', { group_id: group, max_uses: 3 });
    for (const a of [b, c, d]) await h.call(a, 'join_group', { code: invite.invite.code });
    const response = (doc: Record<string, any>) => JSON.stringify(doc.idempotency.response);
    const as = async (who: TestAgent, tool: string, args: Record<string, unknown>, limit: (doc: Record<string, any>) => Limit) => {
      pending = { tool, limit };
      const answer = await h.call(who, tool, args);
      // Every hot write sends its document alone here (nothing else writes into its group): a row missing is a fault.
      if (pending) throw new Error(`${tool} sent no batch document as kitty_apply_batch`);
      return answer;
    };
    const members = [payer, b, c, d].map((a) => a.agentId).sort();
    await as(payer, 'add_expense', { group_id: group, description: 'Coffee', amount_minor: 1234 }, (doc) => ({
      sql: ADD_EXPENSE_LIMIT,
      values: addExpenseLimitValues(payer.agentId, members, response(doc).length)(group),
    }));
    const transition = (who: TestAgent, sql: string) => (doc: Record<string, any>) => ({
      sql,
      values: [who.agentId, randomUUID(), 'h'.repeat(64), response(doc), group, doc.guard.payment.id],
    });
    const record = () =>
      as(b, 'record_payment', { group_id: group, to_handle: payer.handle, amount_minor: 100 }, (doc) => ({
        sql: RECORD_PAYMENT_LIMIT,
        values: [b.agentId, randomUUID(), 'h'.repeat(64), response(doc), group, randomUUID(), payer.agentId],
      }));
    const first = (await record()).payment.payment_id as string;
    // b owes the payer a share of the coffee: b pays, the payer confirms; a second payment b cancels.
    await as(payer, 'confirm_payment', { payment_id: first }, transition(payer, CONFIRM_PAYMENT_LIMIT));
    const second = await h.call(b, 'record_payment', { group_id: group, to_handle: payer.handle, amount_minor: 100 });
    await as(b, 'cancel_payment', { payment_id: second.payment.payment_id }, transition(b, CANCEL_PAYMENT_LIMIT));
    await as(c, 'create_group', { name: 'Bench group', currency: 'EUR' }, (doc) => ({
      sql: CREATE_GROUP_LIMIT,
      values: [c.agentId, randomUUID(), 'h'.repeat(64), response(doc), randomUUID()],
    }));
  } finally {
    h.services.pool = realPool;
    await limitPool.end();
    await h.close();
  }
  const us = (n: number | undefined) => (n === undefined ? '—' : `${n.toFixed(0)}`);
  console.log(
    `\nA batched write's PostgreSQL time vs its limit (µs; body: ${LOOP} calls by PostgreSQL's clock; per transaction: backend CPU over ${CALLS} round trips)\n`,
  );
  console.log(
    '| write | document | body: Kitty as sent / summary kept / summary cached / limit | per transaction: Kitty as sent / summary kept / summary cached / limit | SELECT 1 | document parsed only |',
  );
  console.log('|---|---|---|---|---|---|');
  for (const r of rows)
    console.log(
      `| ${r.tool} | ${r.bytes} B | ${us(r.body)} / ${us(r.bodyKept)} / ${us(r.bodyCached)} / ${us(r.limitBody)} | ${us(r.sent)} / ${us(r.kept)} / ${us(r.cached)} / ${us(r.limit)} | ${us(r.select1)} | ${us(r.parsed)} |`,
    );
}

await main();
