/**
 * Compressed answers when the client asks (Accept-Encoding: br or gzip):
 * - `@fastify/compress` compresses any answer of at least `COMPRESS_THRESHOLD` bytes (brotli at a quality
 *   cheap enough per request; smaller answers stay as they are: compressing them saves nothing);
 * - the catalogue answers — GET /v1/tools, /openapi.json and MCP tools/list — are the big ones (about 125 KB of
 *   JSON) and the same for everyone: their compressed bytes are made once per distinct body (the body's
 *   SHA-256: a new catalogue version is a new body) and kept in a small LRU, so a repeated listing costs a hash,
 *   not a compression. Their brotli quality (6) costs about what quality 4 does per request, so a body that
 *   varies (a JSON-RPC id) costs no more than any other answer.
 * Registered after the hook that ends bodies with a newline, so both forms decode to the same text.
 */
import { createHash } from 'node:crypto';
import { brotliCompressSync, gzipSync, constants as zlib } from 'node:zlib';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import compress from '@fastify/compress';
import Negotiator from 'negotiator';
import { LRUCache } from 'lru-cache';
import { upTo } from '../runtime/lru.ts';

/** Answers smaller than this many bytes are sent uncompressed. */
const COMPRESS_THRESHOLD = 1024;
/** Catalogue bodies at least this large are compressed once and served from memory. */
const MEMO_MIN_BYTES = 16 * 1024;
const ENCODINGS = ['br', 'gzip'] as const;
type Encoding = (typeof ENCODINGS)[number];

/** Whether the answer to this request is a catalogue listing (the same bytes for everyone). */
export type IsCatalogueAnswer = (req: FastifyRequest) => boolean;

/** GET /v1/tools, /openapi.json, and tools/list on /mcp. */
const isCatalogueAnswer: IsCatalogueAnswer = (req) => {
  const path = req.url.split('?', 1)[0];
  if (req.method === 'GET') return path === '/v1/tools' || path === '/openapi.json';
  const body = req.body as { method?: unknown } | undefined;
  return req.method === 'POST' && path === '/mcp' && !!body && typeof body === 'object' && body.method === 'tools/list';
};

/** The client's preferred encoding among br and gzip, or undefined (identity). */
export function preferredEncoding(acceptEncoding: string | undefined): Encoding | undefined {
  if (!acceptEncoding) return undefined;
  const [first] = new Negotiator({ headers: { 'accept-encoding': acceptEncoding } }).encodings([...ENCODINGS]);
  return first === 'br' || first === 'gzip' ? first : undefined;
}

function compressOnce(text: string, encoding: Encoding): Buffer {
  return encoding === 'br'
    ? brotliCompressSync(text, {
        params: {
          [zlib.BROTLI_PARAM_MODE]: zlib.BROTLI_MODE_TEXT,
          [zlib.BROTLI_PARAM_QUALITY]: 6,
          [zlib.BROTLI_PARAM_SIZE_HINT]: Buffer.byteLength(text),
        },
      })
    : gzipSync(text, { level: 9 });
}

/** JSON and text answers; not event streams (compressing one would hold its events back). */
const COMPRESSIBLE = /^\s*(?:application\/(?:[\w.+-]*\+)?json|text\/(?!event-stream))/i;

/**
 * Registers both layers on `app` (before the routes, after the newline hook).
 * @param stats counts the catalogue bodies actually compressed (tests)
 */
export async function registerCompression(
  app: FastifyInstance,
  isCatalogue: IsCatalogueAnswer = isCatalogueAnswer,
  stats: { compressions: number } = { compressions: 0 },
): Promise<void> {
  const memo = new LRUCache<string, Buffer>(upTo(16));
  app.addHook('onSend', (req, reply, payload, done) => {
    if (typeof payload !== 'string' || payload.length < MEMO_MIN_BYTES || reply.statusCode !== 200) return done(null, payload);
    if (reply.hasHeader('content-encoding') || !isCatalogue(req)) return done(null, payload);
    const encoding = preferredEncoding(req.headers['accept-encoding']);
    reply.header('Vary', 'Accept-Encoding');
    if (!encoding) return done(null, payload);
    const key = `${encoding}:${createHash('sha256').update(payload).digest('base64url')}`;
    let bytes = memo.get(key);
    if (!bytes) {
      bytes = compressOnce(payload, encoding);
      stats.compressions++;
      memo.set(key, bytes);
    }
    reply.header('Content-Encoding', encoding);
    reply.removeHeader('content-length');
    done(null, bytes);
  });
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
