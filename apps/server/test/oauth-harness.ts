/**
 * Helpers for the OAuth tests: a Kitty server at http://localhost:PORT (WebAuthn needs a domain as
 * RP ID), a cookie jar, a signed-in person, the consent step driven over plain HTTP (the browser
 * version is in oauth-browser.test.ts), and an MCP SDK OAuthClientProvider.
 */
import net from 'node:net';
import { createSession, recordSecurityEvent } from '@kitty/core';
import type { OAuthClientProvider } from '@modelcontextprotocol/sdk/client/auth.js';
import type { OAuthClientInformationMixed, OAuthClientMetadata, OAuthTokens } from '@modelcontextprotocol/sdk/shared/auth.js';
import { startTestServer, type TestServer } from './server-harness.ts';
import type { ServerConfig } from '../src/index.ts';

export async function freePort(): Promise<number> {
  return new Promise<number>((resolve, reject) => {
    const srv = net.createServer();
    srv.once('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const p = (srv.address() as { port: number }).port;
      srv.close(() => resolve(p));
    });
  });
}

export async function startLocalhostServer(overrides: Partial<ServerConfig> = {}): Promise<TestServer> {
  const port = await freePort();
  return startTestServer({ host: 'localhost', port, baseUrl: `http://localhost:${port}`, authRateLimitPoints: 100_000, ...overrides });
}

/** A minimal cookie jar (name → value) for one origin. */
export class CookieJar {
  readonly cookies = new Map<string, string>();
  header(): string {
    return [...this.cookies].map(([k, v]) => `${k}=${v}`).join('; ');
  }
  take(res: Response): void {
    for (const line of res.headers.getSetCookie()) {
      const [pair] = line.split(';');
      const i = pair!.indexOf('=');
      const name = pair!.slice(0, i).trim();
      const value = pair!.slice(i + 1).trim();
      if (value === '' || /max-age=0|expires=thu, 01 jan 1970/i.test(line)) this.cookies.delete(name);
      else this.cookies.set(name, value);
    }
  }
  async fetch(url: string, init: RequestInit = {}): Promise<Response> {
    const headers = new Headers(init.headers);
    if (this.cookies.size) headers.set('cookie', this.header());
    const res = await fetch(url, { ...init, headers, redirect: 'manual' });
    this.take(res);
    return res;
  }
}

/** Creates a person with a browser session (what a passkey sign-in does) and returns the jar holding the cookie. */
export async function signedInPerson(server: TestServer, displayName = 'Pat'): Promise<{ jar: CookieJar; humanId: string }> {
  const prisma = server.kitty.services.prisma;
  const human = await prisma.human.create({ data: { displayName } });
  await recordSecurityEvent(prisma, { humanId: human.id, type: 'signed_up' });
  const s = await createSession(prisma, human.id, {});
  const jar = new CookieJar();
  jar.cookies.set('kitty_session', s.cookieValue);
  return { jar, humanId: human.id };
}

export interface ConsentChoice {
  /** "new" or an existing agent id. */
  agent: string;
  handle?: string;
  displayName?: string;
  /** Scopes left ticked; default all requested. */
  scopes?: string[];
  decision?: 'allow' | 'deny';
}

/**
 * The browser step over HTTP: authorization URL → consent page → form POST → back to the client's
 * redirect URI. Returns that final redirect URL (with code, state, iss or an error).
 */
export async function consentOverHttp(base: string, jar: CookieJar, authorizationUrl: string, choice: ConsentChoice): Promise<URL> {
  let res = await jar.fetch(authorizationUrl);
  if (res.status !== 303 && res.status !== 302) throw new Error(`authorize: ${res.status} ${await res.text()}`);
  let location = new URL(res.headers.get('location')!, base);
  if (!location.pathname.startsWith('/oauth/consent/')) return location;
  res = await jar.fetch(location.href);
  const html = await res.text();
  if (res.status !== 200) throw new Error(`consent page: ${res.status} ${html}`);
  const csrf = /name="csrf" value="([^"]+)"/.exec(html)?.[1];
  const requested = [...html.matchAll(/name="scope" id="[^"]+" value="([^"]+)"/g)].map((m) => m[1]!);
  const form = new URLSearchParams({ csrf: csrf!, agent: choice.agent, decision: choice.decision ?? 'allow' });
  if (choice.handle) form.set('handle', choice.handle);
  if (choice.displayName) form.set('display_name', choice.displayName);
  for (const s of choice.scopes ?? requested) form.append('scope', s);
  res = await jar.fetch(location.href, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded', origin: new URL(base).origin },
    body: form.toString(),
  });
  if (res.status !== 303 && res.status !== 302) throw new Error(`consent POST: ${res.status} ${await res.text()}`);
  location = new URL(res.headers.get('location')!, base);
  res = await jar.fetch(location.href);
  if (res.status !== 303 && res.status !== 302) throw new Error(`resume: ${res.status} ${await res.text()}`);
  return new URL(res.headers.get('location')!, base);
}

/** An MCP SDK OAuthClientProvider whose "browser" is a function the test supplies. */
export class TestOAuthProvider implements OAuthClientProvider {
  info: OAuthClientInformationMixed | undefined;
  saved: OAuthTokens | undefined;
  verifier = '';
  lastRedirect: URL | undefined;
  readonly redirectUrl: string;
  private readonly browser: (authorizationUrl: URL) => Promise<URL>;
  readonly clientMetadataUrl: string | undefined;
  readonly name: string;
  constructor(redirectUrl: string, browser: (authorizationUrl: URL) => Promise<URL>, clientMetadataUrl?: string, name = 'Test MCP client') {
    this.redirectUrl = redirectUrl;
    this.browser = browser;
    this.clientMetadataUrl = clientMetadataUrl;
    this.name = name;
  }
  get clientMetadata(): OAuthClientMetadata {
    return {
      client_name: this.name,
      redirect_uris: [this.redirectUrl],
      grant_types: ['authorization_code', 'refresh_token'],
      response_types: ['code'],
      token_endpoint_auth_method: 'none',
    };
  }
  clientInformation() {
    return this.info;
  }
  saveClientInformation(info: OAuthClientInformationMixed) {
    this.info = info;
  }
  tokens() {
    return this.saved;
  }
  saveTokens(tokens: OAuthTokens) {
    this.saved = tokens;
  }
  async redirectToAuthorization(url: URL) {
    this.lastRedirect = await this.browser(url);
  }
  saveCodeVerifier(v: string) {
    this.verifier = v;
  }
  codeVerifier() {
    return this.verifier;
  }
  /** The code from the last browser step (throws with the error the server sent). */
  code(): string {
    const r = this.lastRedirect!;
    const code = r.searchParams.get('code');
    if (!code) throw new Error(`no code: ${r.href}`);
    return code;
  }
}

/**
 * What an OAuth MCP client meets on /mcp without a token: connecting (discovery) works anonymously,
 * the first call that needs an identity answers 401 + the challenge, and the SDK transport starts
 * the authorization flow there (rejecting with UnauthorizedError).
 */
export async function startsOAuth(
  client: { connect(t: never): Promise<void>; callTool(p: { name: string; arguments: Record<string, unknown> }): Promise<unknown> },
  transport: unknown,
): Promise<unknown> {
  await client.connect(transport as never);
  return client.callTool({ name: 'get_me', arguments: {} });
}
