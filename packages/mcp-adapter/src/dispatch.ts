/**
 * Serving one MCP message over HTTP in either protocol era, on pooled SDK Servers.
 *
 * - `routeMessage` tells the eras apart: a message claiming the 2026-07-28 per-request envelope
 *   (an `io.modelcontextprotocol/*` key in `params._meta`) or naming a revision newer than the
 *   2025 ones in `MCP-Protocol-Version` is classified by the SDK's own `classifyInboundRequest`
 *   (its ladder refusals, e.g. -32020 when `Mcp-Method`/`Mcp-Name` disagree with the body, are
 *   answered as it says); anything else is 2025-era ("legacy"). Legacy messages get the same
 *   header rule here (the SDK checks the headers only on modern messages), the 2025 Accept rule
 *   (406), and an `MCP-Protocol-Version` naming no known revision is -32022.
 * - `McpEndpoint.serve` runs a modern message through the SDK's `createMcpHandler` (strict:
 *   `legacy: 'reject'`), whose factory hands out pooled Servers, so the SDK itself does the
 *   2026-07-28 work (envelope, `server/discover`, client info and capabilities from `_meta`,
 *   `resultType`, cache hints, -32022). Once the entry has served a Server, that Server speaks
 *   2026-07-28; plain calls (`plainModern`: tools/list and tools/call with the whole envelope
 *   and every header agreeing) then go to such Servers kept connected to an in-process transport
 *   (`Lane`), as 2025 calls do — the same answers without the entry's per-call Request/Response,
 *   re-classification and connect/close. A legacy message is handed to a pooled Server that stays
 *   connected to an in-process transport (`Lane`) and its answer sent as JSON — never SSE
 *   (the SDK's stateless fallback would stream `initialize`) — without building web
 *   `Request`/`Response` objects.
 * - On /mcp, plain tools/call and tools/list messages of either era (direct.ts) are answered
 *   without a Server once a Server has answered the same envelope (and listing): the registry call
 *   and the answer's bytes are the same, without the SDK's per-message validation, context and
 *   promise chain. That is what keeps an MCP call close to a REST call.
 */
import {
  classifyInboundRequest,
  createMcpHandler,
  isJSONRPCNotification,
  isJSONRPCRequest,
  SUPPORTED_PROTOCOL_VERSIONS,
  UnsupportedProtocolVersionError,
  type AuthInfo,
  type JSONRPCMessage,
  type McpHttpHandler,
  type Server,
} from '@modelcontextprotocol/server';
import { ServerPool } from './pool.ts';
import { Lane, type LaneSlot } from './lane.ts';
import { DirectAnswers, plainMessage, type PlainMessage, type PrecomputedBody } from './direct.ts';
import { callContextOf } from './context.ts';
import type { ToolsAnswers } from './tools-server.ts';

/** The revision the modern leg serves (the SDK's entry answers anything else with -32022). */
export const MODERN_PROTOCOL_VERSION = '2026-07-28';

/** JSON-RPC error code for headers that disagree with the body (MCP 2026-07-28). */
export const HEADER_MISMATCH = -32020;

interface JsonRpcErrorBody {
  jsonrpc: '2.0';
  id: string | number | null;
  error: { code: number; message: string; data?: unknown };
}

export type Routed =
  | { kind: 'reject'; status: number; body: JsonRpcErrorBody }
  | {
      kind: 'modern' | 'legacy';
      message: { method?: unknown; params?: unknown };
      /**
       * A well-formed tools/list or tools/call (direct.ts), on 2026-07-28 with the revision served and
       * every header agreeing: may be answered directly, else takes a lane.
       */
      plain?: PlainMessage | undefined;
    };

type HeaderGetter = (name: string) => string | undefined;

function idOf(body: unknown): string | number | null {
  const id = (body as { id?: unknown } | null)?.id;
  return typeof id === 'string' || typeof id === 'number' ? id : null;
}

function rejection(status: number, body: unknown, code: number, message: string, data?: unknown): Routed {
  return {
    kind: 'reject',
    status,
    body: { jsonrpc: '2.0', id: idOf(body), error: { code, message, ...(data !== undefined ? { data } : {}) } },
  };
}

/** The value `Mcp-Name` must equal for a method, if the method names something. */
function nameOf(method: unknown, params: unknown): string | undefined {
  const p = (params ?? {}) as { name?: unknown; uri?: unknown };
  if (method === 'tools/call' || method === 'prompts/get') return typeof p.name === 'string' ? p.name : undefined;
  if (method === 'resources/read') return typeof p.uri === 'string' ? p.uri : undefined;
  return undefined;
}

/**
 * Classifies one parsed JSON-RPC message (an object, not a batch).
 * @param header reads a request header (lower-case name)
 */
