/**
 * Soak target process: Kitty on DATABASE_URL with limits out of the way. Prints one JSON line with
 * its URL, then a JSON line of memory figures and cache sizes every SOAK_SAMPLE_MS (default 15 s).
 * SOAK_GC=1 (with node --expose-gc) collects garbage before each sample (finds leaks: heapUsed then
 * only counts live objects); SIGUSR2 prints one such collected sample on demand.
 * SOAK_SNAPSHOT_OVER_MB=<n> (with --expose-gc): when a regular sample's heap passes n MB, the heap is collected and, if
 * what is live still passes n MB, one heap snapshot is written to SOAK_HEAPSNAPSHOT's folder, else the system's temporary
 * folder (once per run), so a growth that comes late in one run of several is caught while it holds.
 */
import { tmpdir } from 'node:os';
import path from 'node:path';
import { writeHeapSnapshot } from 'node:v8';
import { startKitty } from '../src/index.ts';

const kitty = await startKitty({
  port: 0,
  logLevel: 'silent',
  scheduler: false,
  redisUrl: undefined,
  rateLimitPoints: 1e9,
  rateLimitAnonPoints: 1e9,
  authFailLimit: 1e9,
  registerPerHour: 1e9,
  registerPerDay: 1e9,
});
const gc = process.env.SOAK_GC === '1' ? (globalThis as { gc?: () => void }).gc : undefined;
const sample = (collect = gc) => {
  collect?.();
  const m = process.memoryUsage();
  const figures = {
    rss: m.rss,
    heapUsed: m.heapUsed,
    heapTotal: m.heapTotal,
    external: m.external,
    arrayBuffers: m.arrayBuffers,
    caches: kitty.cacheSizes(),
  };
  console.log(JSON.stringify(collect ? { collected: figures } : { sample: figures }));
};
// SIGUSR2: a sample after a full garbage collection (live objects only: the leak indicator).
process.on('SIGUSR2', () => {
  sample((globalThis as { gc?: () => void }).gc ?? (() => {}));
  // SOAK_HEAPSNAPSHOT=<dir>: also write a heap snapshot there (compare two in Chrome DevTools).
  if (process.env.SOAK_HEAPSNAPSHOT) writeHeapSnapshot(path.join(process.env.SOAK_HEAPSNAPSHOT, `soak-${Date.now()}.heapsnapshot`));
});
const snapshotOverBytes = Number(process.env.SOAK_SNAPSHOT_OVER_MB ?? Infinity) * 1048576;
let snapshotTaken = false;
/** A regular sample; past SOAK_SNAPSHOT_OVER_MB, a collected one and (live heap still past it) one heap snapshot. */
const regularSample = () => {
  sample();
  const expose = (globalThis as { gc?: () => void }).gc;
  if (snapshotTaken || !expose || process.memoryUsage().heapUsed <= snapshotOverBytes) return;
  expose();
  if (process.memoryUsage().heapUsed <= snapshotOverBytes) return;
  snapshotTaken = true;
  sample(() => {}); // the collected figures that crossed the threshold
  const file = writeHeapSnapshot(path.join(process.env.SOAK_HEAPSNAPSHOT ?? tmpdir(), `soak-over-${Date.now()}.heapsnapshot`));
  console.error(`soak target: live heap past ${process.env.SOAK_SNAPSHOT_OVER_MB} MB; heap snapshot ${file}`);
};
console.log(JSON.stringify({ url: kitty.url }));
sample();
setInterval(regularSample, Number(process.env.SOAK_SAMPLE_MS ?? 15_000));
process.on('SIGTERM', () => {
  void kitty.close().then(() => process.exit(0));
});
