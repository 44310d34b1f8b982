/**
 * Measurement helpers shared by the benchmark sections: autocannon runs, alternating A/B rounds
 * with medians, and the printed comparison plus its docs/benchmarks.md table row.
 * Env: BENCH_SECONDS (default 5), BENCH_CONNECTIONS (10), BENCH_ROUNDS (3).
 */
import autocannon from 'autocannon';
import { appendFileSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { Session } from 'node:inspector/promises';

export const SECONDS = Number(process.env.BENCH_SECONDS ?? 5);
export const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 10);
export const BIG = Number(process.env.BENCH_BIG ?? 1_000_000);
/** Each comparison alternates A, B this many times and reports medians (drift and noise cancel). */
export const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);

/** How the bench runs Kitty in process (target.ts, http-path.ts): no scheduler, no logging, rate limits out of the way. */
export const BENCH_KITTY_SETTINGS = {
  port: 0,
  logLevel: 'silent',
  scheduler: false,
  rateLimitPoints: 1e9,
  rateLimitAnonPoints: 1e9,
  authFailLimit: 1e9,
  registerPerHour: 1e9,
  registerPerDay: 1e9,
};

/**
 * Process CPU (user + system, µs) that `run` takes in this process (core-path.ts, http-path.ts); with `profileFile`, a
 * V8 CPU profile of it is written there.
 */
export async function inProcessCpu(run: () => Promise<unknown>, profileFile?: string): Promise<number> {
  const session = profileFile ? new Session() : undefined;
  if (session) {
    session.connect();
    await session.post('Profiler.enable');
    await session.post('Profiler.start');
  }
  const before = process.cpuUsage();
  await run();
  const cpu = process.cpuUsage(before);
  if (session) {
    writeFileSync(profileFile!, JSON.stringify((await session.post('Profiler.stop')).profile));
    session.disconnect();
  }
  return cpu.user + cpu.system;
}

export interface Result {
  rps: number;
  p50: number;
  p99: number;
  errors: number;
  /** Requests answered in the run. */
  total: number;
  /** CPU time of the target process per request (µs), when measured (`withCpu`). */
  cpuUs?: number;
  /** The target's main-thread garbage-collection pauses per request (µs), minor and major, when measured (`withCpu`). */
  gcUs?: { minor: number; major: number };
  /** Of `cpuUs`, the time spent in the kernel (system CPU: socket writes and reads, loopback TCP), µs per request. */
  sysUs?: number;
  /** CPU time of this machine's PostgreSQL processes per request (µs), when measured (`withDbCpu`). */
  dbCpuUs?: number;
  /** Kitty's named statements (`kitty_…`) the target sent per request, by name, when measured (`withCpu`). */
  statements?: Record<string, number>;
  /** Batched writes per request answered with the caller's cached summary (`cached`) or one brought up to date (`kept`). */
  summaries?: { cached: number; kept: number };
}

export async function load(opts: autocannon.Options): Promise<Result> {
  const r = await autocannon({ connections: CONNECTIONS, duration: SECONDS, ...opts });
  const non2xx = r.non2xx + r.errors + r.timeouts;
  return { rps: r.requests.average, p50: r.latency.p50, p99: r.latency.p99, errors: non2xx, total: r.requests.total };
}

export const fmt = (r: Result) =>
  `${r.rps.toFixed(0).padStart(7)} req/s  p50 ${String(r.p50).padStart(4)} ms  p99 ${String(r.p99).padStart(4)} ms${r.cpuUs === undefined ? '' : `  ${r.cpuUs.toFixed(0)} µs CPU/req`}${r.gcUs === undefined ? '' : ` (${r.sysUs === undefined ? '' : `sys ${r.sysUs.toFixed(0)}, `}GC ${r.gcUs.minor.toFixed(0)} + ${r.gcUs.major.toFixed(0)})`}${r.dbCpuUs === undefined ? '' : `  PG ${r.dbCpuUs.toFixed(0)} µs/req`}${r.errors ? `  (${r.errors} non-2xx!)` : ''}${statementsPerRequest(r)}`;

