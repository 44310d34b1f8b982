/**
 * Receipts as MCP resources on /mcp: `resources/read` of `kitty://receipts/{receipt_id}` answers the
 * file as one blob (base64) with its detected mimeType, for a member of the receipt's group.
 * Who may read is decided by `openReceipt` (core), the same function behind GET /v1/receipts/{id};
 * this module only translates its answer and its refusals:
 * - NOT_FOUND (no such receipt, or an id that is not one) → Resource not found (-32602, `data.uri`);
 * - FORBIDDEN (not a member; a key without svc:read, which also makes the route answer 403 with an
 *   insufficient_scope challenge), UNAUTHENTICATED → -32602 with the REST error envelope as `data`;
 * - INTERNAL → -32603 (logged).
 * Receipts are not enumerated: `resources/list` is empty and `resources/templates/list` names the template.
 */
import {
  ProtocolError,
  ProtocolErrorCode,
  ResourceNotFoundError,
  UriTemplate,
  type ReadResourceResult,
  type ResourceTemplateType,
  type Server,
} from '@modelcontextprotocol/server';
import { openReceipt, toErrorEnvelope } from '@kitty/core';
import { callContextOf } from './context.ts';

const RECEIPT_TEMPLATE = 'kitty://receipts/{receipt_id}';
const template = new UriTemplate(RECEIPT_TEMPLATE);

const RECEIPT_RESOURCE_TEMPLATE: ResourceTemplateType = {
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

/** Adds resources/list, resources/templates/list and resources/read (receipts) to a /mcp Server. */
export function registerReceiptResources(server: Server): void {
  server.setRequestHandler('resources/list', () => ({ resources: [] }));
  server.setRequestHandler('resources/templates/list', () => ({ resourceTemplates: [RECEIPT_RESOURCE_TEMPLATE] }));
  server.setRequestHandler('resources/read', async (request, ctx): Promise<ReadResourceResult> => {
    const uri = request.params.uri;
    const receiptId = receiptIdOf(uri);
    if (receiptId === undefined) throw new ResourceNotFoundError(uri, `No resource ${uri}: receipts are ${RECEIPT_TEMPLATE}.`);
    const callCtx = callContextOf(ctx);
    const { services, auth } = callCtx.callRequest;
    try {
      const receipt = await openReceipt(services, { auth }, receiptId);
      const blob = Buffer.from(receipt.bytes.buffer, receipt.bytes.byteOffset, receipt.bytes.byteLength).toString('base64');
      return { contents: [{ uri, mimeType: receipt.contentType, blob }] };
    } catch (e) {
      const { body, error } = toErrorEnvelope(e, callCtx.callRequest.requestId);
      if (error.kittyCode === 'NOT_FOUND') throw new ResourceNotFoundError(uri, body.error.message);
      if (error.kittyCode === 'INTERNAL') {
        callCtx.logError({ err: error.cause ?? e }, 'internal error (mcp resources/read)');
        throw new ProtocolError(ProtocolErrorCode.InternalError, body.error.message, body);
      }
      const requiredScope = error.kittyCode === 'FORBIDDEN' ? error.details?.required_scope : undefined;
      if (typeof requiredScope === 'string') callCtx.insufficientScope = requiredScope;
      throw new ProtocolError(ProtocolErrorCode.InvalidParams, `${body.error.message} ${body.error.suggested_action}`, body);
    }
  });
}
