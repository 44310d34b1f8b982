/**
 * loadConfig: one zod schema over the environment; defaults, accepted spellings, and errors that
 * name every bad variable. The CLI (main.ts, node:util parseArgs): --version, usage errors.
 */
import { execFile } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import rootPackage from '../../../../package.json' with { type: 'json' };
import { ConfigError, loadConfig } from '../../src/runtime/config.ts';
import { SERVER_DIR } from '../paths.ts';

/** Runs `main.ts` with `args`; resolves with its exit code and output (never starts a database: every case exits first). */
function cli(args: string[], env: Record<string, string> = {}): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      ['--import', 'tsx', 'src/main.ts', ...args],
      { cwd: SERVER_DIR, env: { ...process.env, ...env } },
      (error, stdout, stderr) => {
        resolve({ code: error ? Number(error.code) : 0, stdout, stderr });
      },
    );
  });
}

describe('loadConfig', () => {
  it('gives the documented defaults for an empty environment (blank values count as unset)', () => {
    const c = loadConfig({ INIT_CWD: '/srv/kitty', PORT: '', KITTY_LOG: ' ' });
    expect(c).toMatchObject({
      port: 3000,
      host: '127.0.0.1',
      databaseUrl: undefined,
      dataDir: '/srv/kitty/data',
      embeddedPgPort: undefined,
      inviteOnly: false,
      platformInviteCodes: [],
      rateLimitPoints: 600,
      bodyLimit: 1024 * 1024,
      logLevel: 'warn',
      scheduler: true,
      schedulerIntervalSeconds: 60,
      redisPrefix: 'kitty',
      trustProxy: [],
      keepAliveTimeoutMs: 5000,
    });
  });

  it('reads the settings of several instances: Redis key prefix, scheduler interval, trusted proxies', () => {
    const c = loadConfig({
      KITTY_REDIS_PREFIX: 'kitty-eu',
      KITTY_SCHEDULER_INTERVAL: '5',
      KITTY_TRUST_PROXY: '10.0.0.2, 10.1.0.0/16,::1,loopback',
    });
    expect(c).toMatchObject({
      redisPrefix: 'kitty-eu',
      schedulerIntervalSeconds: 5,
      trustProxy: ['10.0.0.2', '10.1.0.0/16', '::1', 'loopback'],
    });
    let message = '';
    try {
      loadConfig({ KITTY_REDIS_PREFIX: 'a b', KITTY_SCHEDULER_INTERVAL: '0', KITTY_TRUST_PROXY: 'balancer.local' });
    } catch (e) {
      message = (e as Error).message;
    }
    expect(message).toContain('KITTY_REDIS_PREFIX="a b": expected 1-64 letters, digits or _ . : -');
    expect(message).toContain('KITTY_SCHEDULER_INTERVAL="0": expected at least 1 (seconds)');
    expect(message).toContain('KITTY_TRUST_PROXY="balancer.local": expected comma-separated IP addresses or CIDRs');
  });

  it('reads numbers, flags, lists and URLs', () => {
    const c = loadConfig({
      PORT: '0',
      KITTY_RATE_LIMIT: ' 12 ',
      KITTY_INVITE_ONLY: 'YES',
      KITTY_SCHEDULER: 'off',
      KITTY_PLATFORM_INVITE_CODES: 'a, b,,c ',
      KITTY_BASE_URL: 'https://kitty.example.com//',
      DATABASE_URL: 'postgresql://u:p@db:5432/kitty',
      KITTY_LOG: 'info',
    });
    expect(c).toMatchObject({
      port: 0,
      rateLimitPoints: 12,
      inviteOnly: true,
      scheduler: false,
      platformInviteCodes: ['a', 'b', 'c'],
      baseUrl: 'https://kitty.example.com',
      databaseUrl: 'postgresql://u:p@db:5432/kitty',
      logLevel: 'info',
    });
  });

  it('refuses bad values with one error naming every variable and its rule, without echoing URLs', () => {
    let error: unknown;
    try {
      loadConfig({
        KITTY_RATE_LIMIT: 'ten',
        PORT: '70000',
        KITTY_INVITE_ONLY: 'maybe',
        KITTY_LOG: 'loud',
        DATABASE_URL: 'mysql://u:secret@h/db',
        KITTY_BODY_LIMIT: '-1',
      });
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(ConfigError);
    const message = (error as Error).message;
    expect(message).toContain('KITTY_RATE_LIMIT="ten": expected a non-negative integer');
    expect(message).toContain('PORT="70000": expected a port number');
    expect(message).toContain('KITTY_INVITE_ONLY="maybe": expected true or false');
    expect(message).toContain('KITTY_LOG="loud": expected one of fatal, error, warn, info, debug, trace, silent');
    expect(message).toContain('KITTY_BODY_LIMIT="-1": expected a non-negative integer');
    expect(message).toContain('DATABASE_URL: expected a URL starting with postgres:// or postgresql://');
    expect(message).not.toContain('secret');
  });

  it('an OpenID Connect provider needs a client id; its name defaults to the issuer host', () => {
    expect(() => loadConfig({ KITTY_OIDC_ISSUER: 'https://id.example.com', KITTY_OIDC_CLIENT_SECRET: 's3cret' })).toThrow(
      /KITTY_OIDC_CLIENT_ID: required when KITTY_OIDC_ISSUER is set/,
    );
    expect(loadConfig({ KITTY_OIDC_ISSUER: 'https://id.example.com', KITTY_OIDC_CLIENT_ID: 'kitty' }).oidc).toEqual({
      issuer: 'https://id.example.com',
      clientId: 'kitty',
      clientSecret: undefined,
      name: 'id.example.com',
    });
    expect(loadConfig({}).oidc).toBeNull();
  });
});

describe('the CLI', () => {
  it('--version prints the version of package.json; --help the usage', async () => {
    expect(await cli(['--version'])).toMatchObject({ code: 0, stdout: `${rootPackage.version}\n` });
    const help = (await cli(['--help'])).stdout;
    expect(help).toMatch(/^usage: kitty \[serve \| migrate \| verify \| backup FILE \| restore FILE\]/);
    for (const command of ['serve', 'migrate', 'verify', 'backup FILE', 'restore FILE'])
      expect(help).toMatch(new RegExp(`^  ${command} `, 'm'));
  });

  it('an unknown option, two commands, an unknown command or bad configuration exit 2 saying why', async () => {
    const option = await cli(['--bogus']);
    expect(option.code).toBe(2);
    expect(option.stderr).toContain("Unknown option '--bogus'");
    expect(option.stderr).toContain('usage: kitty');
    expect(await cli(['serve', 'migrate'])).toMatchObject({ code: 2, stderr: expect.stringContaining('one command at a time') });
    expect(await cli(['backup'])).toMatchObject({ code: 2, stderr: expect.stringContaining('backup takes one FILE, got: none') });
    expect(await cli(['restore', 'a', 'b'])).toMatchObject({
      code: 2,
      stderr: expect.stringContaining('restore takes one FILE, got: a b'),
    });
    expect(await cli(['nope'])).toMatchObject({ code: 2, stderr: expect.stringContaining('unknown command "nope"') });
    const config = await cli(['migrate'], { KITTY_RATE_LIMIT: 'ten' });
    expect(config.code).toBe(2);
    expect(config.stderr).toContain('KITTY_RATE_LIMIT="ten": expected a non-negative integer');
  });
});
