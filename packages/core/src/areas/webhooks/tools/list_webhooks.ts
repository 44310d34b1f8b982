import { z } from 'zod';
import { readTool } from '../../../kernel/trpc.ts';
import { READ } from '../../../kernel/meta.ts';
import { output, timestamp } from '../../../kernel/text.ts';
import { listWebhooks } from '../webhooks.ts';
import { webhookOut } from './shared.ts';

export const list_webhooks = readTool
  .meta({
    area: 'events',
    title: 'List my webhook endpoints',
    description: 'Your webhook endpoints (never their secrets), each with its 5 latest deliveries.',
    annotations: READ,
    errors: {},
  })
  .input(z.strictObject({}))
  .output(
    output({
      webhooks: z.array(
        webhookOut.extend({
          recent_deliveries: z.array(
            z.object({
              event_id: z.string().describe('The webhook-id sent.'),
              event_type: z.string(),
              status: z.enum(['pending', 'delivered', 'failed']).describe('pending: being sent or retried.'),
              status_code: z.number().int().nullable().describe('HTTP status of the last attempt (null: no response).'),
              error: z.string().nullable().describe('Why the last attempt failed.'),
              attempts: z.number().int(),
              created_at: timestamp,
              last_attempt_at: timestamp.nullable(),
            }),
          ),
        }),
      ),
    }),
  )
  .query(async ({ ctx }) => ({
    webhooks: (await listWebhooks(ctx.db, ctx.auth.agentId, ctx.services.now())) as never,
    suggested_next: ['list_events: the same events by pull'],
  }));
