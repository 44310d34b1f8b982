/**
 * The account page is served by Kitty at /account (built into dist/ by `pnpm build`, which
 * `pnpm start` runs first). `pnpm --filter @kitty/account dev` serves it with hot reload on
 * http://localhost:5173/account/ and proxies the API to a running Kitty (KITTY_DEV_TARGET,
 * default http://localhost:3000). The proxy presents the target's origin so the server's
 * CSRF rule (Origin must name the service) holds in development too.
 */
import { defineConfig } from 'vite';
import react from '@vitejs/plugin-react';

const target = process.env.KITTY_DEV_TARGET ?? 'http://localhost:3000';
const proxied = { target, changeOrigin: true, headers: { origin: new URL(target).origin } };

export default defineConfig({
  base: '/account/',
  plugins: [react()],
  build: { outDir: 'dist', emptyOutDir: true, sourcemap: false },
  server: { proxy: { '/trpc': proxied, '/auth': proxied, '/signin': proxied, '/oauth': proxied } },
});