export function routeMessage(header: HeaderGetter, body: Record<string, unknown>): Routed {
  const version = header('mcp-protocol-version');
  const meta = (body.params as { _meta?: unknown } | undefined)?._meta;
  const claimsEnvelope =
    meta !== null && typeof meta === 'object' && Object.keys(meta).some((k) => k.startsWith('io.modelcontextprotocol/'));
  // A claimed envelope goes to the SDK's modern entry, which classifies it (ladder refusals included) itself.
  if (claimsEnvelope) return { kind: 'modern', message: body, plain: plainModern(header, body, meta as Record<string, unknown>) };
  if (version !== undefined && !SUPPORTED_PROTOCOL_VERSIONS.includes(version)) return classified(header, body);
  return legacyRules(header, body);
}

/**
 * A 2026-07-28 tools/list or tools/call that the SDK's entry would accept as is: a plain message
 * (direct.ts) with the full envelope, the revision served, JSON content, and MCP-Protocol-Version,
 * Mcp-Method and Mcp-Name present and equal to the body. Anything else goes through the entry,
 * which answers every refusal.
 */
function plainModern(header: HeaderGetter, body: Record<string, unknown>, meta: Record<string, unknown>): PlainMessage | undefined {
  if (meta['io.modelcontextprotocol/protocolVersion'] !== MODERN_PROTOCOL_VERSION) return undefined;
  for (const key of ['io.modelcontextprotocol/clientInfo', 'io.modelcontextprotocol/clientCapabilities']) {
    const v = meta[key];
    if (v === null || typeof v !== 'object') return undefined;
  }
  if (header('mcp-protocol-version') !== MODERN_PROTOCOL_VERSION || header('mcp-method') !== body.method) return undefined;
  if (!header('content-type')?.startsWith('application/json')) return undefined;
  const plain = plainMessage('modern', body);
  return plain && header('mcp-name') === plain.name ? plain : undefined;
}

function classified(header: HeaderGetter, body: Record<string, unknown>): Routed {
  const outcome = classifyInboundRequest({
    httpMethod: 'POST',
    protocolVersionHeader: header('mcp-protocol-version'),
    mcpMethodHeader: header('mcp-method'),
    mcpNameHeader: header('mcp-name'),
    body,
  });
  if (outcome.kind === 'reject') return rejection(outcome.httpStatus, body, outcome.code, outcome.message, outcome.data);
  if (outcome.kind === 'modern') return { kind: 'modern', message: body };
  return legacyRules(header, body);
}

/** The header rules of a 2025-era message: Mcp-Method/Mcp-Name agree with the body, Accept, a known version. */
function legacyRules(header: HeaderGetter, body: Record<string, unknown>): Routed {
  const methodHeader = header('mcp-method');
  if (methodHeader !== undefined && methodHeader !== body.method) {
    return rejection(
      400,
      body,
      HEADER_MISMATCH,
      `Bad Request: the request headers and body disagree: the body names method ${String(body.method)} but the Mcp-Method header names ${methodHeader}`,
      { mismatch: { header: methodHeader, body: body.method ?? null } },
    );
  }
  const nameHeader = header('mcp-name');
  const name = nameOf(body.method, body.params);
  if (nameHeader !== undefined && nameHeader !== name) {
    return rejection(
      400,
      body,
      HEADER_MISMATCH,
      `Bad Request: the request headers and body disagree: the body names ${name === undefined ? 'nothing' : name} but the Mcp-Name header names ${nameHeader}`,
      { mismatch: { header: nameHeader, body: name ?? null } },
    );
  }
  const accept = header('accept');
  if (!accept?.includes('application/json') || !accept.includes('text/event-stream')) {
    return rejection(406, body, -32000, 'Not Acceptable: Client must accept both application/json and text/event-stream');
  }
  const version = header('mcp-protocol-version');
  if (version !== undefined && version !== MODERN_PROTOCOL_VERSION && !SUPPORTED_PROTOCOL_VERSIONS.includes(version)) {
    const e = new UnsupportedProtocolVersionError({
      supported: [MODERN_PROTOCOL_VERSION, ...SUPPORTED_PROTOCOL_VERSIONS],
      requested: version,
    });
    return rejection(400, body, e.code, e.message, e.data);
  }
  return { kind: 'legacy', message: body, plain: plainMessage('legacy', body) };
}

/** An answer to send: HTTP status, headers and body (null: no body, or the body is `precomputed`). */
export interface McpAnswer {
  status: number;
  headers: Array<[string, string]>;
  body: string | null;
  /** A JSON body in two parts (a listing): the same head for every request, and its tail. */
  precomputed?: PrecomputedBody;
}

const JSON_HEADERS: Array<[string, string]> = [['content-type', 'application/json']];
/** Idle legacy lanes kept (more in flight at once are built, then dropped). */
const MAX_IDLE_LANES = 256;

