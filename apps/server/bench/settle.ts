/**
 * Settlement planner benchmark (no server, no database): planSettlements on the shared
 * adversarial vectors with 20 non-zero balances (median, p99 and worst time of single calls,
 * goal ≤ 50 ms worst case, every plan exact), and on 10^4 members (time and number of
 * transfers, goal < 100 ms and ≤ n − 1 transfers).
 *
 * Part of `pnpm bench` (run.ts); alone: `cd apps/server && node --import tsx bench/settle.ts`.
 * Env: BENCH_SETTLE_ROUNDS (default 5): timed calls per vector.
 */
import { planSettlements, EXACT_LIMIT } from '@kitty/core';
import { adversarialVectors } from '@kitty/core/testing';

const ROUNDS = Number(process.env.BENCH_SETTLE_ROUNDS ?? 5);
const BIG = 10_000;

const keyed = (amounts: bigint[]) => amounts.map((amount, i) => ({ key: `agent-${String(i).padStart(5, '0')}`, amount }));

function timed<T>(fn: () => T): [T, number] {
  const t0 = performance.now();
  const out = fn();
  return [out, performance.now() - t0];
}

/** Prints the comparison and returns README table rows (`| comparison | figure | goal | figures |`). */
export async function benchSettle(): Promise<string[]> {
  const vectors = adversarialVectors(EXACT_LIMIT, 5).map((v) => ({ name: v.name, balances: keyed(v.amounts) }));
  for (const v of vectors) planSettlements(v.balances); // warm-up (JIT)
  const times: number[] = [];
  let slowest = { name: '', ms: 0 };
  let inexact = 0;
  for (let round = 0; round < ROUNDS; round++) {
    for (const v of vectors) {
      const [plan, ms] = timed(() => planSettlements(v.balances));
      if (!plan.exact) inexact++;
      times.push(ms);
      if (ms > slowest.ms) slowest = { name: v.name, ms };
    }
    await new Promise((r) => setImmediate(r)); // let the event loop breathe between rounds
  }
  times.sort((a, b) => a - b);
  const at = (q: number) => times[Math.min(times.length - 1, Math.floor(q * times.length))]!;
  const [median, p99, worst] = [at(0.5), at(0.99), times.at(-1)!];

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
    const [plan, ms] = timed(() => planSettlements(balances));
    big.push({ label, ms, transfers: plan.transfers.length });
  }
  const bigWorst = Math.max(...big.map((b) => b.ms));
  const bigMost = Math.max(...big.map((b) => b.transfers));

  const f = (ms: number) => ms.toFixed(1);
  console.log(
    `\nsettlement planner, ${EXACT_LIMIT} non-zero balances, ${vectors.length} adversarial vectors × ${ROUNDS} calls` +
      `\n  median ${f(median)} ms  p99 ${f(p99)} ms  worst ${f(worst)} ms (${slowest.name})  (goal worst ≤ 50 ms)` +
      `\n  plans not exact: ${inexact} (goal 0)` +
      `\nsettlement planner, ${BIG} members` +
      big.map((b) => `\n  ${b.label.padEnd(14)} ${f(b.ms).padStart(6)} ms  ${b.transfers} transfers`).join('') +
      `\n  worst ${f(bigWorst)} ms (goal < 100 ms), most transfers ${bigMost} (goal ≤ n − 1 = ${BIG - 1})`,
  );
  return [
    `| settlement planner, ${EXACT_LIMIT} non-zero balances (${vectors.length} adversarial vectors × ${ROUNDS}) | worst ${f(worst)} ms | ≤ 50 ms, exact | median ${f(median)} ms, p99 ${f(p99)} ms; ${inexact} not exact |`,
    `| settlement planner, ${BIG} members | ${f(bigWorst)} ms | < 100 ms, ≤ n − 1 transfers | at most ${bigMost} transfers (${big.map((b) => `${b.label}: ${f(b.ms)} ms`).join('; ')}) |`,
  ];
}

if (import.meta.main) console.log('\n' + (await benchSettle()).join('\n'));
