import { z } from 'zod';
import { timestamp, uuid } from '../../kernel/text.ts';
import { RECEIPT_TYPES } from './receipts.ts';

export const receiptSchema = z.object({
  receipt_id: uuid,
  content_type: z.enum(RECEIPT_TYPES).describe('Detected from the bytes.'),
  size_bytes: z.number().int(),
  filename: z.string(),
  created_at: timestamp,
});

export const receiptWithLinkSchema = receiptSchema.extend({
  download_url: z
    .string()
    .describe(
      'GET it without a credential until download_url_expires_at; afterwards get_expense gives a new one. Over MCP: resources/read kitty://receipts/{receipt_id}.',
    ),
  download_url_expires_at: timestamp,
});
