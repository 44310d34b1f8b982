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
      name: 'layers-point-down',
      severity: 'error',
      comment: 'apps → adapters → core → db: a lower layer never imports a higher one.',
      from: { path: '^packages/(core|db)/src/' },
      to: { path: '^(packages/(rest-adapter|mcp-adapter|client)/|apps/)' },
    },
    {
      name: 'db-below-core',
      severity: 'error',
      from: { path: '^packages/db/src/' },
      to: { path: '^packages/core/' },
    },
    {
      name: 'adapters-independent',
      severity: 'error',
      comment: 'REST and MCP adapters translate the same registry; neither imports the other.',
      from: { path: '^packages/(rest-adapter|mcp-adapter)/' },
      to: { path: '^packages/(rest-adapter|mcp-adapter)/', pathNot: '^packages/$1/' },
    },
    {
      name: 'typed-clients-import-types-only',
      severity: 'error',
      comment: 'The typed client and the account page take types from core (inferred from the routers), never its code.',
      from: { path: '^(packages/client|apps/account)/src/' },
      to: { path: '^packages/core/', dependencyTypesNot: ['type-only'] },
    },
    {
      name: 'server-without-migration-engine',
      severity: 'error',
      comment:
        'Start-up applies migrations with the plain SQL runner; the Prisma schema engine and its patched adapters are for the migration scripts only.',
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
