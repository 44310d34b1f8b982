/**
 * Notifications of the caller's event feed (`kitty://events`) on /mcp. Core's `watchEvents` says
 * when the caller's own feed gained events; it is woken by the server's PostgreSQL LISTEN
 * (services.eventWaiter), so a write on any instance reaches a stream held by any other.
 *
 * - 2026-07-28, `subscriptions/listen` with `resourceSubscriptions: ["kitty://events"]`: the SDK's
 *   own listen stream (acknowledgment first, subscription id on every message, keep-alive
 *   comments, the graceful `complete` result when the server shuts down), from a
 *   `createMcpHandler` made for that one request whose event bus is the caller's feed: it
 *   publishes `resource_updated kitty://events` only when that caller's feed gains events. Any
 *   other URI is dropped from the filter first, so the acknowledgment names only what is delivered.
 * - 2025-11-25, the standalone `GET /mcp` SSE stream (the spec's channel for notifications not tied
 *   to a request) of a caller with a credential carries `notifications/resources/updated` for
 *   kitty://events whenever its feed gains events. The server keeps no session, so nothing ties a
 *   resources/subscribe to a stream: the open stream is the subscription (close it to stop).
 *
 * Both send a keep-alive comment every 15 s, count against at most `maxPerCredential` open per
 * credential on this instance (RATE_LIMITED 429 beyond, as GET /v1/events), and end when the
 * server closes (clients open them again on another instance).
 */
import { Readable } from 'node:stream';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { createMcpHandler, type AuthInfo, type ProtocolError, type Server, type ServerEventBus } from '@modelcontextprotocol/server';
import { ToolError, feedOwner, watchEvents, type AuthInfo as KittyAuth } from '@kitty/core';
import type { McpCallContext } from './context.ts';
import type { McpAnswer } from './dispatch.ts';
import { EVENTS_URI } from './events.ts';
import { resourceError } from './receipts.ts';

export interface EventStreamOptions {
  /** Open streams (listen + GET) per credential on this instance. */
  maxPerCredential: number;
  /** Keep-alive comment interval (default 15 s). */
  keepAliveMs?: number | undefined;
  onerror(e: Error): void;
}

const SSE_HEADERS = {
  'content-type': 'text/event-stream',
  'cache-control': 'no-cache, no-transform',
  'x-accel-buffering': 'no',
};

const UPDATED = JSON.stringify({ jsonrpc: '2.0', method: 'notifications/resources/updated', params: { uri: EVENTS_URI } });

type Message = { id?: unknown; method?: unknown; params?: unknown };

/** The listen request with its resourceSubscriptions narrowed to the resources that can be watched. */
function narrowed(message: Message): Message {
  const params = (message.params ?? {}) as { notifications?: { resourceSubscriptions?: unknown } };
  const wanted = params.notifications?.resourceSubscriptions;
  if (!Array.isArray(wanted)) return message;
  const notifications = { ...params.notifications, resourceSubscriptions: wanted.filter((u) => u === EVENTS_URI) };
  return { ...message, params: { ...params, notifications } };
}

function errorAnswer(id: unknown, e: ProtocolError): McpAnswer {
  const error = { code: e.code, message: e.message, ...(e.data !== undefined ? { data: e.data } : {}) };
  return { status: 200, headers: [['content-type', 'application/json']], body: JSON.stringify({ jsonrpc: '2.0', id, error }) };
}

export class EventStreams {
  private readonly open = new Map<string, number>();
  private readonly live = new Set<() => void>();
  private closing = false;
  /** Never connected: the listen entry reads the capabilities and identity it acknowledges with from it. */
  private readonly info: Server;
  private readonly opts: EventStreamOptions;

  constructor(create: () => Server, opts: EventStreamOptions) {
    this.info = create();
    this.opts = opts;
  }

  /** Counts one stream against its credential (RATE_LIMITED at the bound); returns its release. */
  private acquire(auth: KittyAuth): () => void {
    const key = auth.keyId ?? `${auth.credential}:${auth.agentId}`;
    const n = this.open.get(key) ?? 0;
    const max = this.opts.maxPerCredential;
    if (n >= max)
      throw new ToolError('RATE_LIMITED', `At most ${max} event subscriptions per credential are open at once on /mcp.`, {
        retryAfter: 5,
        suggestedAction: 'Close a subscription you no longer need, or wait and retry.',
      });
    this.open.set(key, n + 1);
    let released = false;
    return () => {
      if (released) return;
      released = true;
      const left = (this.open.get(key) ?? 1) - 1;
      if (left > 0) this.open.set(key, left);
      else this.open.delete(key);
    };
  }

  /** Watches the caller's feed until `signal` aborts; `fail` on a read error (the stream ends, the client re-subscribes). */
  private watch(callCtx: McpCallContext, agentId: string, signal: AbortSignal, onEvents: () => void, fail: () => void): void {
    const { services } = callCtx.callRequest;
    watchEvents(services.prisma, services.eventWaiter, agentId, signal, onEvents).catch((err: unknown) => {
      if (signal.aborted) return;
      callCtx.logError({ err }, 'mcp event subscription ended by an error');
      fail();
    });
  }

