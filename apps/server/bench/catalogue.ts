/**
 * The size of the catalogue answers as sent on the wire: MCP tools/list (2026-07-28 and
 * 2025-11-25) and GET /v1/tools, uncompressed and as the server compresses them for
 * `Accept-Encoding: br` and `gzip` (bytes of the HTTP body, read with node:http, which does not
 * decompress). Each compressed body is decompressed and checked to be the uncompressed one.
 * The budget: the whole MCP tools/list ≤ 160,000 bytes uncompressed.
 */
import http from 'node:http';
import { brotliDecompressSync, gunzipSync } from 'node:zlib';
import { rows } from './measure.ts';

export const CATALOGUE_BUDGET = 160_000;
const ENCODINGS = ['identity', 'br', 'gzip'] as const;
type Encoding = (typeof ENCODINGS)[number];

const ENVELOPE = {
  'io.modelcontextprotocol/protocolVersion': '2026-07-28',
  'io.modelcontextprotocol/clientInfo': { name: 'bench', version: '1' },
  'io.modelcontextprotocol/clientCapabilities': {},
};

interface Wire {
  status: number;
  encoding: string;
  body: Buffer;
}

/** One request; the body's bytes exactly as received. */
function raw(url: string, method: 'GET' | 'POST', headers: Record<string, string>, body?: string): Promise<Wire> {
  return new Promise((resolve, reject) => {
    const req = http.request(url, { method, headers }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () =>
        resolve({ status: res.statusCode!, encoding: String(res.headers['content-encoding'] ?? 'identity'), body: Buffer.concat(chunks) }),
      );
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end(body);
  });
}

function decode(w: Wire): string {
  if (w.encoding === 'br') return brotliDecompressSync(w.body).toString('utf8');
  if (w.encoding === 'gzip') return gunzipSync(w.body).toString('utf8');
  return w.body.toString('utf8');
}

function mcpList(era: '2026-07-28' | '2025-11-25', auth: Record<string, string>) {
  const modern = era === '2026-07-28';
  return {
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list', params: modern ? { _meta: ENVELOPE } : {} }),
    headers: {
      ...auth,
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
      'mcp-protocol-version': era,
      ...(modern ? { 'mcp-method': 'tools/list' } : {}),
    },
  };
}

const kb = (n: number) => n.toLocaleString('en');

/** Prints the sizes and adds one row per catalogue answer to the bench table. */
export async function benchCatalogue(kittyUrl: string, auth: Record<string, string>): Promise<void> {
  const answers = [
    ['MCP tools/list, 2026-07-28', 'POST', `${kittyUrl}/mcp`, mcpList('2026-07-28', auth)],
    ['MCP tools/list, 2025-11-25', 'POST', `${kittyUrl}/mcp`, mcpList('2025-11-25', auth)],
    ['GET /v1/tools', 'GET', `${kittyUrl}/v1/tools`, { headers: auth, body: undefined }],
  ] as const;
  console.log(`\nCatalogue answers on the wire (bytes of the HTTP body; budget for MCP tools/list ${kb(CATALOGUE_BUDGET)} uncompressed)`);
  for (const [label, method, url, { headers, body }] of answers) {
    const size = {} as Record<Encoding, number>;
    let text: string | undefined;
    let tools = 0;
    for (const enc of ENCODINGS) {
      const w = await raw(url, method, { ...headers, 'accept-encoding': enc }, body);
      if (w.status !== 200) throw new Error(`${label} (${enc}): ${w.status} ${w.body.toString('utf8').slice(0, 300)}`);
      if (w.encoding !== enc) throw new Error(`${label}: asked for ${enc}, got ${w.encoding}`);
      const decoded = decode(w);
      if (text === undefined) {
        text = decoded;
        const json = JSON.parse(text) as { result?: { tools: unknown[] }; tools?: unknown[]; data?: { tools: unknown[] } };
        tools = (json.result?.tools ?? json.data?.tools ?? json.tools ?? []).length;
      } else if (decoded !== text) throw new Error(`${label}: the ${enc} body does not decode to the uncompressed one`);
      size[enc] = w.body.length;
    }
    const isMcp = label.startsWith('MCP');
    const met = size.identity <= CATALOGUE_BUDGET ? 'met' : 'NOT met';
    const pct = (enc: Encoding) => `${((size[enc] / size.identity) * 100).toFixed(1)}%`;
    console.log(
      `  ${label.padEnd(28)} ${kb(size.identity).padStart(8)} B  br ${kb(size.br).padStart(7)} B (${pct('br')})  gzip ${kb(size.gzip).padStart(7)} B (${pct('gzip')})  ${tools} tools${isMcp ? `  budget ${met}` : ''}`,
    );
    rows.push(
      `| ${label} size (${tools} tools) | ${kb(size.identity)} B | ${isMcp ? `≤ ${kb(CATALOGUE_BUDGET)} B: ${met}` : `report (the ${kb(CATALOGUE_BUDGET)} B budget is MCP tools/list's: ${kb(Math.abs(size.identity - CATALOGUE_BUDGET))} B ${size.identity > CATALOGUE_BUDGET ? 'over' : 'under'})`} | br ${kb(size.br)} B (${pct('br')}), gzip ${kb(size.gzip)} B (${pct('gzip')}) |`,
    );
  }
}
