/**
 * Kitty's OAuth 2.1 authorization server: `oidc-provider` (OpenID-certified) configured for MCP clients.
 *
 * - issuer = KITTY_BASE_URL; endpoints under /oauth/* (authorize, token, register, revoke, jwks);
 *   metadata at /.well-known/oauth-authorization-server (RFC 8414) and /.well-known/openid-configuration.
 * - Authorization code + PKCE S256 only (RFC 7636; `plain` is not implemented by the library),
 *   `response_type=code` only, `iss` in the authorization response (RFC 9207).
 * - Redirect URIs: https, loopback http (any port for public clients) or private-use schemes (redirect-rules.ts).
 * - Clients: Client ID Metadata Documents (the library's `clientIdMetadataDocument` feature: https only,
 *   connections to special-use/private/loopback/link-local addresses refused at connect time, 5 KB,
 *   2.5 s, cached), Dynamic Client Registration (RFC 7591), and pre-registered clients (KITTY_OAUTH_CLIENTS).
 * - Resource indicators (RFC 8707): the only resource is `{base}/mcp`; access tokens are ES256 JWTs
 *   with `aud` = `{base}/mcp` (also accepted by POST /v1/tools/*), valid ACCESS_TOKEN_TTL_SECONDS.
 * - Refresh tokens (scope offline_access) rotate on every use; presenting a used one revokes the grant
 *   (the library's reuse detection), which disconnects the app.
 * This module (and with it `oidc-provider`, Koa and their dependencies) is imported on the first request to an OAuth
 * route (index.ts `startOAuth`, routes.ts), not at start-up: /health and the tools never need it.
 */
import { restoreConsoleWarn } from './quiet-runtime-check.ts';
import Provider, { errors, type Configuration, type KoaContextWithOIDC, type ClientMetadata } from 'oidc-provider';
import type { PrismaClient } from '@kitty/db';
import { PrismaOidcAdapter } from './adapter.ts';
import type { AuthServerKeys } from './keys.ts';
import { renderErrorPage } from '../people/pages.ts';
import { allowAnyLoopbackPort, checkRedirectUris } from './redirect-rules.ts';
import { ACCESS_TOKEN_TTL_SECONDS, ALL_SCOPES, RESOURCE_SCOPES, mcpResource } from './scopes.ts';

restoreConsoleWarn();

/** Lifetime of a refresh token, seconds (rotated on each use; 30 days idle). */
const REFRESH_TOKEN_TTL_SECONDS = 30 * 24 * 3600;

export interface AuthServerOptions {
  baseUrl: string;
  prisma: PrismaClient;
  keys: AuthServerKeys;
  /** Pre-registered clients (KITTY_OAUTH_CLIENTS, a JSON array of RFC 7591 client metadata). */
  clients: ClientMetadata[];
  /**
   * KITTY_OAUTH_ALLOW_LOOPBACK_CIMD (tests and local development only; off by default): a client id
   * `https://localhost:PORT/…` or `https://127.0.0.1:PORT/…` is fetched over plain http from that
   * loopback address, without the private-address check. Other client ids keep every protection.
   */
  allowLoopbackCimd: boolean;
  /** Called when a grant is revoked in this instance. */
  onGrantRevoked?: (grantId: string) => void;
}

function isLoopbackHttpsUrl(u: URL): boolean {
  return u.protocol === 'https:' && ['localhost', '127.0.0.1', '[::1]'].includes(u.hostname);
}