  /**
   * A 2026-07-28 `subscriptions/listen`: streams the SDK's listen response (and answers undefined),
   * or answers a JSON-RPC error (a caller who may not read events) or the SDK's refusal.
   */
  async listen(
    req: FastifyRequest,
    reply: FastifyReply,
    message: Message,
    request: (signal: AbortSignal) => Request,
    authInfo: AuthInfo,
    callCtx: McpCallContext,
  ): Promise<McpAnswer | undefined> {
    const auth = callCtx.callRequest.auth;
    let agentId: string;
    try {
      agentId = feedOwner(auth);
    } catch (e) {
      return errorAnswer(message.id ?? null, resourceError(e, EVENTS_URI, callCtx));
    }
    const release = this.acquire(auth!);
    const ac = new AbortController();
    const bus: ServerEventBus = {
      publish: () => {},
      subscribe: (listener) => {
        const watching = new AbortController();
        const updated = () => listener({ kind: 'resource_updated', uri: EVENTS_URI });
        this.watch(callCtx, agentId, watching.signal, updated, () => ac.abort());
        return () => watching.abort();
      },
    };
    const { keepAliveMs, onerror } = this.opts;
    const handler = createMcpHandler(() => this.info, { legacy: 'reject', bus, maxSubscriptions: 1, onerror, keepAliveMs });
    const response = await handler.fetch(request(ac.signal), { parsedBody: narrowed(message), authInfo });
    if (!response.body || !response.headers.get('content-type')?.startsWith('text/event-stream')) {
      release();
      const headers: Array<[string, string]> = [];
      response.headers.forEach((v, k) => void headers.push([k, v]));
      return { status: response.status, headers, body: response.body ? await response.text() : null };
    }
    this.pipe(
      req,
      reply,
      response.body,
      () => void handler.close(),
      () => {
        release();
        ac.abort();
      },
    );
    return undefined;
  }

  /** The 2025-11-25 standalone GET /mcp stream of a caller with a credential (ToolError when it may not read events). */
  stream(req: FastifyRequest, reply: FastifyReply, callCtx: McpCallContext): FastifyReply {
    const auth = callCtx.callRequest.auth;
    const agentId = feedOwner(auth);
    const release = this.acquire(auth!);
    const watching = new AbortController();
    const encoder = new TextEncoder();
    let controller!: ReadableStreamDefaultController<Uint8Array>;
    let keepAlive: NodeJS.Timeout | undefined;
    const stop = () => {
      watching.abort();
      clearInterval(keepAlive);
    };
    const write = (text: string) => {
      // A reader that has not taken the last message yet gets nothing more: one unread "read again" is enough.
      if (watching.signal.aborted || (controller.desiredSize ?? 1) <= 0) return;
      try {
        controller.enqueue(encoder.encode(text));
      } catch {
        stop();
      }
    };
    const end = () => {
      stop();
      try {
        controller.close();
      } catch {
        // already closed
      }
    };
    const body = new ReadableStream<Uint8Array>({
      start: (c) => {
        controller = c;
        c.enqueue(encoder.encode(': connected\n\n'));
        keepAlive = setInterval(() => write(': keepalive\n\n'), this.opts.keepAliveMs ?? 15_000);
        keepAlive.unref();
        this.watch(callCtx, agentId, watching.signal, () => write(`event: message\ndata: ${UPDATED}\n\n`), end);
      },
      cancel: stop,
    });
    this.pipe(req, reply, body, end, () => {
      release();
      stop();
    });
    return reply;
  }

  /**
   * Sends an SSE body on the raw response (hijacked: the stream outlives the handler). `end` is
   * called when the server closes; `cleanup` once when the response is gone.
   */
  private pipe(req: FastifyRequest, reply: FastifyReply, body: ReadableStream<Uint8Array>, end: () => void, cleanup: () => void): void {
    reply.hijack();
    const res = reply.raw;
    for (const [k, v] of Object.entries(reply.getHeaders())) if (v !== undefined) res.setHeader(k, v);
    res.writeHead(200, { ...SSE_HEADERS, 'x-request-id': req.id });
    const stream = Readable.fromWeb(body as import('node:stream/web').ReadableStream<Uint8Array>);
    this.live.add(end);
    res.on('close', () => {
      this.live.delete(end);
      cleanup();
      stream.destroy();
    });
    stream.on('error', (err) => {
      req.log.debug({ err }, 'mcp event stream ended');
      res.destroy();
    });
    // At shutdown the connection goes with the stream: an idle keep-alive socket would hold the server's close up.
    const socket = res.socket;
    res.on('finish', () => void (this.closing && socket?.end()));
    stream.pipe(res);
  }

  /** Ends every open stream (server shutdown): listen streams with their graceful result. */
  close(): void {
    this.closing = true;
    for (const end of [...this.live]) end();
  }
}
