import { describe, expect, it } from 'vitest';
import { parseClientsConfig } from '../../src/oauth/scopes.ts';

// The authorization server is created on the first OAuth request; these checks keep a bad KITTY_OAUTH_CLIENTS a start-up error.
describe('parseClientsConfig (KITTY_OAUTH_CLIENTS)', () => {
  it('accepts nothing, an empty array and clients with distinct client_ids', () => {
    expect(parseClientsConfig(undefined)).toEqual([]);
    expect(parseClientsConfig('[]')).toEqual([]);
    expect(parseClientsConfig('[{"client_id":"a","redirect_uris":["https://a.example/cb"]},{"client_id":"b"}]')).toHaveLength(2);
  });

  it('refuses what oidc-provider would refuse when it is created', () => {
    expect(() => parseClientsConfig('{"client_id":"a"}')).toThrow(/JSON array/);
    expect(() => parseClientsConfig('[{"redirect_uris":[]}]')).toThrow(/client_id/);
    expect(() => parseClientsConfig('[null]')).toThrow(/client_id/);
    expect(() => parseClientsConfig('[{"client_id":"a"},{"client_id":"a"}]')).toThrow(/listed twice/);
    expect(() => parseClientsConfig('not json')).toThrow(SyntaxError);
  });
});