/** Kitty's statements per request, by name, as `fmt` prints them on a line of their own (empty when none were sent). */
function statementsPerRequest(r: Result): string {
  const named = Object.entries(r.statements ?? {}).filter(([, n]) => n >= 0.005);
  if (!named.length) return '';
  const { cached = 0, kept = 0 } = r.summaries ?? {};
  const summaries = cached + kept >= 0.005 ? `; caller's summary not read: cached ${cached.toFixed(2)}, kept ${kept.toFixed(2)}` : '';
  return `\n${' '.repeat(41)}statements/req: ${named.map(([name, n]) => `${name} ${n.toFixed(2)}`).join(', ')}${summaries}`;
}
/** docs/benchmarks.md table rows collected over the run, printed at the end. */
export const rows: string[] = [];
export const median = <T>(xs: T[], key: (x: T) => number): T => [...xs].sort((x, y) => key(x) - key(y))[Math.floor(xs.length / 2)]!;

/**
 * Runs A and B alternately ROUNDS times, each after `settle` when given (writes.ts: a CHECKPOINT); the median of each,
 * the median of the per-round ratios (A ÷ B), and the per-round ratios in round order.
 */
export async function paired(
  a: () => Promise<Result>,
  b: () => Promise<Result>,
  settle?: () => Promise<void>,
): Promise<[Result, Result, number, number[]]> {
  const as: Result[] = [];
  const bs: Result[] = [];
  const ratios: number[] = [];
  for (let i = 0; i < ROUNDS; i++) {
    await settle?.();
    const ra = await a();
    await settle?.();
    const rb = await b();
    as.push(ra);
    bs.push(rb);
    ratios.push(ra.rps / rb.rps);
  }
  return [median(as, (r) => r.rps), median(bs, (r) => r.rps), median(ratios, (r) => r), ratios];
}

/** Prints A next to B with the ratio and its goal, and adds the docs/benchmarks.md row (`note` is appended to its figures). */
export function compare(
  label: string,
  a: Result,
  aName: string,
  b: Result,
  bName: string,
  goal: string,
  medianRatio?: number,
  note?: string,
) {
  const ratio = medianRatio ?? a.rps / b.rps;
  console.log(
    `\n${label}\n  ${aName.padEnd(34)} ${fmt(a)}\n  ${bName.padEnd(34)} ${fmt(b)}\n  ratio ${ratio.toFixed(2)}x  (goal ${goal})${note ? `\n  ${note}` : ''}`,
  );
  const cpu = a.cpuUs === undefined ? '' : `; CPU ${a.cpuUs.toFixed(0)}${b.cpuUs === undefined ? '' : ` vs ${b.cpuUs.toFixed(0)}`} µs/req`;
  const dbCpu =
    a.dbCpuUs === undefined || b.dbCpuUs === undefined ? '' : `; PostgreSQL CPU ${a.dbCpuUs.toFixed(0)} vs ${b.dbCpuUs.toFixed(0)} µs/req`;
  rows.push(
    `| ${label} | ${ratio.toFixed(2)}x | ${goal} | ${a.rps.toFixed(0)} vs ${b.rps.toFixed(0)} req/s; p99 ${a.p99} vs ${b.p99} ms${cpu}${dbCpu}${note ? `; ${note}` : ''} |`,
  );
}

/**
 * What a tool over HTTP could reach if its own code cost nothing: the limit's statement plus one
 * bare Fastify request, both paid from the same two cores (1/(1/limit + 1/bare)), as a ratio of the
 * limit. On a machine where the load generator, the server and PostgreSQL share the cores, this
 * bounds every HTTP-vs-raw-SQL ratio. With `ratio` (Kitty / limit, the paired median) it also gives
 * Kitty's share of that ceiling against the hot writes' goal, HTTP_CEILING_GOAL.
 */
