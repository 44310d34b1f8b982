import { defineConfig } from 'prisma/config';

// Prisma 7 configuration. Only `prisma generate` is run through the CLI here (see STACK-NOTES):
// migrations go through scripts/migrations.ts over @prisma/schema-engine-wasm.
export default defineConfig({
  schema: 'prisma/schema.prisma',
});
