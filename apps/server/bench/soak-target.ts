/**
 * Soak target process: Kitty on DATABASE_URL with limits out of the way. Prints one JSON line with
 * its URL, then a JSON line of memory figures and cache sizes every SOAK_SAMPLE_MS (default 15 s).
 * SOAK_GC=1 (with node --expose-gc) collects garbage before each sample (finds leaks: heapUsed then
 * only counts live objects); SIGUSR2 prints one such collected sample on demand.
 */
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
console.log(JSON.stringify({ url: kitty.url }));
sample();
setInterval(sample, Number(process.env.SOAK_SAMPLE_MS ?? 15_000));
process.on('SIGTERM', () => {
  void kitty.close().then(() => process.exit(0));
});
