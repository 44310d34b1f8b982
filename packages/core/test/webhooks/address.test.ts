/**
 * The webhook SSRF guard: which URLs and addresses create_webhook and every delivery connection
 * accept, with and without KITTY_WEBHOOK_ALLOW_LOOPBACK, and a faked DNS answer.
 */
import { describe, expect, it } from 'vitest';
import { refusedAddress, resolvePublic, safeLookup } from '../../src/areas/webhooks/address.ts';
import { checkWebhookUrl } from '../../src/areas/webhooks/webhooks.ts';
import { ToolError } from '../../src/kernel/errors.ts';

const publicDns = async () => [{ address: '93.184.216.34', family: 4 }];

async function refusal(url: string, allowLoopback = false, resolve = publicDns): Promise<string | null> {
  try {
    await checkWebhookUrl(url, allowLoopback, resolve);
    return null;
  } catch (e) {
    expect(e).toBeInstanceOf(ToolError);
    expect((e as ToolError).kittyCode).toBe('VALIDATION_ERROR');
    return (e as ToolError).message;
  }
}

describe('webhook addresses', () => {
  it('refuses every non-public range and accepts public unicast', () => {
    for (const a of [
      '10.1.2.3',
      '172.16.0.1',
      '192.168.0.1',
      '127.0.0.1',
      '127.5.5.5',
      '169.254.169.254',
      '100.64.0.1',
      '224.0.0.1',
      '0.0.0.0',
      '255.255.255.255',
      '::1',
      '::',
      'fe80::1',
      'fc00::1',
      'ff02::1',
      '::ffff:10.0.0.1',
      '::ffff:93.184.216.34',
      'fd00:ec2::254',
    ])
      expect(refusedAddress(a, false), a).not.toBeNull();
    for (const a of ['93.184.216.34', '1.1.1.1', '2606:4700:4700::1111']) expect(refusedAddress(a, false), a).toBeNull();
    expect(refusedAddress('127.0.0.1', true)).toBeNull();
    expect(refusedAddress('10.0.0.1', true)).not.toBeNull();
  });

  it('accepts only https URLs to public hosts; loopback http only with the flag and a port', async () => {
    expect(await refusal('https://hooks.example/x')).toBeNull();
    expect(await refusal('http://hooks.example/x')).toContain('https');
    expect(await refusal('http://127.0.0.1:8080/x')).toContain('https');
    expect(await refusal('https://127.0.0.1/x')).toContain('loopback');
    expect(await refusal('https://localhost/x', false, async () => [{ address: '127.0.0.1', family: 4 }])).toContain('loopback');
    expect(await refusal('https://[::1]:8443/x')).toContain('loopback');
    expect(await refusal('https://169.254.169.254/latest/meta-data')).toContain('linkLocal');
    expect(await refusal('https://10.0.0.7/x')).toContain('private');
    expect(await refusal('https://u:p@hooks.example/x')).toContain('credentials');
    expect(await refusal('https://hooks.example/x#frag')).toContain('fragment');
    expect(await refusal('not a url')).toContain('not a URL');
    expect(await refusal('http://127.0.0.1:8080/x', true)).toBeNull();
    expect(await refusal('http://localhost:8080/x', true, async () => [{ address: '127.0.0.1', family: 4 }])).toBeNull();
    expect(await refusal('http://127.0.0.1/x', true)).toContain('https');
    expect(await refusal('http://10.0.0.1:80/x', true)).toContain('https');
  });

  it('refuses a name that resolves to a private address, also when one of several is', async () => {
    expect(await refusal('https://inside.example/x', false, async () => [{ address: '10.0.0.5', family: 4 }])).toContain('10.0.0.5');
    const mixed = async () => [
      { address: '93.184.216.34', family: 4 },
      { address: '192.168.1.1', family: 4 },
    ];
    expect(await refusal('https://mixed.example/x', false, mixed)).toContain('192.168.1.1');
    expect(await refusal('https://gone.example/x', false, async () => [])).toContain('does not resolve');
  });

  it('the connection lookup refuses what DNS now says is private (a rebinding name)', async () => {
    let answer = '93.184.216.34';
    const lookup = safeLookup(false, async () => [{ address: answer, family: 4 }]);
    const viaLookup = () =>
      new Promise<string>((resolve, reject) => lookup('rebind.example', {}, (err, addr) => (err ? reject(err) : resolve(String(addr)))));
    expect(await viaLookup()).toBe('93.184.216.34');
    answer = '169.254.169.254';
    await expect(viaLookup()).rejects.toThrow(/non-public/);
    await expect(resolvePublic('rebind.example', true, async () => [{ address: '127.0.0.1', family: 4 }])).rejects.toThrow(/loopback/);
  });
});
