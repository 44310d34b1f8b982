/**
 * The caller's event feed as the MCP resource `kitty://events` on /mcp. Reading it returns the
 * newest page of the caller's events as `{events, next_cursor}`: the same event objects and ids as
 * the list_events tool and GET /v1/events, read by the same core functions (`latestEvents`;
 * `feedOwner` decides who may read: a credential with svc:read reads its own agent's feed).
 * On 2025-11-25 `resources/subscribe`/`resources/unsubscribe` of it are checked and acknowledged
 * here; the server is stateless, so the updates travel on the GET /mcp stream (event-streams.ts).
 */
import { ResourceNotFoundError, type ReadResourceResult, type Resource } from '@modelcontextprotocol/server';
import { feedOwner, latestEvents } from '@kitty/core';
import type { McpCallContext } from './context.ts';
import { resourceError } from './receipts.ts';

export const EVENTS_URI = 'kitty://events';

/** How many events a read returns (list_events pages on from next_cursor). */
const EVENTS_PAGE = 50;

export const EVENTS_RESOURCE: Resource = {
  uri: EVENTS_URI,
  name: 'events',
  title: 'My events',
  mimeType: 'application/json',
  description:
    `Your event feed: reading returns your newest ${EVENTS_PAGE} events, oldest first, as {events, next_cursor} — the same events and ids ` +
    'as list_events and GET /v1/events; go on with list_events after = next_cursor. Subscribe to be told when new events arrive: ' +
    'subscriptions/listen with resourceSubscriptions (2026-07-28), or resources/subscribe and the GET /mcp event stream (2025-11-25). ' +
    'Scope svc:read.',
};

/** resources/read of kitty://events. */
export async function readEventsResource(callCtx: McpCallContext): Promise<ReadResourceResult> {
  const { services, auth } = callCtx.callRequest;
  try {
    const page = await latestEvents(services.prisma, feedOwner(auth), EVENTS_PAGE);
    return { contents: [{ uri: EVENTS_URI, mimeType: 'application/json', text: JSON.stringify(page) }] };
  } catch (e) {
    throw resourceError(e, EVENTS_URI, callCtx);
  }
}

/** resources/subscribe and resources/unsubscribe (2025-11-25): only kitty://events, for a caller who may read it. */
export function checkSubscription(uri: string, callCtx: McpCallContext): Record<string, never> {
  if (uri !== EVENTS_URI) throw new ResourceNotFoundError(uri, `No subscribable resource ${uri}: subscribe to ${EVENTS_URI}.`);
  try {
    feedOwner(callCtx.callRequest.auth);
  } catch (e) {
    throw resourceError(e, uri, callCtx);
  }
  return {};
}