export function httpCeiling(limit: Result, bareRps: number, ratio?: number): string {
  const ceiling = 1 / (1 / limit.rps + 1 / bareRps);
  const share = ceiling / limit.rps;
  const kitty =
    ratio === undefined
      ? ''
      : `; Kitty at ${(ratio / share).toFixed(2)} of it (goal ≥ ${HTTP_CEILING_GOAL}: ${ratio / share >= HTTP_CEILING_GOAL ? 'met' : 'NOT met'})`;
  return `HTTP ceiling (the limit + a bare Fastify request at ${bareRps.toFixed(0)} req/s, same cores) ≈ ${ceiling.toFixed(0)} req/s = ${share.toFixed(2)}x${kitty}`;
}

/** A hot write's goal as a share of its HTTP ceiling (`httpCeiling`). */
export const HTTP_CEILING_GOAL = 0.8;

/**
 * Wraps a Kitty load: PostgreSQL's CPU per request is measured (`withDbCpu`); with the target's `bareUrl` also its own
 * CPU time per request (`withCpu`), and with BENCH_PROFILE set the target writes one CPU profile of it (target.ts),
 * named `<name>-<round>.cpuprofile`. BENCH_PERF_CTL brackets it for perf (`perfControlled`).
 */
export function profiler(bareUrl: string | undefined): (name: string, run: () => Promise<Result>) => () => Promise<Result> {
  const rounds = new Map<string, number>();
  return (name, measured) => async () => {
    // PostgreSQL's CPU per request is read from /proc alone; Kitty's own needs the target's bare routes (GET /cpu).
    if (!bareUrl) return perfControlled('kitty', withDbCpu(measured))();
    const run = perfControlled('kitty', withDbCpu(withCpu(bareUrl, measured)));
    if (!process.env.BENCH_PROFILE) return run();
    const n = (rounds.get(name) ?? 0) + 1;
    rounds.set(name, n);
    await fetch(`${bareUrl}/profile/start`, { method: 'POST' });
    try {
      return await run();
    } finally {
      await fetch(`${bareUrl}/profile/stop/${name}-${n}`, { method: 'POST' });
    }
  };
}

/**
 * With BENCH_PERF_CTL=<fifo>, `run` bracketed by `enable` / `disable` written to that fifo: the control fifo of a
 * `perf record --control=fifo:<fifo> --delay=-1` started beside the bench, so a system-wide profile holds only Kitty's
 * loads (its Node process, PostgreSQL's backends and the kernel), not the limits' or the set-up's. `side` names whose
 * load `run` is: Kitty's (`kitty`) or a hot write's measured HTTP ceiling (`ceiling`, the bare route running the limit);
 * BENCH_PERF_SIDE=ceiling profiles the ceilings' loads instead of Kitty's (default `kitty`), so the two profiles of one
 * row can be compared symbol by symbol.
 */
export function perfControlled(side: 'kitty' | 'ceiling', run: () => Promise<Result>): () => Promise<Result> {
  const fifo = process.env.BENCH_PERF_CTL;
  if (!fifo || side !== (process.env.BENCH_PERF_SIDE ?? 'kitty')) return run;
  return async () => {
    appendFileSync(fifo, 'enable\n');
    try {
      return await run();
    } finally {
      appendFileSync(fifo, 'disable\n');
    }
  };
}

/**
 * `run` with the target process's CPU time per request (`cpuUs`): its CPU time over the load (target.ts GET /cpu)
 * divided by the requests answered. Kitty and the bare routes share the process, and the two sides of a row run one
 * after the other, so each side's figure is its own; unlike req/s it hardly moves when other work shares the cores.
 * Also its kernel share (`sysUs`), GC pauses (`gcUs`), Kitty's named statements per request (`statements`) and its batched
 * writes answered without reading their caller's summary (`summaries`).
 */
