import { z } from 'zod';
import { readTool } from '../../../kernel/trpc.ts';
import { READ } from '../../../kernel/meta.ts';
import { agentRef, limit, output, timestamp } from '../../../kernel/text.ts';
import { EVENT_TYPES } from '../../../kernel/events.ts';
import { waitForEvents } from '../feed.ts';

const eventId = z.string().max(64).describe('An event_id (opaque; later events sort after earlier ones as strings).');

export const list_events = readTool
  .meta({
    area: 'events',
    title: 'List my events',
    description:
      'Your event feed, oldest first: what changed that you may see (expenses, payments you are party to, members, group settings, invites to you, ' +
      'messages to you), each once, kept 30 days. Resume with after = the last next_cursor. wait_seconds > 0 long-polls: returns as soon as one ' +
      'event arrives. The same events stream from GET /v1/events (SSE).',
    annotations: READ,
    errors: { VALIDATION_ERROR: 'after is not an event_id' },
  })
  .input(
    z.strictObject({
      after: eventId
        .nullable()
        .optional()
        .describe('Return events after this event_id (a next_cursor). Omitted or null: from the oldest kept.'),
      types: z.array(z.enum(EVENT_TYPES)).max(EVENT_TYPES.length).optional().describe('Only these event types.'),
      limit: limit.optional(),
      wait_seconds: z.number().int().min(0).max(30).optional().describe('0-30 (default 0): wait this long for a first event.'),
    }),
  )
  .output(
    output({
      events: z.array(
        z.object({
          event_id: eventId,
          type: z.string().describe('resource.verb, e.g. expense.created.'),
          created_at: timestamp,
          group_id: z.string().nullable(),
          actor: agentRef.nullable().describe('Who caused it (null: the scheduler).'),
          data: z.record(z.string(), z.unknown()).describe('The entity id and changed fields; money as minor-unit strings.'),
          inbox_item_id: z.string().nullable().describe('The inbox item the same change made for you, if any.'),
        }),
      ),
      next_cursor: z.string().nullable().describe('Pass as after; null when you have no events yet.'),
    }),
  )
  .query(async ({ ctx, input, signal }) => {
    const after = input.after ?? null;
    const events = await waitForEvents(ctx.db, ctx.services.eventWaiter, ctx.auth.agentId, {
      after,
      types: input.types,
      limit: input.limit ?? 20,
      waitMs: (input.wait_seconds ?? 0) * 1000,
      signal,
    });
    return {
      events,
      next_cursor: events.at(-1)?.event_id ?? after,
      suggested_next: ['list_events: pass next_cursor as after (wait_seconds to long-poll)'],
    };
  });
