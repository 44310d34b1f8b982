/**
 * Event delivery latency (section of `pnpm bench`; `BENCH_ONLY=events` runs the events rows alone):
 *
 *   commit → SSE delivery at BENCH_EVENT_RATE events/s (default 100)            goal p50 ≤ 25 ms, p99 ≤ 100 ms
 *   commit → webhook delivery on a local receiver (KITTY_WEBHOOK_ALLOW_LOOPBACK,
 *     set by run.ts for the target), at 20 events/s and at the same rate          goal p50 ≤ 50 ms, p99 ≤ 250 ms
 *     (one endpoint: at most KITTY_WEBHOOK_IN_FLIGHT = 4 deliveries in flight, so the second row is its throughput)
 *
 * Writes are add_expense batch documents (events.ts) sent by raw pg at a fixed pace into a 4-member
 * group (up to 4 statements in flight); "commit" is when the statement's answer reached this process,
 * "delivery" when the SSE message or the webhook request did (same clock). Each event is matched by
 * its expense id; an event not delivered within 20 s after the last write counts as lost.
 */
import http from 'node:http';
import { randomUUID } from 'node:crypto';
import { EventSource } from 'eventsource';
import pg from 'pg';
import { SECONDS, rows } from './measure.ts';
import { expenseDoc, type Agent } from './expense-doc.ts';

const RATE = Number(process.env.BENCH_EVENT_RATE ?? 100);
const DRAIN_MS = 20_000;

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

interface Latency {
  p50: number;
  p99: number;
  max: number;
  delivered: number;
  sent: number;
  rate: number;
}

/** Writes `rate` events/s for SECONDS into `g` and matches each commit with its delivery (`delivered`, filled by the consumer). */
async function pacedWrites(
  pool: pg.Pool,
  g: { id: string; members: Agent[] },
  delivered: Map<string, number>,
  rate = RATE,
): Promise<Latency> {
  const committed = new Map<string, number>();
  const n = Math.round(SECONDS * rate);
  const t0 = performance.now();
  const inFlight: Array<Promise<void>> = [];
  for (let i = 0; i < n; i++) {
    const wait = t0 + (i * 1000) / rate - performance.now();
    if (wait > 0) await sleep(wait);
    const id = randomUUID();
    inFlight.push(
      pool.query({ text: 'SELECT kitty_apply_batch($1::jsonb)', values: [expenseDoc(g.id, g.members, true, id)] }).then(() => {
        committed.set(id, performance.now());
      }),
    );
  }
  await Promise.all(inFlight);
  const achieved = n / ((performance.now() - t0) / 1000);
  const deadline = Date.now() + DRAIN_MS;
  while (Date.now() < deadline && [...committed.keys()].some((id) => !delivered.has(id))) await sleep(20);
  const lat = [...committed]
    .filter(([id]) => delivered.has(id))
    .map(([id, t]) => delivered.get(id)! - t)
    .sort((a, b) => a - b);
  const q = (p: number) => lat[Math.min(lat.length - 1, Math.floor(lat.length * p))] ?? NaN;
  return { p50: q(0.5), p99: q(0.99), max: lat.at(-1) ?? NaN, delivered: lat.length, sent: n, rate: achieved };
}

function report(label: string, r: Latency, goal: { p50: number; p99: number }) {
  const met = r.delivered === r.sent && r.p50 <= goal.p50 && r.p99 <= goal.p99 ? 'met' : 'NOT met';
  const figures = `p50 ${r.p50.toFixed(1)} ms, p99 ${r.p99.toFixed(1)} ms, max ${r.max.toFixed(0)} ms; ${r.delivered}/${r.sent} delivered; writes at ${r.rate.toFixed(0)}/s`;
  console.log(`\n${label}\n  ${figures}\n  goal p50 ≤ ${goal.p50} ms, p99 ≤ ${goal.p99} ms: ${met}`);
  rows.push(
    `| ${label} | p50 ${r.p50.toFixed(1)} ms, p99 ${r.p99.toFixed(1)} ms | p50 ≤ ${goal.p50} ms, p99 ≤ ${goal.p99} ms: ${met} | ${figures} |`,
  );
}

