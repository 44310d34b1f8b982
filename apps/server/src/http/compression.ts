/**
 * Compressed answers when the client asks (Accept-Encoding: br or gzip):
 * - `@fastify/compress` compresses any answer of at least `COMPRESS_THRESHOLD` bytes (brotli at a quality
 *   cheap enough per request; smaller answers stay as they are: compressing them saves nothing);
 * - the catalogue answers — GET /v1/tools, /openapi.json and MCP tools/list — are the big ones (about 160 KB of
 *   JSON) and the same for everyone but for an MCP answer's JSON-RPC id at its end. The adapters send them through
 *   `precomputedBodies`: a constant head (the same string each time) and a short tail. The head is encoded and
 *   compressed once per encoding (brotli quality 6, gzip level 9, as an open stream: open-stream.ts) and kept in a
 *   small LRU; a request costs copying those bytes and appending its tail — never a serialisation, a hash or a
 *   compression of the catalogue.
 * Registered after the hook that ends bodies with a newline, so both forms decode to the same text; a precomputed
 * body gets its newline here.
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import compress from '@fastify/compress';
import Negotiator from 'negotiator';
import { LRUCache } from 'lru-cache';
import { constants as zlib } from 'node:zlib';
import { upTo } from '../runtime/lru.ts';
import { closeStream, openStream, type Encoding, type OpenStream } from './open-stream.ts';

/** Answers smaller than this many bytes are sent uncompressed. */
const COMPRESS_THRESHOLD = 1024;
const ENCODINGS = ['br', 'gzip'] as const;

/** The client's preferred encoding among br and gzip, or undefined (identity). */
export function preferredEncoding(acceptEncoding: string | undefined): Encoding | undefined {
  if (!acceptEncoding) return undefined;
  const [first] = new Negotiator({ headers: { 'accept-encoding': acceptEncoding } }).encodings([...ENCODINGS]);
  return first === 'br' || first === 'gzip' ? first : undefined;
}

/** Sends `head` + `tail` as JSON; `head` is the same string on every call for the same answer. */
export type SendPrecomputed = (req: FastifyRequest, reply: FastifyReply, head: string, tail: string) => FastifyReply;

/**
 * The sender of catalogue answers (see the module comment): the body `head + tail + "\n"` as
 * `application/json; charset=utf-8`, with `Vary: Accept-Encoding`, compressed when the client asks.
 * @param stats counts the heads actually compressed (tests)
 */
export function precomputedBodies(stats: { compressions: number } = { compressions: 0 }): SendPrecomputed {
  const memo = new LRUCache<string, { identity: Buffer } & Partial<Record<Encoding, OpenStream>>>(upTo(16));
  return (req, reply, head, tail) => {
    let bodies = memo.get(head);
    if (!bodies) memo.set(head, (bodies = { identity: Buffer.from(head, 'utf8') }));
    reply.header('Vary', 'Accept-Encoding').type('application/json; charset=utf-8');
    const end = `${tail}\n`; // every JSON body ends with a newline (app.ts)
    const encoding = preferredEncoding(req.headers['accept-encoding']);
    if (!encoding) return reply.send(Buffer.concat([bodies.identity, Buffer.from(end, 'utf8')]));
    let open = bodies[encoding];
    if (!open) {
      open = bodies[encoding] = openStream(head, encoding);
      stats.compressions++;
    }
    return reply.header('Content-Encoding', encoding).send(closeStream(open, end));
  };
}

/** JSON and text answers; not event streams (compressing one would hold its events back). */
const COMPRESSIBLE = /^\s*(?:application\/(?:[\w.+-]*\+)?json|text\/(?!event-stream))/i;

/** Registers `@fastify/compress` on `app` (before the routes, after the newline hook). */
export async function registerCompression(app: FastifyInstance): Promise<void> {
  await app.register(compress, {
    globalCompression: true,
    // Request bodies are not decompressed: a compressed body stays what it was before (not JSON), and no
    // small upload can expand past the body limit.
    globalDecompression: false,
    threshold: COMPRESS_THRESHOLD,
    customTypes: COMPRESSIBLE,
    encodings: [...ENCODINGS],
    brotliOptions: { params: { [zlib.BROTLI_PARAM_MODE]: zlib.BROTLI_MODE_TEXT, [zlib.BROTLI_PARAM_QUALITY]: 4 } },
  });
}
