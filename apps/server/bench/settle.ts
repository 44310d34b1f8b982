/**
 * Settlement planner benchmark (no server, no database): planSettlements on the shared
 * adversarial vectors with 20 non-zero balances (median and p99 of single calls, the slowest
 * vector; goal ≤ 50 ms worst case, every plan exact), and on 10^4 members (median of 3 calls and
 * number of transfers, goal < 100 ms and ≤ n − 1 transfers).
 *
 * Part of `pnpm bench` (run.ts); alone: `cd apps/server && node --import tsx bench/settle.ts`.
 * Env: BENCH_SETTLE_ROUNDS (default 5): timed calls per vector.
 */
import { planSettlements, EXACT_LIMIT } from '@kitty/core';
import { adversarialVectors } from '@kitty/core/testing';

const ROUNDS = Number(process.env.BENCH_SETTLE_ROUNDS ?? 5);
/** Vectors per family of the adversarial set (13 families). */
const PER_FAMILY = 10;
const BIG = 10_000;

const keyed = (amounts: bigint[]) => amounts.map((amount, i) => ({ key: `agent-${String(i).padStart(5, '0')}`, amount }));

function timed<T>(fn: () => T): [T, number] {
  const t0 = performance.now();
  const out = fn();
  return [out, performance.now() - t0];
}

/** Prints the comparison and returns docs/benchmarks.md table rows (`| comparison | figure | goal | figures |`). */
export async function benchSettle(): Promise<string[]> {
  const vectors = adversarialVectors(EXACT_LIMIT, PER_FAMILY).map((v) => ({
    name: v.name,
    balances: keyed(v.amounts),
    ms: [] as number[],
  }));
  for (const v of vectors) planSettlements(v.balances); // warm-up (JIT)
  const calls: number[] = [];
  let inexact = 0;
  for (let round = 0; round < ROUNDS; round++) {
    for (const v of vectors) {
      const [plan, ms] = timed(() => planSettlements(v.balances));
      if (!plan.exact) inexact++;
      calls.push(ms);
      v.ms.push(ms);
    }
    await new Promise((r) => setImmediate(r)); // let the event loop breathe between rounds
  }
  const quantile = (xs: number[], q: number) => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor(q * xs.length))]!;
  const [median, p99, slowestCall] = [quantile(calls, 0.5), quantile(calls, 0.99), Math.max(...calls)];
  // the worst case: the slowest vector, each timed as the median of its calls (a single call can
  // also wait for the scheduler or a garbage collection that other work caused)
  const slowest = vectors.map((v) => ({ name: v.name, ms: quantile(v.ms, 0.5) })).reduce((a, b) => (b.ms > a.ms ? b : a));
  const worst = slowest.ms;

  let seed = 20261123;
  const next = () => (seed = (Math.imul(seed, 1103515245) + 12345) >>> 0) / 2 ** 32;
  const big: Array<{ label: string; ms: number; transfers: number }> = [];
  for (const [label, draw] of [
    ['random ±10^6', () => BigInt(Math.floor(next() * 2_000_001) - 1_000_000)],
    ['±1 only', () => (next() < 0.5 ? -1n : 1n)],
    ['random ±10^12', () => BigInt(Math.floor(next() * 2e12) - 1e12)],
  ] as const) {
    const amounts = Array.from({ length: BIG - 1 }, draw);
    amounts.push(-amounts.reduce((s, x) => s + x, 0n));
    const balances = keyed(amounts);
    planSettlements(balances); // warm-up
    const runs = Array.from({ length: 3 }, () => timed(() => planSettlements(balances)));
    big.push({
      label,
      ms: quantile(
        runs.map(([, ms]) => ms),
        0.5,
      ),
      transfers: runs[0]![0].transfers.length,
    });
  }
  const bigWorst = Math.max(...big.map((b) => b.ms));
  const bigMost = Math.max(...big.map((b) => b.transfers));

  const f = (ms: number) => ms.toFixed(1);
  console.log(
    `\nsettlement planner, ${EXACT_LIMIT} non-zero balances, ${vectors.length} adversarial vectors × ${ROUNDS} calls` +
      `\n  per call: median ${f(median)} ms  p99 ${f(p99)} ms  slowest ${f(slowestCall)} ms` +
      `\n  worst vector ${f(worst)} ms (${slowest.name}, median of its calls)  (goal ≤ 50 ms)` +
      `\n  plans not exact: ${inexact} (goal 0)` +
      `\nsettlement planner, ${BIG} members` +
      big.map((b) => `\n  ${b.label.padEnd(14)} ${f(b.ms).padStart(6)} ms  ${b.transfers} transfers`).join('') +
      `\n  worst ${f(bigWorst)} ms (goal < 100 ms), most transfers ${bigMost} (goal ≤ n − 1 = ${BIG - 1})`,
  );
  return [
    `| settlement planner, ${EXACT_LIMIT} non-zero balances (${vectors.length} adversarial vectors × ${ROUNDS}) | worst ${f(worst)} ms | ≤ 50 ms, exact | per call median ${f(median)} ms, p99 ${f(p99)} ms, slowest ${f(slowestCall)} ms; ${inexact} not exact |`,
    `| settlement planner, ${BIG} members | ${f(bigWorst)} ms | < 100 ms, ≤ n − 1 transfers | at most ${bigMost} transfers (${big.map((b) => `${b.label}: ${f(b.ms)} ms`).join('; ')}) |`,
  ];
}

if (import.meta.main) console.log('\n' + (await benchSettle()).join('\n'));
