/**
 * Direct answers (direct.ts): a plain tools/call or tools/list, in either era, answered without an
 * SDK Server gives the same bytes as a Server gives (an endpoint without direct answers serves the
 * same messages through the SDK); the registry is called the same way; everything that is not plain
 * (an unknown tool, a progress token, bad arguments, a cursor, an envelope the SDK refuses) is the SDK's.
 */
import { describe, expect, it } from 'vitest';
import { ToolError, type CallRequest, type Registry, type ToolDescriptor } from '@kitty/core';
import { McpEndpoint, routeMessage } from '../src/index.ts';
import { CONTEXT_KEY, toolsServerParts, type McpCallContext } from '../src/tools-server.ts';

const tool = (name: string, scope: 'svc:read' | 'svc:write'): ToolDescriptor => ({
  name,
  title: name,
  description: `The ${name} tool.`,
  kind: scope === 'svc:read' ? 'read' : 'write',
  area: 'test',
  scope,
  auth: 'required',
  idempotency: 'replay',
  annotations: { readOnlyHint: scope === 'svc:read', destructiveHint: false, idempotentHint: true, openWorldHint: false },
  errors: [],
  hasRequiredArgs: false,
  input_schema: { type: 'object', properties: {} },
  output_schema: { type: 'object', properties: {} },
});
const catalogue = [tool('echo', 'svc:read'), tool('forbidden', 'svc:write'), tool('replayed', 'svc:write'), tool('fixed', 'svc:read')];
const FIXED = { currencies: ['EUR', 'USD'] };
const calls: Array<{ name: string; args: unknown; req: CallRequest }> = [];
const registry = {
  tools: new Map(catalogue.map((t) => [t.name, t])),
  catalogue,
  version: 'v1',
  envelopeText: '',
  has: (n: string) => catalogue.some((t) => t.name === n),
  unknownTool: (n: string) => new ToolError('NOT_FOUND', `Unknown tool "${n}".`, { suggestedAction: 'List the tools with tools/list.' }),
  callTool: async (name: string, args: unknown, req: CallRequest) => {
    calls.push({ name, args, req });
    if (name === 'forbidden') throw new ToolError('FORBIDDEN', 'No write scope.', { details: { required_scope: 'svc:write' } });
    if (name === 'fixed') return { data: FIXED, call: { replayed: false, static: true } };
    return { data: { echoed: args, n: 1.5, s: 'é\u2028"' }, call: { replayed: name === 'replayed' } };
  },
} as unknown as Registry;

const ENVELOPE = {
  'io.modelcontextprotocol/protocolVersion': '2026-07-28',
  'io.modelcontextprotocol/clientInfo': { name: 't', version: '1' },
  'io.modelcontextprotocol/clientCapabilities': {},
};
const readOnly = { agentId: 'a', scopes: ['svc:read'], credential: 'api_key' } as unknown as CallRequest['auth'];

function endpoints() {
  const parts = toolsServerParts(registry, 'http://kitty.test');
  return {
    direct: new McpEndpoint(parts.create, true, () => {}, parts.answers),
    sdk: new McpEndpoint(parts.create, true, () => {}),
  };
}

/** Serves one message as the route does; returns the answer and the call context the handlers saw. */
async function serve(
  endpoint: McpEndpoint,
  era: 'modern' | 'legacy',
  method: string,
  params: Record<string, unknown>,
  opts: { auth?: CallRequest['auth']; meta?: Record<string, unknown>; id?: string | number } = {},
) {
  const modern = era === 'modern';
  const name = typeof params.name === 'string' ? params.name : undefined;
  const headers: Record<string, string> = {
    'content-type': 'application/json',
    accept: 'application/json, text/event-stream',
    'mcp-protocol-version': modern ? '2026-07-28' : '2025-11-25',
    ...(modern ? { 'mcp-method': method, ...(name ? { 'mcp-name': name } : {}) } : {}),
  };
  const meta = { ...(modern ? ENVELOPE : {}), ...opts.meta };
  const message = { jsonrpc: '2.0', id: opts.id ?? 7, method, params: { ...params, ...(Object.keys(meta).length ? { _meta: meta } : {}) } };
  const routed = routeMessage((h) => headers[h], message);
  if (routed.kind === 'reject') throw new Error(JSON.stringify(routed.body));
  const ctx: McpCallContext = {
    callRequest: { services: {} as CallRequest['services'], auth: opts.auth ?? null, requestId: 'r' },
    logError: () => {},
  };
  const authInfo = { token: '', clientId: 'c', scopes: [], extra: { [CONTEXT_KEY]: ctx } };
  const sent = await endpoint.serve(routed, () => new Request('http://kitty.test/mcp', { method: 'POST', headers }), authInfo);
  // A listing comes as a precomputed head and its tail: the body is the two together.
  const answer = { ...sent, body: sent.precomputed ? sent.precomputed.head + sent.precomputed.tail : sent.body, precomputed: undefined };
  return { answer, ctx, head: sent.precomputed?.head };
}

