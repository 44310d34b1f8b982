/**
 * Gets an OAuth access token from a running Kitty for the benchmark: a person with a session
 * (what a passkey sign-in creates), Dynamic Client Registration, the consent form over HTTP
 * (new agent, read + write), and the code exchange with PKCE S256.
 */
import { createHash, randomBytes, randomUUID } from 'node:crypto';
import { createDb } from '@kitty/db';
import { createSession } from '@kitty/core';
import { CookieJar, consentOverHttp } from '../test/oauth-harness.ts';

export async function oauthAccessToken(kittyUrl: string, databaseUrl: string): Promise<string> {
  const db = createDb(databaseUrl, { poolMax: 1 });
  try {
    const human = await db.prisma.human.create({ data: { displayName: 'Bench person' } });
    const jar = new CookieJar();
    jar.cookies.set('kitty_session', (await createSession(db.prisma, human.id, {})).cookieValue);
    const redirect = 'http://127.0.0.1:53690/callback';
    const reg = await fetch(`${kittyUrl}/oauth/register`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ client_name: 'bench', redirect_uris: [redirect], token_endpoint_auth_method: 'none' }),
    });
    const { client_id } = (await reg.json()) as { client_id: string };
    const verifier = randomBytes(32).toString('base64url');
    const url = new URL(`${kittyUrl}/oauth/authorize`);
    for (const [k, v] of Object.entries({
      client_id,
      response_type: 'code',
      redirect_uri: redirect,
      scope: 'svc:read svc:write',
      state: 's',
      resource: `${kittyUrl}/mcp`,
      code_challenge: createHash('sha256').update(verifier).digest('base64url'),
      code_challenge_method: 'S256',
    }))
      url.searchParams.set(k, v);
    const back = await consentOverHttp(kittyUrl, jar, url.href, {
      agent: 'new',
      handle: `bench-oauth-${randomUUID().slice(0, 6)}`,
      displayName: 'Bench via OAuth',
    });
    const tok = await fetch(`${kittyUrl}/oauth/token`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({
        grant_type: 'authorization_code',
        code: back.searchParams.get('code')!,
        redirect_uri: redirect,
        client_id,
        code_verifier: verifier,
        resource: `${kittyUrl}/mcp`,
      }).toString(),
    });
    const json = (await tok.json()) as { access_token?: string };
    if (!json.access_token) throw new Error(`no access token: ${JSON.stringify(json)}`);
    return json.access_token;
  } finally {
    await db.close();
  }
}
