/**
 * The resources of /mcp: `kitty://events` (listed; events.ts) and receipt files
 * `kitty://receipts/{receipt_id}` (a template; receipts.ts). Core decides who reads what; these
 * handlers only route by URI and translate.
 */
import type { Server } from '@modelcontextprotocol/server';
import { callContextOf } from './context.ts';
import { EVENTS_RESOURCE, EVENTS_URI, checkSubscription, readEventsResource } from './events.ts';
import { RECEIPT_RESOURCE_TEMPLATE, readReceipt } from './receipts.ts';

/** Adds resources/list, resources/templates/list, resources/read and resources/(un)subscribe to a /mcp Server. */
export function registerResources(server: Server): void {
  server.setRequestHandler('resources/list', () => ({ resources: [EVENTS_RESOURCE] }));
  server.setRequestHandler('resources/templates/list', () => ({ resourceTemplates: [RECEIPT_RESOURCE_TEMPLATE] }));
  server.setRequestHandler('resources/read', (request, ctx) => {
    const uri = request.params.uri;
    const callCtx = callContextOf(ctx);
    return uri === EVENTS_URI ? readEventsResource(callCtx) : readReceipt(uri, callCtx);
  });
  server.setRequestHandler('resources/subscribe', (request, ctx) => checkSubscription(request.params.uri, callContextOf(ctx)));
  server.setRequestHandler('resources/unsubscribe', (request, ctx) => checkSubscription(request.params.uri, callContextOf(ctx)));
}
