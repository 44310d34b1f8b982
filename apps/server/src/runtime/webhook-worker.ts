/**
 * Webhook deliveries (docs/events.md "Webhooks") on a pg-boss queue in its own schema `pgboss`,
 * shared by every instance:
 * - the dispatcher, woken by NOTIFY kitty_events (EventNotifier) and every `sweepMs`, reads each
 *   active endpoint's new events from its cursor on the agent's feed (readEvents, the same JSON as
 *   list_events), inserts their webhook_deliveries rows and their jobs (pg-boss `insert` on the same
 *   transaction) and moves the cursor — all in one transaction, so a kill -9 loses nothing and a
 *   second instance skips the locked endpoint. test_webhook's pings (rows not yet queued) too.
 * - the worker sends each job (webhook-delivery.ts); a failure throws so pg-boss retries it with
 *   exponential backoff and jitter, with the same webhook-id; past the retry window the delivery
 *   fails and the endpoint is disabled (disableWebhook: webhook.disabled event and inbox item).
 *   At most `maxInFlight` attempts per endpoint run at once across instances: pg-boss
 *   groupConcurrency (group = endpoint) keeps the rest queued, and a lease per attempt
 *   (webhook-attempt.ts) makes the limit exact: a job fetched beyond it waits in the instance for a
 *   local slot (EndpointSlots, ≤ LOCAL_WAIT_MS), or is re-queued for a second when other instances
 *   hold the leases.
 * - waking: the dispatcher wakes as many idle local workers as it queued jobs (pg-boss
 *   notifyWorker), and a worker that finished a job fetches again at once, so a delivery starts
 *   milliseconds after its event's NOTIFY. Only maxInFlight + 1 workers per instance poll every `pollSeconds`
 *   (retries, jobs queued by an instance that died, re-queued jobs, a missed wake-up): one endpoint whose
 *   every slot hangs leaves a quick poller for the others. The rest sleep `IDLE_POLL_SECONDS` between wakes.
 * - pg-boss itself (module, 4 connections, pollers: webhook-queue.ts) starts once any endpoint exists (6 MB of heap).
 */
import type { PgBoss } from 'pg-boss';
import type { WebhookQueueOptions } from './webhook-queue.ts';
import { disableWebhook, type Services } from '@kitty/core';
import type { EventNotifier } from './event-notify.ts';
import { sendWebhook } from './webhook-delivery.ts';
import { advanceWebhook, queueWebhookPings } from './webhook-dispatch.ts';
import { beginAttempt, EndpointSlots, endAttempt, releaseLease } from './webhook-attempt.ts';

const QUEUE = 'kitty-webhook-delivery';
const PAGE = 100;
/**
 * Poll interval of the workers beyond the first maxInFlight + 1: they are woken when there is work. The first
 * maxInFlight + 1 poll every pollSeconds, so even an endpoint whose every in-flight slot hangs (10 s timeouts) leaves
 * one quick poller for the others when a wake-up is missed.
 */
const IDLE_POLL_SECONDS = 30;
/** Longest a job fetched beyond an endpoint's in-flight limit waits in this instance for a slot (ms) before it is re-queued. */
const LOCAL_WAIT_MS = 1000;

export interface WebhookWorkerOptions extends WebhookQueueOptions {
  allowLoopback: boolean;
  maxInFlight: number;
  sweepMs?: number;
  pollSeconds?: number;
}

type Log = { error(obj: unknown, msg: string): void; warn(obj: unknown, msg: string): void };
/** Least time between two dispatcher passes (ms): bounds the dispatcher's cost per second under load; adds at most this to a delivery's latency. */
const PASS_SPACING_MS = 20;
/** The same while the last pass found no endpoint at all (most deployments): a deployment's first endpoint waits ≤ 250 ms. */
const NO_ENDPOINT_SPACING_MS = 250;

