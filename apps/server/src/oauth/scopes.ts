/**
 * What the rest of the server knows about the OAuth authorization server without loading it: the resource's scopes,
 * the access-token lifetime, the resource indicator and the pre-registered clients of KITTY_OAUTH_CLIENTS.
 * `oidc-provider` itself (provider.ts) is loaded on the first request to one of its routes (routes.ts).
 */
import type { ClientMetadata } from 'oidc-provider';

/** Lifetime of an access token, seconds (≤ 1 h as the interface spec asks). */
export const ACCESS_TOKEN_TTL_SECONDS = 15 * 60;
/** Scopes of the Kitty resource; offline_access additionally asks for a refresh token. */
export const RESOURCE_SCOPES = ['svc:read', 'svc:write'] as const;
export const ALL_SCOPES = [...RESOURCE_SCOPES, 'offline_access'] as const;

/** The MCP resource indicator for a base URL. */
export const mcpResource = (baseUrl: string) => `${baseUrl}/mcp`;

/**
 * Reads pre-registered clients from KITTY_OAUTH_CLIENTS (a JSON array of client metadata objects).
 * The checks `oidc-provider` makes when it is created (every entry has a `client_id`, none twice) run here, at
 * start-up, since the library is created only on the first OAuth request.
 * @throws Error (start-up stops) on invalid JSON, a value that is not an array of objects, a missing or repeated client_id
 */
export function parseClientsConfig(value: string | undefined): ClientMetadata[] {
  if (!value) return [];
  const parsed: unknown = JSON.parse(value);
  if (!Array.isArray(parsed)) throw new Error('KITTY_OAUTH_CLIENTS must be a JSON array of client metadata objects');
  const ids = new Set<string>();
  for (const client of parsed as unknown[]) {
    const id = (client as { client_id?: unknown } | null)?.client_id;
    if (typeof client !== 'object' || client === null || typeof id !== 'string' || id === '')
      throw new Error('KITTY_OAUTH_CLIENTS: every client needs a client_id');
    if (ids.has(id)) throw new Error(`KITTY_OAUTH_CLIENTS: client_id ${id} is listed twice`);
    ids.add(id);
  }
  return parsed as ClientMetadata[];
}