describe('direct answers give the bytes a Server gives', () => {
  for (const era of ['modern', 'legacy'] as const) {
    it(`${era}: tools/call success, replay, static and isError; tools/list whole and narrowed`, async () => {
      const { direct, sdk } = endpoints();
      const cases: Array<[string, Record<string, unknown>, { auth?: CallRequest['auth']; id?: string | number }]> = [
        ['tools/call', { name: 'echo', arguments: { text: 'hi', nested: { a: [1, null] } } }, {}],
        ['tools/call', { name: 'echo' }, { id: 'string-id' }],
        ['tools/call', { name: 'replayed', arguments: {} }, {}],
        ['tools/call', { name: 'fixed', arguments: {} }, {}],
        ['tools/call', { name: 'forbidden', arguments: {} }, {}],
        ['tools/list', {}, {}],
        ['tools/list', {}, { auth: readOnly, id: 'list-2' }],
      ];
      for (const [method, params, opts] of cases) {
        const want = await serve(sdk, era, method, params, opts);
        // The first answer may come from a Server (learning the envelope or listing); the next ones are direct.
        for (let i = 0; i < 3; i++) {
          const got = await serve(direct, era, method, params, opts);
          expect(got.answer, `${method} ${JSON.stringify(params)} #${i}`).toEqual(want.answer);
          expect(got.ctx.insufficientScope).toBe(want.ctx.insufficientScope);
        }
      }
      expect(direct.direct!.served).toBeGreaterThanOrEqual(2 * cases.length);
      // The registry saw the same calls with the same arguments and call requests both ways.
      const seen = calls.splice(0).map((c) => JSON.stringify([c.name, c.args, c.req.auth]));
      expect(seen).toHaveLength(4 * 5);
      for (let i = 0; i < seen.length; i += 4) expect(new Set(seen.slice(i, i + 4)).size).toBe(1);
    });
  }

  it('tools/list: the head is the same string for every request, the tail carries the id', async () => {
    const { direct } = endpoints();
    for (const era of ['modern', 'legacy'] as const) {
      const heads = [];
      for (let id = 1; id <= 4; id++) {
        const { head, answer } = await serve(direct, era, 'tools/list', {}, { id });
        if (head) heads.push(head);
        expect(JSON.parse(answer.body!).id).toBe(id);
      }
      expect(heads.length).toBeGreaterThanOrEqual(era === 'modern' ? 3 : 4);
      expect(new Set(heads).size).toBe(1);
      expect(heads[0]!.startsWith('{"result":{"tools":[')).toBe(true);
    }
  });

  it('a modern tools/call result carries resultType and the server info after the result fields', async () => {
    const { direct } = endpoints();
    // The SDK's entry serves the first (no 2026-07-28 Server yet), a lane the second (learning the envelope).
    for (let i = 0; i < 2; i++) await serve(direct, 'modern', 'tools/call', { name: 'echo', arguments: {} });
    const { answer } = await serve(direct, 'modern', 'tools/call', { name: 'replayed', arguments: {} });
    expect(direct.direct!.served).toBe(1);
    expect(Object.keys(JSON.parse(answer.body!).result)).toEqual(['_meta', 'content', 'structuredContent', 'resultType']);
  });
});

describe('what is not plain is answered by a Server', () => {
  for (const era of ['modern', 'legacy'] as const) {
    it(`${era}: unknown tool, progress token, non-object arguments, a cursor`, async () => {
      const { direct, sdk } = endpoints();
      for (let i = 0; i < 2; i++) await serve(direct, era, 'tools/call', { name: 'echo', arguments: {} }); // learns the envelope
      const before = direct.direct!.served;
      const cases: Array<[string, Record<string, unknown>, Record<string, unknown>]> = [
        ['tools/call', { name: 'nope', arguments: {} }, {}],
        ['tools/call', { name: 'echo', arguments: {} }, { progressToken: 3 }],
        ['tools/call', { name: 'echo', arguments: [1] }, {}],
        ['tools/call', { name: 'echo', arguments: {}, task: { ttl: 1 } }, {}],
        ['tools/list', { cursor: 'x' }, {}],
      ];
      for (const [method, params, meta] of cases) {
        const got = await serve(direct, era, method, params, { meta });
        expect(got.answer).toEqual((await serve(sdk, era, method, params, { meta })).answer);
      }
      expect(direct.direct!.served).toBe(before);
      const unknown = await serve(direct, era, 'tools/call', { name: 'nope' });
      expect(JSON.parse(unknown.answer.body!).error).toMatchObject({
        code: -32602,
        message: expect.stringContaining('Unknown tool "nope"'),
      });
    });
  }

  it('an envelope the SDK refuses is never answered directly', async () => {
    const { direct } = endpoints();
    const bad = { 'io.modelcontextprotocol/clientCapabilities': { sampling: 5 } };
    for (let i = 0; i < 3; i++) {
      const { answer } = await serve(direct, 'modern', 'tools/call', { name: 'echo', arguments: {} }, { meta: bad });
      expect(JSON.parse(answer.body!).error.code).toBe(-32602);
    }
    expect(direct.direct!.served).toBe(0);
  });

  it('reuseServers false answers nothing directly', () => {
    const parts = toolsServerParts(registry, 'http://kitty.test');
    expect(new McpEndpoint(parts.create, false, () => {}, parts.answers).direct).toBeUndefined();
  });
});