export function createAuthServer(opts: AuthServerOptions): Provider {
  const resource = mcpResource(opts.baseUrl);
  const secure = opts.baseUrl.startsWith('https:');
  const configuration: Configuration = {
    adapter: (name: string) => new PrismaOidcAdapter(name, opts.prisma, opts.onGrantRevoked),
    clients: opts.clients,
    jwks: opts.keys.jwks as Configuration['jwks'],
    cookies: {
      keys: opts.keys.cookieKeys,
      names: { session: 'kitty_as_session', interaction: 'kitty_as_interaction', resume: 'kitty_as_resume' },
      long: { signed: true, httpOnly: true, sameSite: 'lax', secure },
      short: { signed: true, httpOnly: true, sameSite: 'lax', secure },
    },
    findAccount: async (_ctx, sub) => ({ accountId: sub, claims: async () => ({ sub }) }),
    // svc:* are the resource's scopes (granted per resource at consent); listed here so clients may register with them.
    scopes: ['openid', 'offline_access', 'svc:read', 'svc:write'],
    claims: { openid: ['sub'] },
    responseTypes: ['code'],
    pkce: { required: () => true },
    clientAuthMethods: ['none', 'client_secret_basic', 'client_secret_post', 'private_key_jwt'],
    clientDefaults: {
      grant_types: ['authorization_code', 'refresh_token'],
      response_types: ['code'],
      token_endpoint_auth_method: 'none',
      id_token_signed_response_alg: 'ES256',
    },
    routes: {
      authorization: '/oauth/authorize',
      token: '/oauth/token',
      registration: '/oauth/register',
      revocation: '/oauth/revoke',
      jwks: '/oauth/jwks',
      userinfo: '/oauth/userinfo',
      end_session: '/oauth/session/end',
      pushed_authorization_request: '/oauth/par',
      introspection: '/oauth/introspect',
      code_verification: '/oauth/device',
      device_authorization: '/oauth/device/auth',
      backchannel_authentication: '/oauth/backchannel',
      challenge: '/oauth/challenge',
    },
    features: {
      devInteractions: { enabled: false },
      registration: { enabled: true },
      revocation: { enabled: true },
      userinfo: { enabled: false },
      rpInitiatedLogout: { enabled: false },
      clientIdMetadataDocument: { enabled: true, ack: 'draft-02' } as never,
      resourceIndicators: {
        enabled: true,
        defaultResource: async () => resource,
        useGrantedResource: async () => true,
        getResourceServerInfo: async (_ctx, indicator) => {
          // The base URL names the same resource (its REST tools); either way the token's audience is {base}/mcp.
          if (indicator !== resource && indicator !== opts.baseUrl)
            throw new errors.InvalidTarget(`the only resource of this server is ${resource}`);
          return {
            scope: RESOURCE_SCOPES.join(' '),
            audience: resource,
            accessTokenTTL: ACCESS_TOKEN_TTL_SECONDS,
            accessTokenFormat: 'jwt',
            jwt: { sign: { alg: 'ES256' } },
          };
        },
      },
    },
    // Dynamic Client Registration is for public clients (MCP clients: token_endpoint_auth_method "none" + PKCE), so no
    // client secret is ever stored in the database; confidential clients are pre-registered (KITTY_OAUTH_CLIENTS).
    // The library calls this validator with the whole metadata of every client it builds; `kitty_client_kind` is
    // the extra property that makes it run.
    extraClientMetadata: {
      properties: ['kitty_client_kind'],
      validator: (ctx, key, _value, metadata) => {
        if (key !== 'kitty_client_kind') return;
        // Registered and metadata-document clients (their client_id is the document's https URL) follow the
        // redirect URI rules of redirect-rules.ts; pre-registered clients are the operator's to configure.
        const fromDocument = typeof metadata.client_id === 'string' && metadata.client_id.startsWith('https://');
        if (ctx?.oidc?.route === 'registration' || fromDocument) checkRedirectUris(metadata);
        if (ctx?.oidc?.route !== 'registration') return;
        // An omitted method means client_secret_basic (RFC 7591 §2), and the library then mints a secret: refused too.
        if (metadata.token_endpoint_auth_method !== 'none' || metadata.client_secret !== undefined) {
          throw new errors.InvalidClientMetadata(
            'dynamic registration accepts public clients only: token_endpoint_auth_method must be "none" (use PKCE)',
          );
        }
      },
    },
    // The consent page always runs (the person picks which agent the app acts as, every time): only the
    // grant that page just made is loaded, never an earlier one of the same app.
    loadExistingGrant: async (ctx) => {
      const grantId = ctx.oidc.result?.consent?.grantId;
      return grantId ? ctx.oidc.provider.Grant.find(grantId) : undefined;
    },
    extraTokenClaims: async (_ctx, token) => ('grantId' in token && token.grantId ? { grant_id: token.grantId } : undefined),
    interactions: { url: async (_ctx, interaction) => `/oauth/consent/${interaction.uid}` },
    rotateRefreshToken: () => true,
    ttl: {
      AccessToken: ACCESS_TOKEN_TTL_SECONDS,
      AuthorizationCode: 60,
      IdToken: 3600,
      Interaction: 3600,
      Session: 14 * 24 * 3600,
      Grant: REFRESH_TOKEN_TTL_SECONDS,
      RefreshToken: REFRESH_TOKEN_TTL_SECONDS,
    },
    discovery: {
      service_documentation: `${opts.baseUrl}/mcp/docs`,
    },
    renderError: async (ctx, out) => {
      ctx.type = 'html';
      ctx.body = renderErrorPage({ title: 'Sign-in request refused', message: `${out.error}: ${out.error_description ?? ''}` });
    },
    fetch: async (url, init) => {
      const u = new URL(url);
      if (opts.allowLoopbackCimd && isLoopbackHttpsUrl(u)) {
        u.protocol = 'http:';
        const { dispatcher: _ssrfGuard, ...rest } = init as RequestInit & { dispatcher?: unknown };
        return globalThis.fetch(u, rest);
      }
      return globalThis.fetch(url, init);
    },
  };
  const provider = new Provider(opts.baseUrl, configuration);
  allowAnyLoopbackPort(provider.Client as never);

  provider.use(async (ctx: KoaContextWithOIDC, next) => {
    if (ctx.path === '/oauth/authorize' && ctx.method === 'GET') {
      // Kitty always shows a consent page; say so to the library, which otherwise drops offline_access (OpenID Connect Core 11).
      const q = ctx.query as Record<string, string | string[] | undefined>;
      const scope = typeof q.scope === 'string' ? q.scope.split(' ') : [];
      const prompt = typeof q.prompt === 'string' ? q.prompt.split(' ') : [];
      if (scope.includes('offline_access') && !prompt.includes('consent') && !prompt.includes('none')) {
        ctx.query = { ...q, prompt: [...prompt, 'consent'].join(' ') } as never;
      }
    }
    await next();
    if (ctx.path === '/.well-known/openid-configuration' && ctx.status === 200 && ctx.body && typeof ctx.body === 'object') {
      const body = ctx.body as Record<string, unknown>;
      body.scopes_supported = ['openid', ...ALL_SCOPES];
      body.code_challenge_methods_supported = ['S256'];
      body.authorization_response_iss_parameter_supported = true;
      body.agent_auth = agentAuthBlock(opts.baseUrl);
    }
  });
  return provider;
}

/** How a headless agent gets a credential instead (kept in every metadata document). */
function agentAuthBlock(base: string) {
  return {
    register_uri: `${base}/v1/agents`,
    register_tool: 'register_agent',
    credential: 'api_key',
    usage: 'Authorization: Bearer <api_key>',
    docs: `${base}/mcp/docs`,
  };
}
