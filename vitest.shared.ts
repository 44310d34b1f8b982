/**
 * Vitest settings shared by every package: tests talk to real PostgreSQL (one fresh database
 * per test file), so files run one at a time with generous timeouts; a JSON report per package
 * lets .ci/run print one "N passed, N failed" line for the whole suite.
 */
import { fileURLToPath } from 'node:url';
import type { ViteUserConfig } from 'vitest/config';

export const sharedTestConfig: NonNullable<ViteUserConfig['test']> = {
  include: ['test/**/*.test.ts'],
  // Fails a test file on node-postgres' concurrent-query warning (see vitest.setup.ts).
  setupFiles: [fileURLToPath(new URL('./vitest.setup.ts', import.meta.url))],
  // Hot write tools skip parsing their answers in production; under test every answer is parsed and must come out unchanged (kernel/built-output.ts).
  env: { KITTY_CHECK_OUTPUTS: '1' },
  testTimeout: 60_000,
  hookTimeout: 60_000,
  fileParallelism: false,
  reporters: ['default', 'json'],
  outputFile: { json: './test-results.json' },
};
