/**
 * Refusals below the routes, in Kitty's shapes: the error envelope on REST paths and a JSON-RPC
 * error (code -32600 Invalid Request, or -32700 Parse error for bad JSON, with the envelope in
 * `error.data`) on /mcp and /mcp/docs.
 *
 * Three places produce them:
 * - `clientErrorHandler`: Node's HTTP parser (llhttp) refuses a message before Fastify sees it —
 *   Content-Length with Transfer-Encoding (RFC 9112 §6.3), duplicate Content-Length, a request line
 *   that is not HTTP, headers over `maxHeaderSize` (431, or 414 when the request line alone is too
 *   long), header/request timeouts (408). Node emits `clientError` with the socket; we write the
 *   response ourselves and close. Whether the request was for /mcp is read from the bytes the
 *   parser had (`err.rawPacket`); when they do not include the request line (a header section
 *   split over several TCP packets), the answer is the REST envelope.
 * - `frameworkErrorToTool`: Fastify's router refuses a URL (bad percent-encoding, a path
 *   parameter over `maxParamLength`) before any hook runs.
 * (413, 415 and bad JSON on a routed /mcp request are the MCP adapter's own error handler's.)
 * What cannot be changed: a connection Node resets or that is already closed gets no answer;
 * a refusal after the response has started is only a closed connection.
 */
import { randomUUID } from 'node:crypto';
import { STATUS_CODES } from 'node:http';
import type { Duplex } from 'node:stream';
import { ToolError, toErrorEnvelope, type ErrorEnvelope } from '@kitty/core';
import { isMcpPath, toMcpErrorBody } from '@kitty/mcp-adapter';

/** A request line this long is reported as 414 URI_TOO_LONG rather than 431 when the header section overflows. */
const URI_LIMIT = 8192;

export const newRequestId = () => {
  // A UUID's five groups of hex digits without the dashes (8-4-4-4-12).
  const u = randomUUID();
  return `req_${u.slice(0, 8)}${u.slice(9, 13)}${u.slice(14, 18)}${u.slice(19, 23)}${u.slice(24)}`;
};

/**
 * The body to send for `envelope` on `url` when the refusal comes before routing (no adapter's
 * error handler can run): the envelope itself on REST; on MCP paths the MCP adapter's form
 * (`toMcpErrorBody`: a JSON-RPC error for transport-level refusals).
 */
export function toWireBody(url: string, envelope: ErrorEnvelope): unknown {
  return isMcpPath(url) ? toMcpErrorBody(envelope) : envelope;
}

/** Fastify's router refusals (`frameworkErrors`): bad URL encoding → BAD_REQUEST, over-long path parameter → URI_TOO_LONG. */
export function frameworkErrorToTool(err: { code?: string }): ToolError {
  if (err.code === 'FST_ERR_MAX_PARAM_LENGTH') return new ToolError('URI_TOO_LONG', 'A path segment is too long (at most 100 characters).');
  if (err.code === 'FST_ERR_BAD_URL') return new ToolError('BAD_REQUEST', 'The URL is not validly percent-encoded UTF-8.');
  return new ToolError('BAD_REQUEST', 'The request could not be routed.');
}

/** What Node passes to `clientError`: llhttp's `HPE_*` codes, `ERR_HTTP_REQUEST_TIMEOUT`, socket errors. */
type ParserError = Error & { code?: string; rawPacket?: unknown };

/** The bytes the parser had when it failed (a Buffer at run time), as latin1 text. */
const rawText = (err: ParserError, end?: number) => (Buffer.isBuffer(err.rawPacket) ? err.rawPacket.toString('latin1', 0, end) : '');

/** Node/llhttp parse errors (`clientError`) → the refusal to send. */
function clientErrorToTool(err: ParserError): ToolError {
  switch (err.code) {
    case 'ERR_HTTP_REQUEST_TIMEOUT':
      return new ToolError('REQUEST_TIMEOUT', 'The request was not received in time.');
    case 'HPE_HEADER_OVERFLOW': {
      // A request line of 8 KiB or more (or one with no end in sight): the URL is the culprit.
      const raw = rawText(err);
      const eol = raw.indexOf('\n');
      if (/^[A-Z]+ \S/.test(raw) && (eol === -1 || eol >= URI_LIMIT))
        return new ToolError('URI_TOO_LONG', `The URL is too long (keep it under ${URI_LIMIT} bytes).`);
      return new ToolError('HEADERS_TOO_LARGE', 'The request headers are too large (at most 16 KB together, request line included).');
    }
    case 'HPE_UNEXPECTED_CONTENT_LENGTH':
      return new ToolError(
        'BAD_REQUEST',
        'Content-Length and Transfer-Encoding must not both be sent (RFC 9112 §6.3), nor Content-Length twice.',
      );
    case 'HPE_INVALID_CONTENT_LENGTH':
      return new ToolError('BAD_REQUEST', 'Content-Length is invalid (sent twice with different values, or not a number).');
    case 'HPE_INVALID_TRANSFER_ENCODING':
    case 'HPE_INVALID_CHUNK_SIZE':
      return new ToolError('BAD_REQUEST', 'Transfer-Encoding or the chunked body is invalid.');
    default:
      return new ToolError('BAD_REQUEST', `The HTTP request is malformed (${err.code ?? 'parse error'}).`);
  }
}

/**
 * `clientError` listener (Fastify's `clientErrorHandler` option): writes the refusal in Kitty's
 * shape, then closes the connection (the parser state is unknown after such an error).
 * @param log where to note the refusal (debug level: these are the client's mistakes)
 */
export function clientErrorHandler(log: { debug(obj: unknown, msg: string): void }) {
  return (err: ParserError, socket: Duplex): void => {
    if (err.code === 'ECONNRESET' || socket.destroyed) return;
    const requestId = newRequestId();
    const tool = clientErrorToTool(err);
    const { status, body } = toErrorEnvelope(tool, requestId);
    const requestLine = /^[A-Z]+ (\S+)/.exec(rawText(err, 512));
    const json = JSON.stringify(toWireBody(requestLine?.[1] ?? '', body));
    log.debug({ err, requestId, status }, 'refused a malformed HTTP request');
    // Node's own default answers only when no response has started on this socket; so do we.
    const started = (socket as Duplex & { _httpMessage?: { headersSent?: boolean } })._httpMessage?.headersSent === true;
    if (socket.writable && !started) {
      socket.end(
        `HTTP/1.1 ${status} ${STATUS_CODES[status]}\r\nContent-Type: application/json; charset=utf-8\r\nContent-Length: ${Buffer.byteLength(json)}\r\n` +
          `X-Request-Id: ${requestId}\r\nCache-Control: no-store\r\nX-Content-Type-Options: nosniff\r\nConnection: close\r\n\r\n${json}`,
      );
      return;
    }
    socket.destroy();
  };
}
