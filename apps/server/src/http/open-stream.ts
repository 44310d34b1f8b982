/**
 * Compressed bodies made of a large head compressed once and a small tail added per request, so a
 * catalogue answer whose only varying part is at its end (an MCP tools/list answer ends with the
 * request's JSON-RPC id) is sent from memory, not compressed again:
 * - `openStream(head, encoding)` compresses the head and leaves the stream open, flushed to a byte
 *   boundary (brotli: BROTLI_OPERATION_FLUSH; gzip: the 10-byte header, raw deflate ending with a sync
 *   flush, and the head's CRC-32 and length for the trailer);
 * - `closeStream(open, tail)` appends the tail as stored bytes and ends the stream: brotli, an
 *   uncompressed meta-block then an empty last meta-block (RFC 7932 §9.2); gzip, a final stored
 *   block (RFC 1951 §3.2.4) then CRC-32 and ISIZE (RFC 1952 §2.3). Any decoder reads head + tail.
 */
import { brotliCompressSync, constants as zlib, crc32, deflateRawSync } from 'node:zlib';

export type Encoding = 'br' | 'gzip';

/** A compressed stream of a head, left open. */
export interface OpenStream {
  encoding: Encoding;
  /** The stream so far (gzip: from its header). */
  bytes: Buffer;
  /** gzip: CRC-32 of the head and its length in bytes. */
  crc: number;
  length: number;
}

/** Tails longer than this (bytes) do not fit one stored block: the caller compresses the whole body instead. */
export const MAX_TAIL_BYTES = 65_535;

/** gzip member header: deflate, no flags, no mtime, max compression (XFL 2), unknown OS (255). */
const GZIP_HEADER = Buffer.from([0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 2, 0xff]);
/** brotli: an empty meta-block with ISLAST and ISLASTEMPTY set (the stream's end). */
const BROTLI_END = Buffer.from([0x03]);

/**
 * Compresses `head` (UTF-8) and leaves the stream open for `closeStream`.
 * @param encoding br (quality 6, text mode) or gzip (level 9)
 */
export function openStream(head: string, encoding: Encoding): OpenStream {
  const input = Buffer.from(head, 'utf8');
  if (encoding === 'br') {
    const bytes = brotliCompressSync(input, {
      finishFlush: zlib.BROTLI_OPERATION_FLUSH,
      params: {
        [zlib.BROTLI_PARAM_MODE]: zlib.BROTLI_MODE_TEXT,
        [zlib.BROTLI_PARAM_QUALITY]: 6,
        [zlib.BROTLI_PARAM_SIZE_HINT]: input.length,
      },
    });
    return { encoding, bytes, crc: 0, length: input.length };
  }
  const deflated = deflateRawSync(input, { level: 9, finishFlush: zlib.Z_SYNC_FLUSH });
  return { encoding, bytes: Buffer.concat([GZIP_HEADER, deflated]), crc: crc32(input), length: input.length };
}

/**
 * The whole compressed body: `open`'s bytes, then `tail` (UTF-8, at most MAX_TAIL_BYTES) stored, then the end.
 * Throws RangeError for a longer tail.
 */
export function closeStream(open: OpenStream, tail: string): Buffer {
  const t = Buffer.from(tail, 'utf8');
  if (t.length > MAX_TAIL_BYTES) throw new RangeError(`tail of ${t.length} bytes: at most ${MAX_TAIL_BYTES}`);
  if (open.encoding === 'br') {
    if (t.length === 0) return Buffer.concat([open.bytes, BROTLI_END]);
    // ISLAST 0, MNIBBLES 0 (four nibbles), MLEN - 1 in 16 bits, ISUNCOMPRESSED 1, zero bits to the byte boundary.
    const header = ((t.length - 1) << 3) | (1 << 19);
    return Buffer.concat([open.bytes, Buffer.from([header & 0xff, (header >>> 8) & 0xff, header >>> 16]), t, BROTLI_END]);
  }
  // BFINAL 1, BTYPE 00, zero bits to the byte boundary; LEN and its one's complement NLEN, little-endian.
  const stored = Buffer.from([0x01, t.length & 0xff, t.length >>> 8, ~t.length & 0xff, (~t.length >>> 8) & 0xff]);
  const trailer = Buffer.alloc(8);
  trailer.writeUInt32LE(crc32(t, open.crc), 0);
  trailer.writeUInt32LE((open.length + t.length) >>> 0, 4);
  return Buffer.concat([open.bytes, stored, t, trailer]);
}
