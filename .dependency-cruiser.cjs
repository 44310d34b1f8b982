/**
 * Import rules checked by `pnpm deps` (part of `pnpm test`): no import circles anywhere, and the
 * rules of the domain never import transport code (tRPC, HTTP, MCP, adapters, tools, the server).
 * In packages/core/src the rooms import only downward: kernel ← access ← areas (in AREA_ORDER) ←
 * people, testing, catalogue. Type-only imports count: a circle of types is still a circle to read.
 */
const CORE = '^packages/core/src/';
/** Catalogue areas, lowest first: an area's files import only the areas before it (scripts/area-order.cjs). */
const AREA_ORDER = require('./scripts/area-order.cjs');
const TRANSPORT = [
  `${CORE}kernel/(trpc|registry|meta)[.]ts$`,
  `${CORE}areas/[^/]+/tools/`,
  `${CORE}access/tools/`,
  '^packages/(rest-adapter|mcp-adapter|client)/',
  '^apps/',
  'node_modules/(@trpc|fastify|@fastify|@modelcontextprotocol)/',
];

module.exports = {
  forbidden: [
    {
      name: 'kernel-imports-nothing-above',
      severity: 'error',
      comment: 'The kernel (tRPC, registry, errors, write batch …) is what every room stands on; it names no room above it.',
      from: { path: `${CORE}kernel/` },
      to: { path: `${CORE}(access|areas|people|testing)/|${CORE}catalogue[.]ts$` },
    },
    {
      name: 'access-imports-only-kernel',
      severity: 'error',
      comment: 'Access (who is this, may they touch it) stands on the kernel alone.',
      from: { path: `${CORE}access/` },
      to: { path: `${CORE}(areas|people|testing)/|${CORE}catalogue[.]ts$` },
    },
    ...AREA_ORDER.map((area, i) => ({
      name: `area-order-${area}`,
      severity: 'error',
      comment: `Areas import only downward (${AREA_ORDER.join(' ← ')}): ${area} may use ${AREA_ORDER.slice(0, i).join(', ') || 'no other area'}.`,
      from: { path: `${CORE}areas/${area}/` },
      to: { path: `${CORE}(areas/(${[...AREA_ORDER.slice(i + 1), 'NONE'].join('|')})/|people/|testing/|catalogue[.]ts$)` },
    })),
    {
      name: 'area-has-a-place',
      severity: 'error',
      comment: 'Every folder under areas/ is named in AREA_ORDER (above), so its place in the import order is stated.',
      from: { path: `${CORE}areas/(?!(${AREA_ORDER.join('|')})/)[^/]+/` },
      to: {},
    },
    {
      name: 'rules-without-transport',
      severity: 'error',
      comment: 'The rules (access/, areas/<area>/*.ts) take (db, actor, input); tools, tRPC, HTTP and MCP call them, never the reverse.',
      from: { path: `${CORE}(access|areas/[^/]+)/[^/]+$` },
      to: { path: TRANSPORT },
    },
    {
      name: 'no-circular',
      severity: 'error',
      comment: 'Modules that import each other (directly or through others) cannot be read or tested one at a time.',
      from: {},
      to: { circular: true },
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
      name: 'server-sign-in-without-oauth',
      severity: 'error',
      comment:
        'Person sign-in (people/) is its own plugin and runs with KITTY_OAUTH=off: it never imports the authorization server (oauth/), which may use people/.',
      from: { path: '^apps/server/src/people/' },
      to: { path: '^apps/server/src/oauth/' },
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
