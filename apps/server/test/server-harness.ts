/**
 * Starts a real Kitty server on a fresh PostgreSQL database (127.0.0.1:5432) and a free port,
 * for end-to-end tests over HTTP with the typed client.
 */
import { randomUUID } from 'node:crypto';
import { createTestDatabase } from '@kitty/db';
import { createKittyClient, type KittyClient } from '@kitty/client';
import { startKitty, type RunningKitty, type ServerConfig } from '../src/index.ts';

export interface TestServer {
  kitty: RunningKitty;
  url: string;
  /** The test database (for tests that read PostgreSQL's own statistics). */
  databaseUrl: string;
  /** Registers an agent over REST and returns its typed client. */
  agent(prefix?: string): Promise<{ client: KittyClient; apiKey: string; handle: string; agentId: string }>;
  /** fetch against the server with JSON helpers. */
  http(
    path: string,
    init?: { method?: string; body?: unknown; rawBody?: string; headers?: Record<string, string>; apiKey?: string },
  ): Promise<{ status: number; headers: Headers; json: any; text: string }>;
  close(): Promise<void>;
}

/** Settings for a server under test: any free port, no logs, no Redis, no scheduler, limits out of the way. */
export const QUIET_TEST_CONFIG = {
  port: 0,
  logLevel: 'silent',
  redisUrl: undefined,
  scheduler: false,
  rateLimitPoints: 100_000,
  rateLimitAnonPoints: 100_000,
  authFailLimit: 100_000,
  registerPerHour: 100_000,
  registerPerDay: 100_000,
} as const satisfies Partial<ServerConfig>;

export async function startTestServer(overrides: Partial<ServerConfig> = {}): Promise<TestServer> {
  const db = await createTestDatabase();
  const kitty = await startKitty({ databaseUrl: db.databaseUrl, ...QUIET_TEST_CONFIG, ...overrides });
  const http: TestServer['http'] = async (path, init = {}) => {
    const headers: Record<string, string> = { ...(init.headers ?? {}) };
    if (init.apiKey) headers.authorization = `Bearer ${init.apiKey}`;
    let body: string | undefined = init.rawBody;
    if (init.body !== undefined) {
      body = JSON.stringify(init.body);
      headers['content-type'] ??= 'application/json';
    }
    const res = await fetch(`${kitty.url}${path}`, {
      method: init.method ?? (body !== undefined ? 'POST' : 'GET'),
      headers,
      ...(body !== undefined ? { body } : {}),
    });
    const text = await res.text();
    let json: unknown;
    try {
      json = text ? JSON.parse(text) : undefined;
    } catch {
      json = undefined;
    }
    return { status: res.status, headers: res.headers, json, text };
  };
  return {
    kitty,
    url: kitty.url,
    databaseUrl: db.databaseUrl,
    http,
    async agent(prefix = 'agent') {
      const handle = `${prefix}-${randomUUID().slice(0, 8)}`;
      const r = await http('/v1/agents', { body: { handle, display_name: prefix } });
      if (r.status !== 200) throw new Error(`register failed: ${r.text}`);
      return {
        client: createKittyClient({ baseUrl: kitty.url, apiKey: r.json.data.api_key }),
        apiKey: r.json.data.api_key,
        handle,
        agentId: r.json.data.agent.agent_id,
      };
    },
    async close() {
      await kitty.close();
      await db.drop();
    },
  };
}

/** Two new agents, ann (the group's admin) and bo, and a EUR group of the two (bo joined by invite). */
export async function groupOfTwo(s: TestServer) {
  const [ann, bo] = [await s.agent('ann'), await s.agent('bo')];
  const g = (await ann.client.create_group({ name: 'Flat', currency: 'EUR' })).group.group_id;
  const code = (await ann.client.create_invite({ group_id: g, max_uses: 1 })).invite.code;
  await bo.client.join_group({ code });
  return { ann, bo, g };
}
