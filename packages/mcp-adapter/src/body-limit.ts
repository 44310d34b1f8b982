/**
 * /mcp's body limit per message, as REST has it per tool route: a tool in `toolBodyLimits` (e.g.
 * attach_receipt, whose file travels in base64) may send up to its own limit; every other message
 * keeps the server's default. Fastify's limit must be fixed before the body is read, so the /mcp
 * route takes the largest allowance, a `preParsing` hook counts the bytes read (refusing early a
 * body above the default from a caller without a credential: no tool with an allowance runs without one),
 * and `check` refuses a parsed message over the default unless it is a tools/call of a tool whose
 * allowance covers it. Refusals are PAYLOAD_TOO_LARGE (HTTP 413, JSON-RPC -32600 on MCP paths).
 */
import { Transform, type Readable, type TransformCallback } from 'node:stream';
import type { FastifyRequest, preParsingAsyncHookHandler } from 'fastify';
import { ToolError } from '@kitty/core';

const tooLarge = (limit: number) =>
  new ToolError('PAYLOAD_TOO_LARGE', `The request body is too large: at most ${limit} bytes for this message.`, {
    details: { limit_bytes: limit },
  });

const BODY_BYTES = Symbol('kitty.mcpBodyBytes');
type Counted = FastifyRequest & { [BODY_BYTES]?: number };

/** Counts the bytes that pass; fails with PAYLOAD_TOO_LARGE past `limit`. */
class ByteCounter extends Transform {
  bytes = 0;
  receivedEncodedLength = 0;
  private readonly limit: number;
  private readonly done: (bytes: number) => void;
  constructor(limit: number, done: (bytes: number) => void) {
    super();
    this.limit = limit;
    this.done = done;
  }
  override _transform(chunk: Buffer, _enc: BufferEncoding, cb: TransformCallback): void {
    this.bytes += chunk.length;
    this.receivedEncodedLength = this.bytes;
    if (this.bytes > this.limit) return cb(tooLarge(this.limit));
    this.done(this.bytes);
    cb(null, chunk);
  }
}

export interface McpBodyLimits {
  /** The route's Fastify bodyLimit: the largest allowance. */
  routeLimit: number;
  preParsing: preParsingAsyncHookHandler;
  /** Throws PAYLOAD_TOO_LARGE when the parsed message is larger than its allowance. */
  check(req: FastifyRequest, message: Record<string, unknown>): void;
}

/**
 * @param defaultLimit   the server's body limit (bytes) for every other message
 * @param toolBodyLimits tool name → the larger limit (bytes) a tools/call of it may use
 * @param hasCredential  whether the request carries a credential (the anonymous limit is the default)
 */
export function mcpBodyLimits(
  defaultLimit: number,
  toolBodyLimits: Record<string, number>,
  hasCredential: (req: FastifyRequest) => boolean,
): McpBodyLimits {
  const routeLimit = Math.max(defaultLimit, ...Object.values(toolBodyLimits));
  return {
    routeLimit,
    preParsing: async (req, _reply, payload) => {
      if (routeLimit === defaultLimit) return payload;
      const limit = hasCredential(req) ? routeLimit : defaultLimit;
      const declared = Number(req.headers['content-length']);
      if (Number.isSafeInteger(declared) && declared >= 0) {
        // Fastify holds the body to its Content-Length; a larger or smaller body is refused by it.
        if (declared > limit) throw tooLarge(limit);
        (req as Counted)[BODY_BYTES] = declared;
        return payload;
      }
      const counter = new ByteCounter(limit, (n) => void ((req as Counted)[BODY_BYTES] = n));
      (payload as Readable).on('error', (e) => counter.destroy(e));
      return (payload as Readable).pipe(counter);
    },
    check(req, message) {
      const bytes = (req as Counted)[BODY_BYTES] ?? 0;
      if (bytes <= defaultLimit) return;
      const name = message.method === 'tools/call' ? (message.params as { name?: unknown } | undefined)?.name : undefined;
      const allowance = typeof name === 'string' && Object.hasOwn(toolBodyLimits, name) ? toolBodyLimits[name]! : defaultLimit;
      if (bytes > allowance) throw tooLarge(allowance);
    },
  };
}
