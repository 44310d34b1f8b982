import { defineConfig } from 'vitest/config';

// Tests talk to real PostgreSQL servers (TEST_DATABASE_URL or 127.0.0.1:5432, plus an embedded one).
export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    testTimeout: 60_000,
    hookTimeout: 60_000,
    fileParallelism: false,
  },
});
