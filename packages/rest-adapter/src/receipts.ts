/**
 * GET /v1/receipts/:receipt_id — a receipt's file for a member (bearer) or the holder of a signed
 * link (`?expires=&sig=` from get_expense). Who may read is decided by `openReceipt` (core); this
 * route only translates: the bytes with their detected type, as an attachment, never rendered
 * as a page (CSP sandbox, nosniff from the server's headers).
 */
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { create as contentDisposition } from 'content-disposition';
import { openReceipt, type CallRequest } from '@kitty/core';

export function receiptRoutes(app: FastifyInstance, callRequest: (req: FastifyRequest) => CallRequest): void {
  app.get<{ Params: { receipt_id: string }; Querystring: { expires?: string; sig?: string } }>(
    '/v1/receipts/:receipt_id',
    async (req, reply) => {
      const { services, auth } = callRequest(req);
      const q = req.query ?? {};
      const receipt = await openReceipt(services, { auth, expires: q.expires, sig: q.sig }, req.params.receipt_id);
      return reply
        .type(receipt.contentType)
        .header('Content-Length', String(receipt.bytes.length))
        .header('Content-Disposition', contentDisposition(receipt.filename))
        .header('Content-Security-Policy', "default-src 'none'; sandbox")
        .header('Cache-Control', 'private, no-store')
        .send(Buffer.from(receipt.bytes.buffer, receipt.bytes.byteOffset, receipt.bytes.byteLength));
    },
  );
}
