/**
 * Migration commands: create/check over @prisma/schema-engine-wasm (src/migrate/authoring.ts),
 * apply with the plain SQL runner the server uses at start-up (src/migrate/apply.ts).
 *
 *   pnpm exec tsx scripts/migrations.ts create <name>   new prisma/migrations/<ts>_<name>/ (or "no changes")
 *   pnpm exec tsx scripts/migrations.ts check           exit 1 if schema.prisma and migrations disagree
 *   pnpm exec tsx scripts/migrations.ts apply           apply pending migrations to DATABASE_URL
 *
 * `create`/`check` use temporary kitty_shadow_* databases on the server of DATABASE_URL (default
 * postgresql://postgres@127.0.0.1:5432/postgres) and never modify an existing database.
 */
import { applyMigrations } from '../src/migrate/apply.ts';
import { checkMigrations, createMigration } from '../src/migrate/authoring.ts';

const [cmd, arg] = process.argv.slice(2);

async function main(): Promise<number> {
  switch (cmd) {
    case 'create': {
      if (!arg || !/^[a-z0-9_]+$/i.test(arg)) {
        console.error('usage: migrations.ts create <name>   (letters, digits, underscores)');
        return 2;
      }
      const created = await createMigration(arg);
      console.log(created ? `created prisma/migrations/${created}/migration.sql` : 'no changes');
      return 0;
    }
    case 'check': {
      const { ok, summary } = await checkMigrations();
      if (ok) {
        console.log('migrations are in sync with schema.prisma');
        return 0;
      }
      console.error('DRIFT: schema.prisma differs from prisma/migrations. A new migration would:');
      console.error(summary);
      console.error('Run `npx -y pnpm@10.34.8 --filter @kitty/db migration:create <name>`.');
      return 1;
    }
    case 'apply': {
      const url = process.env.DATABASE_URL;
      if (!url) {
        console.error('DATABASE_URL is not set');
        return 2;
      }
      const { applied } = await applyMigrations(url);
      console.log(applied.length ? `applied: ${applied.join(', ')}` : 'database is up to date');
      return 0;
    }
    default:
      console.error('usage: migrations.ts create <name> | check | apply');
      return 2;
  }
}

main().then(
  (code) => process.exit(code),
  (e: unknown) => {
    console.error(e instanceof Error ? e.message : e);
    process.exit(1);
  },
);