/** One MCP endpoint (a Server factory) served in both eras from two pools, and directly where it can. */
export class McpEndpoint {
  private readonly idleLanes: LaneSlot[] = [];
  private readonly idleModernLanes: LaneSlot[] = [];
  private readonly modernPool: ServerPool;
  private readonly modern: McpHttpHandler;
  private readonly create: () => Server;
  private readonly reuse: boolean;
  /** Plain tools/call and tools/list answered without a Server (direct.ts); none without `answers`. */
  readonly direct: DirectAnswers | undefined;

  /**
   * @param create  builds a Server with its handlers (called only when a pool is empty)
   * @param reuse   false builds a Server per request and answers nothing directly (benchmarks)
   * @param onerror the SDK's reports of refused or failed exchanges (the answer already says so)
   * @param answers what the Servers' tools/list and tools/call handlers answer, for direct answers
   */
  constructor(create: () => Server, reuse: boolean, onerror: (e: Error) => void, answers?: ToolsAnswers) {
    this.create = create;
    this.reuse = reuse;
    const modernPool = new ServerPool(create, reuse);
    this.modernPool = modernPool;
    this.modern = createMcpHandler(() => modernPool.acquire(), { legacy: 'reject', onerror });
    this.direct = answers && reuse ? new DirectAnswers(answers) : undefined;
  }

  /**
   * Answers one routed message.
   * @param request builds the fetch Request the SDK's modern entry reads (headers; the body is `message`)
   */
  async serve(routed: Extract<Routed, { kind: 'modern' | 'legacy' }>, request: () => Request, authInfo: AuthInfo): Promise<McpAnswer> {
    const { message, plain } = routed;
    const ctx = plain && this.direct ? callContextOf({ http: { authInfo }, mcpReq: {} }) : undefined;
    const ok = (body: string | PrecomputedBody): McpAnswer =>
      typeof body === 'string'
        ? { status: 200, headers: JSON_HEADERS, body }
        : { status: 200, headers: JSON_HEADERS, body: null, precomputed: body };
    if (plain && ctx) {
      const body = this.direct!.answer(plain, ctx);
      if (body !== undefined) return ok(typeof body === 'object' && 'head' in body ? body : await body);
    }
    /** A Server's answer through a lane; a plain message's answer teaches the direct answers. */
    const exchange = async (slot: LaneSlot): Promise<McpAnswer> => {
      const answer = await slot.lane.exchange(message as JSONRPCMessage, authInfo);
      return ok((plain && ctx && this.direct!.learn(plain, ctx, answer)) || JSON.stringify(answer));
    };
    if (routed.kind === 'modern') {
      const fast = this.reuse && plain ? (this.idleModernLanes.pop() ?? (await this.modernLane())) : undefined;
      if (fast) {
        try {
          return await exchange(fast);
        } finally {
          if (this.idleModernLanes.length < MAX_IDLE_LANES) this.idleModernLanes.push(fast);
        }
      }
      const response = await this.modern.fetch(request(), { parsedBody: message, authInfo });
      const headers: Array<[string, string]> = [];
      response.headers.forEach((v, k) => void headers.push([k, v]));
      return { status: response.status, headers, body: response.body ? await response.text() : null };
    }
    // The SDK's own JSON-RPC shape rules: a message it would not take as a request or notification gets no answer from a Server.
    const isRequest = plain !== undefined || isJSONRPCRequest(message);
    if (!isRequest && !isJSONRPCNotification(message)) {
      const body = { jsonrpc: '2.0', id: null, error: { code: -32700, message: 'Parse error: Invalid JSON-RPC message' } };
      return { status: 400, headers: JSON_HEADERS, body: JSON.stringify(body) };
    }
    const slot = this.idleLanes.pop() ?? (await this.newLane());
    try {
      if (!isRequest) {
        slot.lane.onmessage?.(message as JSONRPCMessage, { authInfo });
        return { status: 202, headers: [], body: null };
      }
      return await exchange(slot);
    } finally {
      if (this.reuse && this.idleLanes.length < MAX_IDLE_LANES) this.idleLanes.push(slot);
      else await slot.server.close();
    }
  }

  /**
   * A lane for plain 2026-07-28 calls: a Server that the SDK's entry has served a 2026-07-28
   * exchange with (so it speaks that revision: result stamping, cache hints), kept connected.
   * None until the entry has served one; the call then goes through the entry.
   */
  private async modernLane(): Promise<LaneSlot | undefined> {
    const server = this.modernPool.takeIdle();
    if (!server) return undefined;
    const lane = new Lane();
    await server.connect(lane);
    return { server, lane };
  }

  private async newLane(): Promise<LaneSlot> {
    const server = this.create();
    const lane = new Lane();
    await server.connect(lane);
    return { server, lane };
  }

  async close(): Promise<void> {
    await this.modern.close();
  }
}
