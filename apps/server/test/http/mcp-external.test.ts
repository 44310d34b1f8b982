/**
 * Third-party MCP tools against a running Kitty (devDependencies, no network beyond localhost):
 * - the MCP Inspector CLI (@modelcontextprotocol/inspector --cli) against /mcp with a bearer;
 * - the conformance suite (@modelcontextprotocol/conformance) scenarios server-initialize, ping,
 *   tools-list and dns-rebinding-protection against /mcp/docs, and server-initialize, ping and tools-list
 *   against /mcp through a loopback proxy that adds the agent's bearer token (the suite cannot send one).
 * Both need Node >= 22: they run with this process's node (24 via the root `node` devDependency).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { execFile } from 'node:child_process';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { startTestServer, type TestServer } from '../server-harness.ts';
import { SERVER_DIR } from '../paths.ts';

const run = promisify(execFile);
const bin = (rel: string) => join(SERVER_DIR, 'node_modules', '@modelcontextprotocol', rel);
const INSPECTOR = bin('inspector/clients/launcher/build/index.js');
const CONFORMANCE = bin('conformance/dist/index.js');

let s: TestServer;
let apiKey: string;
beforeAll(async () => {
  s = await startTestServer();
  apiKey = (await s.agent('inspect')).apiKey;
});
afterAll(async () => {
  await s?.close();
});

const inspector = (...args: string[]) =>
  run(
    process.execPath,
    [INSPECTOR, '--cli', `${s.url}/mcp`, '--transport', 'http', '--header', `Authorization: Bearer ${apiKey}`, ...args],
    { timeout: 60_000 },
  );

describe('MCP Inspector CLI against /mcp', () => {
  it('tools/list lists every registry tool', async () => {
    const { stdout } = await inspector('--method', 'tools/list');
    const names = JSON.parse(stdout).tools.map((t: { name: string }) => t.name);
    expect(names).toEqual(s.kitty.registry.catalogue.map((t) => t.name));
  });

  it('tools/call get_me returns structuredContent', async () => {
    const { stdout } = await inspector('--method', 'tools/call', '--tool-name', 'get_me');
    const r = JSON.parse(stdout);
    expect(r.isError).toBeFalsy();
    expect(r.structuredContent.agent.handle).toMatch(/^inspect-/);
  });
});

/** Runs one conformance scenario against `url` and expects every check to pass. */
async function conformance(url: string, scenario: string): Promise<void> {
  const out = await mkdtemp(join(tmpdir(), 'kitty-conformance-'));
  try {
    await run(process.execPath, [CONFORMANCE, 'server', '--url', url, '--scenario', scenario, '-o', out], { timeout: 60_000 });
    const [dir] = await readdir(out);
    const checks = JSON.parse(await readFile(join(out, dir!, 'checks.json'), 'utf8')) as Array<{
      id: string;
      status: string;
      errorMessage?: string;
    }>;
    expect(checks.length).toBeGreaterThan(0);
    for (const c of checks) expect(c.status, `${c.id}: ${c.errorMessage ?? ''}`).toBe('SUCCESS');
  } finally {
    await rm(out, { recursive: true, force: true });
  }
}

describe('MCP conformance suite against /mcp, through a proxy adding the bearer token', () => {
  let proxy: Server;
  let proxyUrl: string;
  beforeAll(async () => {
    const forward = async (req: IncomingMessage, res: ServerResponse) => {
      const chunks: Buffer[] = [];
      for await (const c of req) chunks.push(c as Buffer);
      const headers: Record<string, string> = {};
      for (const [k, v] of Object.entries(req.headers)) if (typeof v === 'string' && k !== 'host' && k !== 'content-length') headers[k] = v;
      headers.authorization = `Bearer ${apiKey}`;
      const upstream = await fetch(`${s.url}${req.url}`, {
        method: req.method,
        headers,
        body: chunks.length ? Buffer.concat(chunks) : undefined,
      });
      const body = Buffer.from(await upstream.arrayBuffer());
      const out: Record<string, string> = {};
      upstream.headers.forEach((v, k) => {
        if (k !== 'content-length' && k !== 'content-encoding' && k !== 'transfer-encoding') out[k] = v;
      });
      res.writeHead(upstream.status, out).end(body);
    };
    proxy = createServer((req, res) => void forward(req, res).catch(() => res.writeHead(502).end()));
    await new Promise<void>((resolve) => proxy.listen(0, '127.0.0.1', resolve));
    proxyUrl = `http://127.0.0.1:${(proxy.address() as AddressInfo).port}`;
  });
  afterAll(async () => {
    await new Promise<void>((resolve) => proxy?.close(() => resolve()));
  });
  for (const scenario of ['server-initialize', 'ping', 'tools-list']) {
    it(scenario, async () => {
      await conformance(`${proxyUrl}/mcp`, scenario);
    });
  }
});

describe('MCP conformance suite against /mcp/docs', () => {
  for (const scenario of ['server-initialize', 'ping', 'tools-list', 'dns-rebinding-protection']) {
    it(scenario, async () => {
      await conformance(`${s.url}/mcp/docs`, scenario);
    });
  }
});
