/**
 * GET /v1/events: the caller's event feed as Server-Sent Events (text/event-stream), the same
 * events and ids as list_events (areas/events/feed.ts). Bearer credentials with svc:read, as the
 * tools. `id:` is the event_id; `Last-Event-ID` (or `?after=`) resumes right after that event,
 * otherwise the stream starts with events appended from now on; `?types=a,b` filters. A comment
 * line every 15 s keeps proxies from closing an idle stream. At most `maxPerCredential` open
 * streams per credential on this instance (429 beyond). The log is the truth: any instance serves
 * any stream; NOTIFY only wakes it (event-notify.ts).
 *
 * Written on Fastify's raw reply (hijacked): each event is one write; when the socket's buffer is
 * full the stream waits for 'drain' (a slow reader holds only its own stream back).
 */
import type { FastifyInstance } from 'fastify';
import {
  EVENT_TYPES,
  ToolError,
  decodeEventId,
  latestEventId,
  requiredScope,
  validationError,
  waitForEvents,
  type Services,
} from '@kitty/core';

const HEARTBEAT_MS = 15_000;

export interface EventStreamOptions {
  services: Services;
  /** KITTY_EVENT_STREAMS_PER_CREDENTIAL. */
  maxPerCredential: number;
  heartbeatMs?: number;
}

export async function registerEventStream(app: FastifyInstance, opts: EventStreamOptions): Promise<void> {
  const open = new Map<string, number>();
  const streams = new Set<AbortController>();
  // Closing the server ends every stream (clients reconnect elsewhere with Last-Event-ID).
  app.addHook('preClose', async () => {
    for (const s of streams) s.abort();
  });

  app.get('/v1/events', async (req, reply) => {
    const auth = req.kittyAuth;
    if (!auth) throw new ToolError('UNAUTHENTICATED', 'This stream needs a credential: send "Authorization: Bearer <api key>".');
    const scope = requiredScope('read');
    if (!auth.scopes.includes(scope))
      throw new ToolError('FORBIDDEN', `This credential lacks the scope ${scope}.`, { details: { required_scope: scope } });
    const query = (req.query ?? {}) as Record<string, unknown>;
    const types = typeof query.types === 'string' && query.types !== '' ? query.types.split(',') : undefined;
    for (const t of types ?? [])
      if (!(EVENT_TYPES as readonly string[]).includes(t))
        throw validationError('types', `unknown event type ${JSON.stringify(t)}`, 'unknown_type');
    const header = req.headers['last-event-id'];
    const resume = typeof header === 'string' && header !== '' ? header : typeof query.after === 'string' ? query.after : undefined;
    if (resume !== undefined) decodeEventId(resume, typeof header === 'string' ? 'Last-Event-ID' : 'after');
    const key = auth.keyId ?? `${auth.credential}:${auth.agentId}`;
    if ((open.get(key) ?? 0) >= opts.maxPerCredential)
      throw new ToolError('RATE_LIMITED', `At most ${opts.maxPerCredential} event streams per credential are open at once.`, {
        retryAfter: 5,
      });
    const db = opts.services.prisma;
    let cursor = resume ?? (await latestEventId(db, auth.agentId));

    open.set(key, (open.get(key) ?? 0) + 1);
    const ac = new AbortController();
    streams.add(ac);
    reply.hijack();
    const res = reply.raw;
    res.writeHead(200, {
      'content-type': 'text/event-stream; charset=utf-8',
      'cache-control': 'no-store',
      'x-content-type-options': 'nosniff',
      'x-accel-buffering': 'no',
      'x-request-id': req.id,
    });
    const write = async (chunk: string) => {
      if (res.destroyed) return ac.abort();
      if (!res.write(chunk))
        await new Promise<void>((resolve) => {
          const done = () => {
            res.off('drain', done);
            res.off('close', done);
            resolve();
          };
          res.on('drain', done);
          res.on('close', done);
        });
    };
    res.on('close', () => ac.abort());
    const heartbeat = setInterval(() => void write(': heartbeat\n\n'), opts.heartbeatMs ?? HEARTBEAT_MS);
    try {
      await write('retry: 2000\n: connected\n\n');
      while (!ac.signal.aborted) {
        const events = await waitForEvents(db, opts.services.eventWaiter, auth.agentId, {
          after: cursor,
          types,
          limit: 100,
          waitMs: 60_000,
          signal: ac.signal,
        });
        for (const e of events) {
          if (ac.signal.aborted) break;
          await write(`id: ${e.event_id}\ndata: ${JSON.stringify(e)}\n\n`);
          cursor = e.event_id;
        }
      }
    } catch (e) {
      req.log.warn({ err: e }, 'event stream ended by an error');
    } finally {
      clearInterval(heartbeat);
      streams.delete(ac);
      const n = (open.get(key) ?? 1) - 1;
      if (n > 0) open.set(key, n);
      else open.delete(key);
      if (!res.destroyed) res.end();
    }
  });
}