export async function startWebhookWorker(
  services: Services,
  notifier: EventNotifier,
  opts: WebhookWorkerOptions,
  log: Log,
): Promise<() => Promise<void>> {
  const prisma = services.prisma;
  let boss!: PgBoss; // set by startQueue before any pass queues a job or any worker runs
  let starting: Promise<void> | undefined;
  /** pg-boss, its queue and this instance's workers, started once (again on the next pass if starting failed). */
  const queue = () => (starting ??= startQueue().catch((e: unknown) => ((starting = undefined), Promise.reject(e))));
  async function startQueue() {
    boss = await (await import('./webhook-queue.ts')).openWebhookQueue(QUEUE, opts, log);
    // Workers that failed to start: stop this pg-boss, so the next pass's attempt does not leave it running.
    try {
      await startWorkers();
    } catch (e) {
      await boss.stop({ close: true }).catch(() => {});
      throw e;
    }
  }

  const queuePings = () => queueWebhookPings(services.pool, boss, QUEUE, PAGE);
  const advance = (webhookId: string) => advanceWebhook(services.pool, boss, QUEUE, webhookId, PAGE);

  // Workers (one pg-boss work() each, so each can be woken by id) and the ones idle now.
  const idle = new Set<string>();
  /** Wakes up to `n` idle workers of this instance (after their jobs committed); a worker leaves `idle` when it starts a job. */
  const wake = (n: number) => {
    for (const id of idle) {
      if (n-- <= 0) break;
      boss.notifyWorker(id);
    }
  };

  // One statement, no transaction, when there is nothing to do (the common case on a busy ledger whose agents have no
  // endpoints): are pings waiting, which active endpoints have events past their cursor. Raw pool: under writes it runs
  // up to 1000 / PASS_SPACING_MS times a second (once while no endpoint exists), and through Prisma each run paid its
  // query compiler again.
  let noEndpoint = false;
  const dispatchOnce = async () => {
    const [todo] = (
      await services.pool.query<{ any_endpoint: boolean; pings: boolean; hooks: string[] }>({
        name: 'kitty_webhook_todo',
        text: `SELECT EXISTS (SELECT 1 FROM webhooks) AS any_endpoint, EXISTS (SELECT 1 FROM webhook_deliveries WHERE NOT queued) AS pings,
                    ARRAY(SELECT w.id::text FROM webhooks w WHERE NOT w.paused AND w.disabled_at IS NULL
                            AND EXISTS (SELECT 1 FROM event_recipients r
                                        WHERE r.agent_id = w.agent_id AND (r.txid, r.event_id) > (w.cursor_txid, w.cursor_event_id))) AS hooks`,
      })
    ).rows;
    noEndpoint = !todo?.any_endpoint;
    if (!todo || noEndpoint) return; // pg-boss stays unloaded, and passes slow down
    await queue();
    if (todo.pings) wake(await queuePings());
    for (const id of todo.hooks)
      for (;;) {
        const { read, queued } = await advance(id);
        wake(queued);
        if (read < PAGE) break;
      }
  };

  // One pass at a time; a wake during a pass runs another after it, at most one pass per PASS_SPACING_MS: under a
  // stream of writes the wakes of many commits share one pass instead of costing a pass each.
  let running: Promise<void> | undefined;
  let again = false;
  let stopped = false;
  let lastPass = 0;
  const dispatch = () => {
    if (stopped) return;
    if (running) {
      again = true;
      return;
    }
    const wait = lastPass + (noEndpoint ? NO_ENDPOINT_SPACING_MS : PASS_SPACING_MS) - performance.now();
    running = (wait > 0 ? new Promise((r) => setTimeout(r, wait)) : Promise.resolve())
      .then(() => {
        lastPass = performance.now();
        return stopped ? undefined : dispatchOnce();
      })
      .catch((e) => log.error({ err: e }, 'webhook dispatch failed; retried on the next wake'))
      .finally(() => {
        running = undefined;
        if (again) {
          again = false;
          dispatch();
        }
      });
  };
  const unsubscribe = notifier.onAnyEvent(dispatch);
  const sweep = setInterval(dispatch, opts.sweepMs ?? 5000);
  sweep.unref();

  const windowMs = opts.retryWindowSeconds * 1000;
  // Stopping aborts attempts in flight: their jobs fail without counting an attempt and are retried (by any instance).
  const stopping = new AbortController();
  /** A lease lapses by itself this long after it was taken (seconds), if its instance died mid-attempt. */
  const leaseSeconds = Math.ceil(opts.timeoutMs / 1000) + 5;
  const local = new EndpointSlots(opts.maxInFlight, LOCAL_WAIT_MS);
  stopping.signal.addEventListener('abort', () => local.cancel());

  async function startWorkers() {
    const slots = Math.max(16, opts.maxInFlight * 4);
    for (let i = 0; i < slots; i++) {
      let self = '';
      self = await boss.work<{ delivery_id: string }>(
        QUEUE,
        {
          batchSize: 1,
          groupConcurrency: opts.maxInFlight,
          pollingIntervalSeconds: i <= opts.maxInFlight ? (opts.pollSeconds ?? 1) : Math.max(IDLE_POLL_SECONDS, opts.pollSeconds ?? 1),
        },
        async ([job]) => {
          idle.delete(self);
          try {
            if (job) await deliver(BigInt(job.data.delivery_id), job.groupId);
          } finally {
            // Fetch again at once (pg-boss skips the poll delay of a notified worker): the queue may hold more.
            idle.add(self);
            boss.notifyWorker(self);
          }
        },
      );
      idle.add(self);
    }
  }

  /** The same delivery again in a second, as a new job (this one ends). */
  const requeue = (id: bigint, webhookId: string) =>
    boss.send(QUEUE, { delivery_id: String(id) }, { group: { id: webhookId }, startAfter: 1 });

  /** One job: an attempt within the endpoint's local slots (`webhookId` is the job's group; older jobs may lack it). */
  async function deliver(id: bigint, webhookId: string | null | undefined): Promise<void> {
    if (!webhookId) return attempt(id);
    const leave = await local.enter(webhookId);
    if (!leave) return void (await requeue(id, webhookId));
    try {
      await attempt(id);
    } finally {
      leave();
    }
  }

  async function attempt(id: bigint): Promise<void> {
    const d = await beginAttempt(services.pool, id, opts.maxInFlight, leaseSeconds);
    // Gone: the endpoint was deleted; done: a retry after success; disabled: failed by the call, like the rest of its queue.
    if (d.outcome === 'gone' || d.outcome === 'done' || d.outcome === 'disabled') return;
    // Other instances hold the endpoint's other leases.
    if (d.outcome === 'busy') return void (await requeue(id, d.webhook_id));
    const now = services.now();
    const secrets = [d.secret];
    if (d.previous_secret && d.previous_secret_expires_at && d.previous_secret_expires_at > now) secrets.push(d.previous_secret);
    const r = await sendWebhook(d.url, d.event_id, d.payload, secrets, {
      allowLoopback: opts.allowLoopback,
      timeoutMs: opts.timeoutMs,
      now,
      signal: stopping.signal,
    });
    if (!r.ok && r.statusCode === null && stopping.signal.aborted) {
      // Cut by this instance's shutdown, not by the endpoint: no attempt counted, the lease freed, the job retried. (An
      // answer that arrived before the shutdown counts as it is: a 2xx is delivered, not sent again.)
      await releaseLease(services.pool, id);
      throw new Error('webhook delivery aborted: server shutting down');
    }
    const expired = !r.ok && services.now().getTime() - d.created_at.getTime() >= windowMs;
    await endAttempt(services.pool, id, r.ok ? 'delivered' : expired ? 'failed' : 'pending', r, services.now());
    if (r.ok) return;
    if (expired) {
      await prisma.$transaction((tx) => disableWebhook(tx, d.webhook_id, r.error ?? 'failed', services.now()));
      return;
    }
    throw new Error(`webhook delivery failed: ${r.error}`);
  }

  // The first pass (now) starts pg-boss when any endpoint exists: jobs left by a stopped instance are retried.
  dispatch();
  return async () => {
    stopped = true;
    unsubscribe();
    clearInterval(sweep);
    await running;
    stopping.abort();
    const started = await starting?.then(() => true).catch(() => false);
    if (started) await boss.stop({ graceful: true, timeout: 5000, close: true });
  };
}
