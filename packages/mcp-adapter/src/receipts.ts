/**
 * Receipts as MCP resources on /mcp: `resources/read` of `kitty://receipts/{receipt_id}` answers the
 * file as one blob (base64) with its detected mimeType, for a member of the receipt's group.
 * Who may read is decided by `openReceipt` (core), the same function behind GET /v1/receipts/{id};
 * this module only translates its answer and its refusals:
 * - NOT_FOUND (no such receipt, or an id that is not one) → Resource not found (-32602, `data.uri`);
 * - FORBIDDEN (not a member; a key without svc:read, which also makes the route answer 403 with an
 *   insufficient_scope challenge), UNAUTHENTICATED → -32602 with the REST error envelope as `data`;
 * - INTERNAL → -32603 (logged).
 * Receipts are not enumerated: `resources/templates/list` names the template (resources.ts registers the handlers).
 */
import {
  ProtocolError,
  ProtocolErrorCode,
  ResourceNotFoundError,
  UriTemplate,
  type ReadResourceResult,
  type ResourceTemplateType,
} from '@modelcontextprotocol/server';
import { openReceipt, toErrorEnvelope } from '@kitty/core';
import type { McpCallContext } from './context.ts';

const RECEIPT_TEMPLATE = 'kitty://receipts/{receipt_id}';
const template = new UriTemplate(RECEIPT_TEMPLATE);

export const RECEIPT_RESOURCE_TEMPLATE: ResourceTemplateType = {
  uriTemplate: RECEIPT_TEMPLATE,
  name: 'receipt',
  title: 'Receipt file',
  description:
    "A receipt's file (JPEG, PNG, WebP, HEIC or PDF) as one base64 blob with its mimeType; receipt_id as in get_expense's receipts. " +
    'Members of the expense’s group only (scope svc:read); others get an error, never bytes.',
};

/** The receipt id of a `kitty://receipts/{receipt_id}` URI, or undefined for any other URI. */
function receiptIdOf(uri: string): string | undefined {
  const match = template.match(uri);
  const id = match?.receipt_id;
  return typeof id === 'string' && id.length > 0 ? id : undefined;
}

/**
 * Kitty's refusal `e` as the JSON-RPC error of a resources/* request on `uri`: NOT_FOUND → Resource
 * not found, INTERNAL → -32603 (logged), anything else → -32602 with the REST error envelope as
 * `data` (a missing scope also makes the route answer 403 with an insufficient_scope challenge).
 */
export function resourceError(e: unknown, uri: string, callCtx: McpCallContext): ProtocolError {
  const { body, error } = toErrorEnvelope(e, callCtx.callRequest.requestId);
  if (error.kittyCode === 'NOT_FOUND') return new ResourceNotFoundError(uri, body.error.message);
  if (error.kittyCode === 'INTERNAL') {
    callCtx.logError({ err: error.cause ?? e }, 'internal error (mcp resources)');
    return new ProtocolError(ProtocolErrorCode.InternalError, body.error.message, body);
  }
  const requiredScope = error.kittyCode === 'FORBIDDEN' ? error.details?.required_scope : undefined;
  if (typeof requiredScope === 'string') callCtx.insufficientScope = requiredScope;
  return new ProtocolError(ProtocolErrorCode.InvalidParams, `${body.error.message} ${body.error.suggested_action}`, body);
}

/** resources/read of a `kitty://receipts/{receipt_id}` URI (ResourceNotFound for any other URI). */
export async function readReceipt(uri: string, callCtx: McpCallContext): Promise<ReadResourceResult> {
  const receiptId = receiptIdOf(uri);
  if (receiptId === undefined) throw new ResourceNotFoundError(uri, `No resource ${uri}: receipts are ${RECEIPT_TEMPLATE}.`);
  const { services, auth } = callCtx.callRequest;
  try {
    const receipt = await openReceipt(services, { auth }, receiptId);
    const blob = Buffer.from(receipt.bytes.buffer, receipt.bytes.byteOffset, receipt.bytes.byteLength).toString('base64');
    return { contents: [{ uri, mimeType: receipt.contentType, blob }] };
  } catch (e) {
    throw resourceError(e, uri, callCtx);
  }
}
