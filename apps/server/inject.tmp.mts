import { createTestDatabase } from '@kitty/db';
import { startKitty } from './src/index.ts';
const db = await createTestDatabase();
const k = await startKitty({ databaseUrl: db.databaseUrl, port: 0, logLevel: 'silent', rateLimitPoints: 1e9, rateLimitAnonPoints: 1e9 } as any);
const reg = await k.app.inject({ method: 'POST', url: '/v1/agents', payload: { handle: `b-${Date.now()}`, display_name: 'B' } });
const key = JSON.parse(reg.body).data.api_key;
const auth = { authorization: `Bearer ${key}`, 'content-type': 'application/json' };
const mh = { ...auth, accept: 'application/json, text/event-stream', 'mcp-protocol-version': '2025-11-25', host: '127.0.0.1' };
const cases: Record<string, any> = {
  rest_health: { method: 'GET', url: '/health', headers: auth },
  mcp_ping: { method: 'POST', url: '/mcp', headers: mh, payload: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'ping' }) },
  mcp_list: { method: 'POST', url: '/mcp', headers: mh, payload: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }) },
  rest_get_me: { method: 'POST', url: '/v1/tools/get_me', headers: auth, payload: '{}' },
  mcp_get_me: { method: 'POST', url: '/mcp', headers: mh, payload: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'get_me', arguments: {} } }) },
};
const res: Record<string, number[]> = {};
for (let round = 0; round < 4; round++) for (const [n, c] of Object.entries(cases)) {
  const N = n.includes('get_me') ? 400 : 3000;
  const c0 = process.cpuUsage();
  for (let i = 0; i < N; i++) { const r = await k.app.inject(c); if (r.statusCode !== 200) throw new Error(n + r.body); }
  const u = process.cpuUsage(c0);
  if (round > 0) (res[n] ??= []).push((u.user + u.system) / N);
}
console.log(process.env.TMP_MCP_MODE ?? 'node', process.env.TMP_MCP_REUSE ?? '1', Object.entries(res).map(([n, v]) => `${n}=${Math.min(...v).toFixed(0)}µs`).join(' '));
await k.close(); await db.drop();
