/**
 * Import rules checked by `pnpm deps` (part of `pnpm test`): no import circles anywhere, and the
 * domain (packages/core/src/domain) never imports transport code (tRPC, HTTP, MCP, adapters,
 * tools, the server). Type-only imports count: a circle of types is still a circle to read.
 */
module.exports = {
  forbidden: [
    {
      name: 'no-circular',
      severity: 'error',
      comment: 'Modules that import each other (directly or through others) cannot be read or tested one at a time.',
      from: {},
      to: { circular: true },
    },
    {
      name: 'domain-without-transport',
      severity: 'error',
      comment: 'The domain holds the rules; tRPC, HTTP, MCP, the tools and the adapters call it, never the reverse.',
      from: { path: '^packages/core/src/domain/' },
      to: {
        path: [
          '^packages/core/src/(trpc|registry|meta)[.]ts$',
          '^packages/core/src/tools/',
          '^packages/(rest-adapter|mcp-adapter|client)/',
          '^apps/',
          'node_modules/(@trpc|fastify|@fastify|@modelcontextprotocol)/',
        ],
      },
    },
    {
      name: 'server-without-migration-engine',
      severity: 'error',
      comment: 'Start-up applies migrations with the plain SQL runner; the Prisma schema engine and its patched adapters are for the migration scripts only.',
      from: { path: '^apps/server/src/' },
      to: { path: '^packages/db/src/migrate/(engine|authoring)[.]ts$', reachable: true },
    },
  ],
  options: {
    tsPreCompilationDeps: true,
    doNotFollow: { path: 'node_modules' },
    exclude: { path: ['node_modules', '/generated/', '/dist/'] },
    enhancedResolveOptions: { exportsFields: ['exports'], conditionNames: ['import', 'require', 'node', 'default', 'types'] },
  },
};
