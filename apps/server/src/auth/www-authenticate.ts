/**
 * The one `WWW-Authenticate` challenge (RFC 6750 §3 + RFC 9728 resource_metadata): on every 401 (set by the
 * shared error envelope, http/app.ts) and on /mcp's 403 insufficient_scope (the MCP adapter's `scopeChallenge`).
 */

/**
 * `resourcePath` names the protected resource ("" the service root, "/mcp"); the default scope includes
 * offline_access so OAuth clients also ask for a refresh token.
 */
export function wwwAuthenticate(
  baseUrl: string,
  resourcePath: string,
  error?: 'invalid_token' | 'insufficient_scope',
  scope = 'svc:read svc:write offline_access',
): string {
  return `Bearer realm="kitty", resource_metadata="${baseUrl}/.well-known/oauth-protected-resource${resourcePath}", scope="${scope}"${error ? `, error="${error}"` : ''}`;
}

/** The protected resource a request is for: /mcp has its own metadata, everything else the service root's. */
export const resourceOf = (url: string): string => (/^\/mcp(?:[/?]|$)/.test(url) ? '/mcp' : '');
