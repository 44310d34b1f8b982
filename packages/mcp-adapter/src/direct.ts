/**
 * Direct answers on /mcp: a plain tools/call of a known tool or tools/list — nearly every message a
 * client sends — answered without an SDK Server, in either era, with the bytes the SDK's Server
 * would send.
 *
 * - `plainMessage` picks the messages that qualify: a well-formed JSON-RPC request (the SDK's own
 *   rules: strict top level, an integer or string id) whose params hold only the method's own keys
 *   and a `_meta` without a progress token or any reserved key but the 2026-07-28 envelope's.
 *   Anything else (pagination cursors, progress tokens, tasks, retries, log levels…) is the SDK's.
 * - The content of an answer comes from the same `ToolsAnswers` the Servers' handlers use:
 *   `registry.callTool` translated by toolSuccessResult/toolErrorResult, the memoised listings.
 * - The SDK stays the authority for everything it checks once per client or listing: a 2026-07-28
 *   envelope (client info and capabilities) is answered directly only after a Server accepted it,
 *   and a listing's encoded result (resultType, cache fields, server info) is the one a Server
 *   produced, kept as JSON and sent from memory with the request's id (a `PrecomputedBody`: the
 *   server compresses its head once). A 2026-07-28 tools/call result
 *   gets what the SDK's encoder adds (resultType "complete", the server info it stamped in `_meta`).
 *   The results are built in the key order the SDK's result schema gives them, so the bytes match
 *   (dispatch.test.ts compares both ways).
 */
import {
  CLIENT_CAPABILITIES_META_KEY,
  CLIENT_INFO_META_KEY,
  PROTOCOL_VERSION_META_KEY,
  SERVER_INFO_META_KEY,
  type CallToolResult,
  type JSONRPCMessage,
} from '@modelcontextprotocol/server';
import type { McpCallContext } from './context.ts';
import type { ToolsAnswers } from './tools-server.ts';

/** A message the direct answers may serve, with the parts they read. */
export interface PlainMessage {
  era: 'modern' | 'legacy';
  id: string | number;
  method: 'tools/call' | 'tools/list';
  /** tools/call: the tool name and arguments. */
  name?: string;
  args?: Record<string, unknown>;
  /** 2026-07-28: the envelope's client info and capabilities, as JSON (what a Server validated). */
  envelope?: string;
}

const TOP_KEYS = new Set(['jsonrpc', 'id', 'method', 'params']);
const ENVELOPE_KEYS = new Set([PROTOCOL_VERSION_META_KEY, CLIENT_INFO_META_KEY, CLIENT_CAPABILITIES_META_KEY]);
/** Distinct envelopes remembered as accepted (a client sends the same one every time); the set restarts when full. */
const MAX_ENVELOPES = 1024;

function isObject(v: unknown): v is Record<string, unknown> {
  return v !== null && typeof v === 'object' && !Array.isArray(v);
}

/**
 * The parts of a tools/call or tools/list message the direct answers can serve, or undefined when
 * only the SDK may answer it (see the module comment). A modern message must carry the envelope; its
 * version and headers are checked by the caller (dispatch.ts).
 */
export function plainMessage(era: PlainMessage['era'], m: Record<string, unknown>): PlainMessage | undefined {
  const { id, method, params } = m;
  if (m.jsonrpc !== '2.0' || (typeof id !== 'string' && !Number.isSafeInteger(id))) return undefined;
  if (method !== 'tools/call' && method !== 'tools/list') return undefined;
  for (const k in m) if (!TOP_KEYS.has(k)) return undefined;
  const plain: PlainMessage = { era, id: id as string | number, method };
  if (params === undefined && era === 'legacy' && method === 'tools/list') return plain;
  if (!isObject(params)) return undefined;
  for (const k in params) {
    const v = params[k];
    if (k === 'name' && method === 'tools/call' && typeof v === 'string') plain.name = v;
    else if (k === 'arguments' && method === 'tools/call' && isObject(v)) plain.args = v;
    else if (k !== '_meta') return undefined;
  }
  if (method === 'tools/call' && plain.name === undefined) return undefined;
  const meta = params._meta;
  if (meta !== undefined) {
    if (!isObject(meta)) return undefined;
    for (const k in meta) {
      if (k === 'progressToken' || (k.startsWith('io.modelcontextprotocol/') && !(era === 'modern' && ENVELOPE_KEYS.has(k))))
        return undefined;
    }
  }
  if (era === 'modern') {
    if (!meta) return undefined;
    plain.envelope = `${JSON.stringify(meta[CLIENT_INFO_META_KEY])}\n${JSON.stringify(meta[CLIENT_CAPABILITIES_META_KEY])}`;
  }
  return plain;
}

