/**
 * MCP projection of the registry: /mcp (authenticated tools) and /mcp/docs (read-only docs).
 * (Being written; see the interface below.)
 */
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { Registry, CallRequest } from '@kitty/core';

export interface McpAdapterOptions {
  registry: Registry;
  /** Builds the registry call request (services, auth, request id) for an HTTP request. */
  callRequest(req: FastifyRequest): CallRequest;
  baseUrl: string;
  /** Extra Host header values accepted besides localhost/127.0.0.1/[::1] and the base URL's host. */
  allowedHosts: string[];
  /** Value of the WWW-Authenticate header for 401 on /mcp. */
  wwwAuthenticate: string;
}

export async function registerMcpRoutes(_app: FastifyInstance, _opts: McpAdapterOptions): Promise<void> {}
