/** The JSON-RPC form of refusals made before an MCP message is read (bad JSON, 413, …) on MCP paths. */
import type { ErrorEnvelope } from '@kitty/core';

/** Error codes that mean "the HTTP message itself was refused": on MCP paths they become JSON-RPC errors. */
const TRANSPORT_CODES = new Set([
  'BAD_REQUEST',
  'REQUEST_TIMEOUT',
  'PAYLOAD_TOO_LARGE',
  'URI_TOO_LONG',
  'UNSUPPORTED_MEDIA_TYPE',
  'HEADERS_TOO_LARGE',
]);

/** True for /mcp, /mcp/docs and anything below them (for refusals made before routing, e.g. by Node's HTTP parser). */
export function isMcpPath(url: string): boolean {
  return /^\/mcp(?:[/?#]|$)/.test(url);
}

/**
 * The JSON-RPC form of a transport-level refusal on MCP paths: -32700 Parse error for bad JSON
 * (details.issues[0].code "invalid_json"), -32600 Invalid Request for the codes in TRANSPORT_CODES,
 * with the envelope as `error.data` (JSON-RPC 2.0 §5.1). Any other envelope (401, 403, 404, 405,
 * 429, …) is returned unchanged: MCP clients read those from the HTTP status.
 */
export function toMcpErrorBody(envelope: ErrorEnvelope): unknown {
  const invalidJson = (envelope.error.details?.issues as Array<{ code?: string }> | undefined)?.[0]?.code === 'invalid_json';
  if (!invalidJson && !TRANSPORT_CODES.has(envelope.error.code)) return envelope;
  const code = invalidJson ? -32700 : -32600;
  const message = `${invalidJson ? 'Parse error' : 'Invalid Request'}: ${envelope.error.message}`;
  return { jsonrpc: '2.0', id: null, error: { code, message, data: envelope } };
}
