import Fastify from 'fastify';
import { ToolError, type Registry, type ToolDescriptor } from '@kitty/core';
import { registerMcpRoutes } from '../src/index.ts';
const tool = (name: string): ToolDescriptor => ({ name, title: name, description: 'd', kind: 'read', area: 't', scope: 'svc:read', auth: 'required', idempotency: 'none', annotations: { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false }, errors: [], hasRequiredArgs: false, input_schema: { type: 'object' }, output_schema: { type: 'object' } } as any);
const catalogue = [tool('get_me')];
const registry: Registry = { tools: new Map(catalogue.map((t) => [t.name, t])), catalogue, version: 'v', has: (n) => n === 'get_me', validateArgs: () => ({ ok: true }), unknownTool: (n) => new ToolError('NOT_FOUND', n), callTool: async () => ({ data: { agent: { handle: 'x' } }, call: { replayed: false } }) as any } as any;
const app = Fastify();
app.removeAllContentTypeParsers();
app.addContentTypeParser('*', { parseAs: 'string' }, (_r, b, done) => done(null, JSON.parse(String(b))));
app.post('/rest', async () => ({ ok: true, data: { agent: { handle: 'x' } } }));
await registerMcpRoutes(app, { registry, callRequest: () => ({ services: {} as any, auth: { agentId: 'a', scopes: ['svc:read', 'svc:write'], credential: 'api_key' } as any, requestId: 'r' }), baseUrl: 'http://localhost', allowedHosts: [], errorEnvelope: (e: any) => { console.log(e); return { status: 500, body: {} as any }; }, wwwAuthenticate: () => 'x', reuseServers: process.env.REUSE !== '0' });
await app.ready();
const ENV = { 'io.modelcontextprotocol/protocolVersion': '2026-07-28', 'io.modelcontextprotocol/clientInfo': { name: 'b', version: '1' }, 'io.modelcontextprotocol/clientCapabilities': {} };
const reqs: Record<string, any> = {
  rest: { method: 'POST', url: '/rest', headers: { 'content-type': 'application/json', host: 'localhost' }, payload: '{}' },
  legacy: { method: 'POST', url: '/mcp', headers: { 'content-type': 'application/json', host: 'localhost', accept: 'application/json, text/event-stream', 'mcp-protocol-version': '2025-11-25' }, payload: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'get_me', arguments: {} } }) },
  modern: { method: 'POST', url: '/mcp', headers: { 'content-type': 'application/json', host: 'localhost', accept: 'application/json, text/event-stream', 'mcp-protocol-version': '2026-07-28', 'mcp-method': 'tools/call', 'mcp-name': 'get_me' }, payload: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'get_me', arguments: {}, _meta: ENV } }) },
};
for (const k of Object.keys(reqs)) { const r = await app.inject(reqs[k]); if (r.statusCode !== 200) console.log(k, r.statusCode, r.body.slice(0, 300)); }
const best: Record<string, number> = {};
for (let round = 0; round < 5; round++) for (const [k, r] of Object.entries(reqs).filter(([k]) => !process.env.ONLY || k === process.env.ONLY || k === "rest")) {
  const N = 2000; const t0 = performance.now();
  for (let i = 0; i < N; i++) await app.inject(r);
  const us = (performance.now() - t0) * 1000 / N; best[k] = Math.min(best[k] ?? 1e9, us);
}
console.log(Object.entries(best).map(([k, v]) => `${k} ${v.toFixed(0)} µs`).join(" | "));
process.exit(0);
