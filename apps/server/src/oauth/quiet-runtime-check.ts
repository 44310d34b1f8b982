/**
 * oidc-provider prints "Unsupported runtime" at import when `process.release.lts` is unset. The
 * Node 24.9 binary from the npm `node` package (the newest there) is a pre-LTS 24.x build and has
 * no `lts` name, though 24 is an LTS line and every OAuth test passes on it. This module is imported
 * just before oidc-provider and drops that one line (only it), so servers and CLIs keep a clean
 * stderr; `restoreConsoleWarn` is called right after the import.
 */
/* eslint-disable no-console -- this module filters one line out of console.warn */
const original = console.warn;
console.warn = (...args: unknown[]) => {
  if (typeof args[0] === 'string' && args[0].startsWith('oidc-provider WARNING: Unsupported runtime')) return;
  original(...args);
};

export function restoreConsoleWarn(): void {
  console.warn = original;
}
