/** The Kitty call context an MCP handler reads: the route puts it in the transport's authInfo.extra. */
import { ProtocolError, ProtocolErrorCode } from '@modelcontextprotocol/server';
import type { CallRequest } from '@kitty/core';

/** What a tool handler needs from the HTTP request; the route puts it in the transport's authInfo.extra. */
export interface McpCallContext {
  callRequest: CallRequest;
  /** Logs failures the caller cannot fix (INTERNAL); the route passes Fastify's request logger. */
  logError(obj: unknown, msg: string): void;
  /** Set when a tool call failed for a missing scope: the route answers HTTP 403 with an RFC 6750 insufficient_scope challenge. */
  insufficientScope?: string;
}

export const CONTEXT_KEY = 'kitty';

/** The handler context's part this module reads (the SDK's ServerContext has it). */
export interface HandlerContext {
  http?: { authInfo?: { extra?: Record<string, unknown> } } | undefined;
  mcpReq: { envelope?: Record<string, unknown> | undefined };
}

/** Reads the McpCallContext the route attached; throws InternalError if the route forgot it (a bug). */
export function callContextOf(ctx: HandlerContext): McpCallContext {
  const c = ctx.http?.authInfo?.extra?.[CONTEXT_KEY] as McpCallContext | undefined;
  if (!c) throw new ProtocolError(ProtocolErrorCode.InternalError, 'MCP request without Kitty call context');
  return c;
}
