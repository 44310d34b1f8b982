// ESLint (flat config) for every package: typescript-eslint's recommended rules on top of
// `tsc --noEmit` (strict), plus two type-aware rules about promises (a promise nobody awaits
// loses its error; a promise where a void callback is expected is never awaited).
// Tests may use `any` for envelopes they assert on. House rules: at most 300 lines per source file (tests,
// benchmarks, scripts and generated files aside), kebab-case file names (a tool's file is named after the tool,
// snake_case), no console in src (logs go through the logger; a CLI's output is its interface).
import js from '@eslint/js';
import checkFile from 'eslint-plugin-check-file';
import tseslint from 'typescript-eslint';

export default tseslint.config(
  { ignores: ['**/node_modules/**', '**/src/generated/**', '**/dist/**', '**/*.mjs'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    rules: {
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
    },
  },
  {
    files: ['**/*.ts'],
    languageOptions: {
      parserOptions: {
        projectService: { allowDefaultProject: ['*/*/vitest.config.ts', 'packages/db/prisma.config.ts'] },
        tsconfigRootDir: import.meta.dirname,
      },
    },
    rules: {
      '@typescript-eslint/no-floating-promises': 'error',
      '@typescript-eslint/no-misused-promises': 'error',
    },
  },
  {
    files: ['**/test/**/*.ts', '**/bench/**/*.ts'],
    rules: { '@typescript-eslint/no-explicit-any': 'off', '@typescript-eslint/no-non-null-assertion': 'off' },
  },
  {
    files: ['**/*.{ts,tsx}'],
    ignores: ['**/test/**', '**/bench/**', '**/scripts/**', '**/generated/**'],
    rules: { 'max-lines': ['error', { max: 300 }] },
  },
  {
    files: ['**/*.{ts,tsx}'],
    ignores: ['**/tools/**'],
    plugins: { 'check-file': checkFile },
    rules: { 'check-file/filename-naming-convention': ['error', { '**/*.{ts,tsx}': 'KEBAB_CASE' }, { ignoreMiddleExtensions: true }] },
  },
  {
    files: ['**/tools/**/*.ts'],
    plugins: { 'check-file': checkFile },
    rules: { 'check-file/filename-naming-convention': ['error', { '**/*.ts': 'SNAKE_CASE' }, { ignoreMiddleExtensions: true }] },
  },
  {
    files: ['**/src/**/*.{ts,tsx}'],
    rules: { 'no-console': 'error' },
  },
  {
    // The command line: what it prints is its interface.
    files: ['apps/server/src/main.ts'],
    rules: { 'no-console': 'off' },
  },
);