export async function benchEventDelivery(
  kittyUrl: string,
  databaseUrl: string,
  group: (size: number, tag: string) => Promise<{ id: string; members: Agent[] }>,
  post: (p: string, body: unknown, key?: string) => Promise<any>,
): Promise<void> {
  const pool = new pg.Pool({ connectionString: databaseUrl, max: 4 });
  try {
    // SSE: one stream of a member (not the payer) that started now.
    const sseGroup = await group(4, 'sse');
    const delivered = new Map<string, number>();
    const reader = sseGroup.members[1]!;
    const es = new EventSource(`${kittyUrl}/v1/events`, {
      fetch: (input, init) =>
        fetch(input, { ...init, headers: { ...(init?.headers as Record<string, string>), authorization: `Bearer ${reader.key}` } }),
    });
    es.onmessage = (m) => {
      const id = (JSON.parse(m.data) as { data: { expense_id?: string } }).data.expense_id;
      if (id) delivered.set(id, performance.now());
    };
    await new Promise<void>((resolve, reject) => {
      es.onopen = () => resolve();
      es.onerror = (e) => reject(new Error(`SSE stream error ${String((e as { code?: number }).code)}`));
    });
    es.onerror = null;
    try {
      report(`Commit → SSE delivery at ${RATE} events/s (4-member group, one stream)`, await pacedWrites(pool, sseGroup, delivered), {
        p50: 25,
        p99: 100,
      });
    } finally {
      es.close();
    }

    // Webhooks: a local receiver answering 204 at once, registered by a member of another group.
    const hookGroup = await group(4, 'hook');
    const received = new Map<string, number>();
    let pinged: ((t: number) => void) | undefined;
    const receiver = http.createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        const t = performance.now();
        const body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as { type?: string; data?: { expense_id?: string } };
        if (body.type === 'ping') pinged?.(t);
        const id = body.data?.expense_id;
        if (id && !received.has(id)) received.set(id, t);
        res.writeHead(204).end();
      });
    });
    await new Promise<void>((r) => receiver.listen(0, '127.0.0.1', r));
    const port = (receiver.address() as { port: number }).port;
    try {
      const created = await post(
        '/v1/tools/create_webhook',
        { url: `http://127.0.0.1:${port}/hook`, event_types: ['expense.created'], idempotency_key: randomUUID() },
        hookGroup.members[1]!.key,
      );
      // The rows measure deliveries to a live endpoint. The first endpoint of a deployment starts the instance's
      // delivery queue (pg-boss, loaded on demand) at the dispatcher's next pass: a test_webhook ping waits for that,
      // and its latency is reported on its own.
      const t0 = performance.now();
      const ping = new Promise<number>((resolve) => (pinged = resolve));
      await post(
        '/v1/tools/test_webhook',
        { webhook_id: created.webhook.webhook_id, idempotency_key: randomUUID() },
        hookGroup.members[1]!.key,
      );
      const firstMs = (await ping) - t0;
      console.log(`\nFirst delivery to a new endpoint (test_webhook ping, the delivery queue started for it): ${firstMs.toFixed(0)} ms`);
      for (const rate of [20, RATE])
        report(
          `Commit → webhook delivery at ${rate} events/s (local receiver, loopback flag; one endpoint)`,
          await pacedWrites(pool, hookGroup, received, rate),
          { p50: 50, p99: 250 },
        );
      rows.push(
        `| First delivery to a new endpoint (test_webhook ping; the first endpoint starts the delivery queue) | ${firstMs.toFixed(0)} ms | report | |`,
      );
    } finally {
      receiver.closeAllConnections();
      await new Promise((r) => receiver.close(r));
    }
  } finally {
    await pool.end();
  }
}
