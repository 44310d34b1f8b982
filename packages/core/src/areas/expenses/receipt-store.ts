/**
 * The default receipt store: a bytea row per receipt in `receipt_contents`, written in the
 * caller's transaction together with the metadata row (`receipts`). The S3-compatible store
 * lives in apps/server (receipts.ts); both implement `ReceiptStore` (context.ts).
 */
import type { ReceiptStore } from '../../kernel/context.ts';

export const postgresReceiptStore: ReceiptStore = {
  kind: 'postgres',
  async put(db, receiptId, bytes) {
    await db.receiptContent.create({ data: { receiptId, content: bytes as Uint8Array<ArrayBuffer> } });
  },
  async get(db, receiptId) {
    const row = await db.receiptContent.findUnique({ where: { receiptId } });
    return row ? new Uint8Array(row.content) : null;
  },
  async delete(db, receiptId) {
    await db.receiptContent.deleteMany({ where: { receiptId } });
  },
};
