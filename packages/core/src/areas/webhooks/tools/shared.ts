import { z } from 'zod';
import { EVENT_TYPES } from '../../../kernel/events.ts';
import { timestamp, uuid } from '../../../kernel/text.ts';

export const webhookId = uuid.describe('Id of your webhook endpoint (UUID), as returned by create_webhook or list_webhooks.');

export const eventTypes = z
  .array(z.enum(EVENT_TYPES))
  .min(1)
  .max(EVENT_TYPES.length)
  .nullable()
  .describe('Only these event types (null or omitted: all).');

export const webhookOut = z.object({
  webhook_id: z.string(),
  url: z.string(),
  description: z.string().nullable(),
  event_types: z.array(z.string()).nullable().describe('null: all types.'),
  paused: z.boolean(),
  disabled_at: timestamp.nullable().describe('Set when deliveries failed for 24 h; paused=false resumes.'),
  previous_secret_expires_at: timestamp.nullable().describe('Until then the secret before the last rotation also signs.'),
  created_at: timestamp,
});
