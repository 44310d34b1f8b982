/** The periodic work of every instance: due recurring expenses, then pruning of events past their retention. */
import { pruneEvents, runRecurrences, type Services } from '@kitty/core';

/**
 * Runs the recurrence scheduler now (catching up after downtime) and then every `intervalMs`
 * (KITTY_SCHEDULER_INTERVAL, default a minute); returns its stop function (waits for a running pass).
 * Each run creates every due occurrence exactly once, also with several instances running it at the
 * same time (runRecurrences: row locks and a unique occurrence index; test/runtime/two-instances.test.ts).
 */
export function startScheduler(
  services: Services,
  log: { error(obj: unknown, msg: string): void },
  intervalMs: number,
  eventRetentionDays: number,
): () => Promise<void> {
  let running: Promise<unknown> | undefined;
  const tick = () => {
    if (running) return;
    running = runRecurrences(services)
      .then((r) => {
        for (const e of r.errors) log.error(e, 'recurring expense failed; retried next run');
      })
      .catch((e) => log.error({ err: e }, 'recurrence scheduler run failed'))
      // Events past their retention, in bounded batches (at most 100,000 a run; the rest next run).
      .then(() => pruneEvents(services.prisma, new Date(services.now().getTime() - eventRetentionDays * 86_400_000)))
      .catch((e) => log.error({ err: e }, 'event pruning failed'))
      .finally(() => {
        running = undefined;
      });
  };
  tick();
  const timer = setInterval(tick, intervalMs);
  timer.unref();
  return async () => {
    clearInterval(timer);
    await running;
  };
}