/** A response body in two parts: a head that is the same string for every request (a listing) and the tail that varies. */
export interface PrecomputedBody {
  head: string;
  tail: string;
}

/** The end of a JSON-RPC response as the SDK serialises it (result, jsonrpc, id): what follows the result. */
function responseTail(id: string | number): string {
  return `,"jsonrpc":"2.0","id":${JSON.stringify(id)}}`;
}

/** Serves plain messages from `ToolsAnswers`, learning from a Server's answers what the SDK decides (module comment). */
export class DirectAnswers {
  private readonly envelopes = new Set<string>();
  /** Per era, a listing → the head of its response (`{"result":` and the result a Server encoded). */
  private readonly listings = { modern: new WeakMap<object, string>(), legacy: new WeakMap<object, string>() };
  private serverInfo: unknown;
  private readonly tools: ToolsAnswers;
  /** Messages answered directly (for tests). */
  served = 0;

  constructor(tools: ToolsAnswers) {
    this.tools = tools;
  }

  /**
   * The JSON-RPC response body for `plain` (a tools/list answer as a precomputed head and its tail),
   * or undefined when a Server must answer it: an envelope or listing not seen yet, or an unknown tool
   * (the Server's -32602).
   */
  answer(plain: PlainMessage, ctx: McpCallContext): PrecomputedBody | Promise<string> | undefined {
    const modern = plain.era === 'modern';
    if (modern && (this.serverInfo === undefined || !this.envelopes.has(plain.envelope!))) return undefined;
    if (plain.method === 'tools/list') {
      const head = this.listings[plain.era].get(this.tools.listing(ctx));
      if (head === undefined) return undefined;
      this.served++;
      return { head, tail: responseTail(plain.id) };
    }
    const pending = this.tools.call(plain.name!, plain.args, ctx);
    if (!pending) return undefined;
    this.served++;
    return pending.then((result) => `{"result":${JSON.stringify(modern ? this.encode(result) : result)}${responseTail(plain.id)}`);
  }

  /**
   * Records what a Server's answer to a plain message shows: its envelope was accepted, a listing's
   * encoded result. Returns the precomputed form of a listing's answer (the same bytes), else undefined.
   */
  learn(plain: PlainMessage, ctx: McpCallContext, answer: JSONRPCMessage): PrecomputedBody | undefined {
    if (!('result' in answer)) return undefined;
    const result = answer.result as { _meta?: Record<string, unknown> };
    if (plain.era === 'modern') {
      this.serverInfo ??= result._meta?.[SERVER_INFO_META_KEY];
      if (this.envelopes.size >= MAX_ENVELOPES) this.envelopes.clear();
      this.envelopes.add(plain.envelope!);
    }
    if (plain.method !== 'tools/list') return undefined;
    const head = `{"result":${JSON.stringify(result)}`;
    this.listings[plain.era].set(this.tools.listing(ctx), head);
    return { head, tail: responseTail(plain.id) };
  }

  /** What the SDK's 2026-07-28 encoder adds to a tools/call result: resultType, then the server info in `_meta`. */
  private encode(result: CallToolResult): Record<string, unknown> {
    return { ...result, resultType: 'complete', _meta: { ...result._meta, [SERVER_INFO_META_KEY]: this.serverInfo } };
  }
}
