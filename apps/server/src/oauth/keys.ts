/**
 * Keys of the authorization server, shared by every instance:
 * - the signing key set (private JWKS, ES256) for access tokens and ID tokens;
 * - the cookie signing keys of the authorization server and of Kitty's own short-lived cookies.
 *
 * From KITTY_OAUTH_JWKS (a JSON private JWK Set) and KITTY_OAUTH_COOKIE_KEYS (comma-separated) when
 * set; otherwise generated once and kept in `oauth_payloads` (type "KittyKeys"), so several instances
 * and restarts agree. Operators who keep the database separate from secrets set the variables.
 */
import { randomBytes } from 'node:crypto';
import { exportJWK, generateKeyPair, type JWK } from 'jose';
import { keepStoredKeys, readStoredKeys, type Sql } from '../runtime/stored-keys.ts';

export interface AuthServerKeys {
  /** Private JWK Set (each key has `kid`, `alg`, `use: "sig"`). */
  jwks: { keys: JWK[] };
  /** Keys that sign cookies (first one signs, all verify). */
  cookieKeys: string[];
}

const ROW_ID = 'auth-server';

async function generate(): Promise<AuthServerKeys> {
  const { privateKey } = await generateKeyPair('ES256', { extractable: true });
  const jwk = await exportJWK(privateKey);
  return {
    jwks: { keys: [{ ...jwk, kid: `es256-${randomBytes(6).toString('hex')}`, alg: 'ES256', use: 'sig' }] },
    cookieKeys: [randomBytes(32).toString('base64url')],
  };
}

/**
 * Loads (or creates, first instance wins) the key material.
 * @param sql the pg pool (`Db['pool']`): start-up reads it without Prisma (runtime/stored-keys.ts)
 * @throws Error when KITTY_OAUTH_JWKS is not a JWK Set with at least one key; the pg error when the database refuses
 */
export async function loadAuthServerKeys(
  sql: Sql,
  env: { jwks?: string | undefined; cookieKeys?: string | undefined },
): Promise<AuthServerKeys> {
  let stored: AuthServerKeys | undefined;
  if (!env.jwks || !env.cookieKeys) {
    stored = (await readStoredKeys<AuthServerKeys>(sql, ROW_ID)) ?? (await keepStoredKeys(sql, ROW_ID, await generate()));
  }
  let jwks = stored?.jwks;
  if (env.jwks) {
    const parsed = JSON.parse(env.jwks) as { keys?: JWK[] };
    if (!Array.isArray(parsed.keys) || parsed.keys.length === 0)
      throw new Error('KITTY_OAUTH_JWKS must be a JSON JWK Set with at least one private key');
    jwks = { keys: parsed.keys };
  }
  const cookieKeys = env.cookieKeys
    ? env.cookieKeys
        .split(',')
        .map((s) => s.trim())
        .filter(Boolean)
    : stored!.cookieKeys;
  return { jwks: jwks!, cookieKeys };
}
