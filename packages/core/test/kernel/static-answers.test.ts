/**
 * Static read tools (meta.static): the answer is computed once per set of scopes and then served from memory —
 * the same object, marked `call.static` so adapters serialise it once — while a caller without the scope, or without
 * a credential, still gets the procedure's own refusal, and an unread inbox is added to a copy, never to the stored answer.
 */
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { buildRegistry, READ, type AuthInfo, type InboxSummary, type Services } from '../../src/index.ts';
import { router, readTool } from '../../src/kernel/trpc.ts';
import { output } from '../../src/kernel/text.ts';

let runs = 0;
const appRouter = router({
  list_things: readTool
    .meta({ area: 'reference', title: 'List things', description: 'Things.', annotations: READ, errors: {}, static: true })
    .input(z.strictObject({}))
    .output(output({ things: z.array(z.string()) }))
    .query(() => {
      runs++;
      return { things: ['a', 'b'], suggested_next: ['list_things: again', 'write_thing: needs svc:write'] };
    }),
  write_thing: readTool
    .meta({ area: 'reference', title: 'Read thing', description: 'A second tool.', annotations: READ, errors: {} })
    .input(z.strictObject({}))
    .output(output({}))
    .query(() => ({ suggested_next: [] })),
});
const registry = buildRegistry(appRouter);
let inbox: InboxSummary | undefined;
const services = { inboxSummaries: { get: async () => inbox } } as unknown as Services;
const auth = (scopes: string[]): AuthInfo =>
  ({ agentId: '00000000-0000-4000-8000-000000000001', handle: 'a', displayName: 'A', scopes, credential: 'api_key' }) as AuthInfo;
const call = (a: AuthInfo | null) => registry.callTool('list_things', {}, { services, auth: a, requestId: 'req_1' });

describe('static read tools', () => {
  it('run once per set of scopes, then answer the same stored object', async () => {
    const first = await call(auth(['svc:read', 'svc:write']));
    const second = await call(auth(['svc:read', 'svc:write']));
    expect(runs).toBe(1);
    expect(second.data).toBe(first.data);
    expect(second.call.static).toBe(true);
    expect(first.data).toEqual({ things: ['a', 'b'], suggested_next: ['list_things: again', 'write_thing: needs svc:write'] });
    expect(Object.isFrozen(first.data.things)).toBe(true);
  });

  it('keeps refusing callers the procedure refuses', async () => {
    await expect(call(null)).rejects.toMatchObject({ kittyCode: 'UNAUTHENTICATED' });
    await expect(call(auth(['svc:write']))).rejects.toMatchObject({ kittyCode: 'FORBIDDEN' });
  });

  it('adds an unread inbox to a copy, not to the stored answer', async () => {
    inbox = { unread: 1, requires_action: 0, top_items: [] } as unknown as InboxSummary;
    const withInbox = await call(auth(['svc:read', 'svc:write']));
    inbox = undefined;
    const plain = await call(auth(['svc:read', 'svc:write']));
    expect(withInbox.call.static).toBe(false);
    expect(withInbox.data.inbox).toBeDefined();
    expect(plain.data.inbox).toBeUndefined();
    expect(plain.call.static).toBe(true);
  });
});
