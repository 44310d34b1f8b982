/**
 * One bearer authenticator for both credentials: Kitty API keys (`kitty_…`, api-keys.ts) and OAuth
 * access tokens (JWTs from Kitty's authorization server, oauth/verify.ts). Both answer from an in-memory
 * cache after the first use, so neither costs a database round trip per request.
 */
import { API_KEY_PREFIX, type AuthInfo } from '@kitty/core';
import type { ApiKeyAuthenticator } from './api-keys.ts';
import type { OAuthTokenVerifier } from '../oauth/verify.ts';

export class BearerAuthenticator {
  private readonly apiKeys: ApiKeyAuthenticator;
  private readonly oauth: OAuthTokenVerifier | undefined;

  constructor(apiKeys: ApiKeyAuthenticator, oauth: OAuthTokenVerifier | undefined) {
    this.apiKeys = apiKeys;
    this.oauth = oauth;
  }

  /** @throws ToolError UNAUTHENTICATED (see the two authenticators) */
  authenticate(token: string): Promise<AuthInfo> {
    if (this.oauth && !token.startsWith(API_KEY_PREFIX)) return this.oauth.authenticate(token);
    return this.apiKeys.authenticate(token);
  }
}