export function withCpu(bareUrl: string, run: () => Promise<Result>): () => Promise<Result> {
  type Cpu = {
    us: number;
    systemUs: number;
    gc: { minorMs: number; majorMs: number };
    statements: Record<string, number>;
    summaries: { cached: number; kept: number };
  };
  const cpu = async () => (await (await fetch(`${bareUrl}/cpu`)).json()) as Cpu;
  return async () => {
    const before = await cpu();
    const r = await run();
    const after = await cpu();
    const n = Math.max(1, r.total);
    return {
      ...r,
      cpuUs: (after.us - before.us) / n,
      sysUs: (after.systemUs - before.systemUs) / n,
      gcUs: { minor: ((after.gc.minorMs - before.gc.minorMs) * 1000) / n, major: ((after.gc.majorMs - before.gc.majorMs) * 1000) / n },
      statements: Object.fromEntries(
        Object.entries(after.statements).map(([name, count]) => [name, (count - (before.statements[name] ?? 0)) / n]),
      ),
      summaries: {
        cached: (after.summaries.cached - before.summaries.cached) / n,
        kept: (after.summaries.kept - before.summaries.kept) / n,
      },
    };
  };
}

/** Linux's clock tick (USER_HZ), the unit of utime and stime in /proc/<pid>/stat: 100 on every x86-64 and arm64 kernel. */
const CLOCK_TICKS_PER_SECOND = 100;

/**
 * The name of process `pid` and the CPU time (µs, utime + stime) it has used, from /proc/<pid>/stat.
 * @throws when the process has exited (or /proc is missing)
 */
export function processCpu(pid: number | string): { name: string; us: number } {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  // "pid (comm) state ppid …": after the comm's closing parenthesis, utime and stime are the 12th and 13th fields.
  const close = stat.lastIndexOf(')');
  const fields = stat.slice(close + 2).split(' ');
  const ticks = Number(fields[11]) + Number(fields[12]);
  return { name: stat.slice(stat.indexOf('(') + 1, close), us: (ticks / CLOCK_TICKS_PER_SECOND) * 1e6 };
}

/**
 * CPU time (µs) used so far by each of this machine's PostgreSQL processes alive now, by pid: every process named
 * `postgres` (backends, WAL writer, checkpointer, autovacuum). Empty where /proc is missing.
 */
function postgresCpuByPid(): Map<string, number> {
  const byPid = new Map<string, number>();
  let pids: string[];
  try {
    pids = readdirSync('/proc').filter((d) => /^\d+$/.test(d));
  } catch {
    return byPid;
  }
  for (const pid of pids) {
    try {
      const p = processCpu(pid);
      if (p.name === 'postgres') byPid.set(pid, p.us);
    } catch {
      // exited since the listing
    }
  }
  return byPid;
}

/**
 * `run` with PostgreSQL's CPU time per request (`dbCpuUs`): what this machine's PostgreSQL processes used over the load
 * divided by the requests answered. Beside req/s it shows what each side of a write row costs the database, a figure
 * that hardly moves when the machine is busy. Counts every database on the server: run the bench alone. Per process:
 * one started during the load counts from 0, one that exited during it (an autovacuum worker, say) counts nothing.
 */
export function withDbCpu(run: () => Promise<Result>): () => Promise<Result> {
  return async () => {
    const before = postgresCpuByPid();
    const r = await run();
    let used = 0;
    for (const [pid, us] of postgresCpuByPid()) used += us - (before.get(pid) ?? 0);
    return { ...r, dbCpuUs: used / Math.max(1, r.total) };
  };
}

/**
 * POSTs JSON to Kitty at `baseUrl` (with `key` as the Bearer credential when given) and returns the answer's `data`;
 * throws with the path and the error object when the answer is not `ok`. Bench set-up only (registering agents, making
 * groups), not a measured path.
 */
export function toolPoster(baseUrl: string) {
  return async (p: string, body: unknown, key?: string): Promise<any> => {
    const res = await fetch(`${baseUrl}${p}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...(key ? { authorization: `Bearer ${key}` } : {}) },
      body: JSON.stringify(body),
    });
    const j = (await res.json()) as any;
    if (!j.ok) throw new Error(`${p}: ${JSON.stringify(j.error)}`);
    return j.data;
  };
}
