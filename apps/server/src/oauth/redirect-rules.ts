/**
 * Redirect URIs as OAuth clients use them in the wild (OAuth 2.1 §2.3.1, RFC 8252 §7, the MCP authorization spec):
 *
 * - Allowed at registration (Dynamic Client Registration and Client ID Metadata Documents): https; http only on a
 *   loopback host (127.0.0.1, [::1], localhost); or a private-use scheme in reverse-domain form
 *   (`com.example.app:/callback`). Anything else is refused with `invalid_redirect_uri`, the rule in
 *   `error_description`. A client using a private-use scheme is a native app: its application_type becomes
 *   "native" (the library refuses such URIs for "web" clients).
 * - Matching: a loopback http redirect URI matches on any port for public clients (token_endpoint_auth_method
 *   "none"), whatever application_type they registered (RFC 8252 §7.3: the port is chosen per run). The
 *   library does that only for application_type "native"; `allowAnyLoopbackPort` extends it on the Client model.
 */
import { errors } from 'oidc-provider';

const LOOPBACK_HOSTS = new Set(['127.0.0.1', '[::1]', 'localhost']);
/** A private-use URI scheme (RFC 8252 §7.1): a reverse domain name, so it holds at least one dot. */
const PRIVATE_USE_SCHEME = /^[a-z][a-z0-9+-]*(\.[a-z0-9+-]+)+:$/i;

const REDIRECT_URI_RULE =
  'redirect_uris must use https, http on a loopback host (http://127.0.0.1, http://[::1] or http://localhost, any port), ' +
  'or a private-use scheme in reverse-domain form such as com.example.app:/callback';

/** Why `uri` is not an acceptable redirect URI, or undefined when it is. */
function redirectUriProblem(uri: unknown): string | undefined {
  if (typeof uri !== 'string') return 'a redirect URI must be a string';
  const u = URL.parse(uri);
  if (!u) return `${JSON.stringify(uri)} is not an absolute URI`;
  if (u.protocol === 'https:') return undefined;
  if (u.protocol === 'http:') return LOOPBACK_HOSTS.has(u.hostname) ? undefined : `${uri} uses http on a host that is not loopback`;
  if (PRIVATE_USE_SCHEME.test(u.protocol)) return undefined;
  return `${uri} uses the ${u.protocol.slice(0, -1)} scheme`;
}

function isPrivateUseUri(uri: string): boolean {
  const u = URL.parse(uri);
  return !!u && PRIVATE_USE_SCHEME.test(u.protocol);
}

/**
 * Checks the redirect URIs of a client being registered or built from a metadata document (mutating
 * `metadata.application_type` to "native" for private-use schemes).
 * @throws invalid_redirect_uri (oidc-provider's InvalidRedirectUri) naming the URI and the rule
 */
export function checkRedirectUris(metadata: { redirect_uris?: unknown; application_type?: unknown }): void {
  const uris = Array.isArray(metadata.redirect_uris) ? (metadata.redirect_uris as unknown[]) : [];
  for (const uri of uris) {
    const problem = redirectUriProblem(uri);
    if (problem) {
      const e = new errors.InvalidRedirectUri();
      e.error_description = `${problem}: ${REDIRECT_URI_RULE}`;
      throw e;
    }
  }
  if (uris.some((u) => isPrivateUseUri(u as string))) metadata.application_type = 'native';
}

/** `http://<loopback host><path and query>` without the port, or undefined when `uri` is not a loopback http URI. */
function withoutLoopbackPort(uri: string): string | undefined {
  const u = URL.parse(uri);
  if (!u || u.protocol !== 'http:' || !LOOPBACK_HOSTS.has(u.hostname) || u.username || u.password || u.hash) return undefined;
  return `http://${u.hostname}${u.pathname}${u.search}`;
}

interface ClientLike {
  redirectUris?: string[];
  tokenEndpointAuthMethod?: string;
  redirectUriAllowed(value: string): boolean;
}

/** Makes every public client's loopback redirect URIs match on any port (patches the provider's Client model once). */
export function allowAnyLoopbackPort(Client: { prototype: ClientLike }): void {
  const original = Client.prototype.redirectUriAllowed;
  Client.prototype.redirectUriAllowed = function (this: ClientLike, value: string): boolean {
    if (original.call(this, value)) return true;
    if (this.tokenEndpointAuthMethod !== 'none') return false;
    const wanted = withoutLoopbackPort(value);
    return wanted !== undefined && (this.redirectUris ?? []).some((r) => withoutLoopbackPort(r) === wanted);
  };
}
