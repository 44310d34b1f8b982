/**
 * DNS-rebinding protection for the MCP endpoints (MCP spec 2025-11-25, "Security Warning" of
 * Streamable HTTP): the Host header, and the Origin header when present, must name this
 * server. The SDK's own transport check compares whole `host:port` strings; this one compares
 * host names so that any port of an allowed host is accepted.
 */

/** Host names always accepted (loopback). */
export const LOOPBACK_HOSTS = ['localhost', '127.0.0.1', '[::1]'];

/**
 * Builds the Host/Origin check.
 * @param baseUrl      the public base URL; its host name is allowed
 * @param allowedHosts extra entries: a bare host name ("kitty.example") allows every port,
 *                     "host:port" allows exactly that port
 * @param allowedOrigins web origins ("https://app.example") of browser-based clients: accepted in
 *                     the Origin header (not as Host)
 * @returns `check(host, origin)` → null when allowed, else a sentence saying which header was refused
 */
export function hostGuard(
  baseUrl: string,
  allowedHosts: readonly string[],
  allowedOrigins: readonly string[] = [],
): (host: string | undefined, origin: string | undefined) => string | null {
  const origins = new Set(allowedOrigins.map((o) => o.trim().toLowerCase().replace(/\/$/, '')));
  const names = new Set<string>(LOOPBACK_HOSTS);
  const exact = new Set<string>();
  try {
    names.add(new URL(baseUrl).hostname.toLowerCase());
  } catch {
    /* a base URL that does not parse allows nothing extra */
  }
  for (const raw of allowedHosts) {
    const entry = raw.trim().toLowerCase();
    if (!entry) continue;
    if (/:\d+$/.test(entry) && !/^[^[]*:.*:/.test(entry)) exact.add(entry);
    else names.add(entry);
  }
  const allowed = (host: string): boolean => {
    const h = host.trim().toLowerCase();
    if (exact.has(h)) return true;
    return names.has(hostnameOf(h));
  };
  return (host, origin) => {
    if (!host || !allowed(host)) return `Host header ${JSON.stringify(host ?? '')} is not allowed on this server.`;
    if (origin !== undefined && !origins.has(origin.toLowerCase())) {
      let originHost: string;
      try {
        originHost = new URL(origin).host;
      } catch {
        return `Origin header ${JSON.stringify(origin)} is not allowed on this server.`;
      }
      if (!originHost || !allowed(originHost)) return `Origin header ${JSON.stringify(origin)} is not allowed on this server.`;
    }
    return null;
  };
}

/** "localhost:3000" → "localhost", "[::1]:80" → "[::1]", "::1" → "[::1]". */
function hostnameOf(host: string): string {
  if (host.startsWith('[')) {
    const end = host.indexOf(']');
    return end === -1 ? host : host.slice(0, end + 1);
  }
  const colons = host.split(':').length - 1;
  if (colons === 1) return host.slice(0, host.indexOf(':'));
  if (colons > 1) return `[${host}]`; // bare IPv6 without port
  return host;
}
