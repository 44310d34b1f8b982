/**
 * `pnpm --filter @kitty/server bench:core`: the Node CPU a hot write costs in core alone — validation, the middleware
 * chain, the tool's decision, the batch document and its serialisation, the answer — without HTTP and without
 * PostgreSQL's work. Each write is called in process through `registry.callTool` (core's test harness, a fresh database
 * on DATABASE_URL's server for the set-up), with its group read cached as on the server; once warm, its batch statement
 * (`kitty_apply_batch`) is answered at once with "applied" instead of being sent, and wake-ups are delivered in process
 * (as a single instance does). Reports µs of process CPU (user + system) per call, one call at a time and with
 * CORE_CONCURRENCY calls in flight (each into its own group, as the write rows' connections write).
 *
 * Env: CORE_CALLS (20000 per measurement), CORE_CONCURRENCY (10), CORE_PROFILE=<dir> (a V8 CPU profile of each write's
 * measurement with calls in flight, `core-<tool>.cpuprofile`). Run it with the Node Kitty runs on (`./node_modules/node/bin/node`, no tsx): a transpiler's helpers
 * change what is measured. Reports; never fails on a slow machine.
 */
import { randomUUID } from 'node:crypto';
import { setLocalWakeRoute } from '@kitty/core';
import { createHarness, type TestAgent } from '../../../packages/core/test/harness.ts';
import { poolWithQuery, statementName } from '../../../packages/core/test/pool-proxy.ts';
import { inProcessCpu } from './measure.ts';

const CALLS = Number(process.env.CORE_CALLS ?? 20_000);
const CONCURRENCY = Number(process.env.CORE_CONCURRENCY ?? 10);

const h = await createHarness();
const realPool = h.services.pool;
let answerAtOnce = false;
const applied = { rows: [{ answer: { status: 'applied', inbox: null } }] };
h.services.pool = poolWithQuery(realPool, async (real, args) =>
  answerAtOnce && statementName(args) === 'kitty_apply_batch' ? applied : real(...args),
);
setLocalWakeRoute(h.services.pool, { local: () => true, deliver: () => undefined });

const [payer, b] = [await h.agent('payer'), await h.agent('b')];
/** Groups of payer and b, b owing the payer (so record_payment is never an overpayment). */
const groups: string[] = [];
for (let i = 0; i < CONCURRENCY; i++) {
  const g = (await h.call(payer, 'create_group', { name: `Core bench ${i}`, currency: 'EUR' })).group.group_id as string;
  const invite = await h.call(payer, 'create_invite', { group_id: g, max_uses: 1 });
  await h.call(b, 'join_group', { code: invite.invite.code });
  await h.call(payer, 'add_expense', { group_id: g, description: 'Coffee', amount_minor: 100_000 });
  groups.push(g);
}

const writes: Array<[string, TestAgent, (g: string) => Record<string, unknown>]> = [
  ['record_payment', b, (g) => ({ group_id: g, to_handle: payer.handle, amount_minor: 1 })],
  ['add_expense', payer, (g) => ({ group_id: g, description: 'Taxi', amount_minor: 1234 })],
  ['create_group', b, () => ({ name: 'Trip', currency: 'EUR' })],
];

/** Process CPU µs per call of `calls` calls of `tool`, `inFlight` at a time (each loop in its own group). */
async function cpuPerCall(tool: string, who: TestAgent, args: (g: string) => Record<string, unknown>, inFlight: number, profile?: string) {
  const once = (g: string) => h.call(who, tool, { ...args(g), idempotency_key: `core-${randomUUID()}` });
  const all = () =>
    Promise.all(
      groups.slice(0, inFlight).map(async (g) => {
        for (let i = 0; i < CALLS / inFlight; i++) await once(g);
      }),
    );
  return (await inProcessCpu(all, profile)) / CALLS;
}

try {
  // Warm: the group reads cached, the code optimised, then every batch answered at once.
  for (const [tool, who, args] of writes) for (const g of groups) await h.call(who, tool, args(g));
  answerAtOnce = true;
  for (const [tool, who, args] of writes) await cpuPerCall(tool, who, args, 1);
  console.log('\nA hot write in core alone (no HTTP; its batch statement answered at once): process CPU µs per call\n');
  console.log(`| write | one at a time | ${CONCURRENCY} in flight |`);
  console.log('|---|---|---|');
  for (const [tool, who, args] of writes) {
    const one = await cpuPerCall(tool, who, args, 1);
    const dir = process.env.CORE_PROFILE;
    const many = await cpuPerCall(tool, who, args, CONCURRENCY, dir ? `${dir}/core-${tool}.cpuprofile` : undefined);
    console.log(`| ${tool} | ${one.toFixed(1)} | ${many.toFixed(1)} |`);
  }
} finally {
  answerAtOnce = false;
  h.services.pool = realPool;
  await h.close();
}
