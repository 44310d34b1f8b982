/**
 * The move of packages/core, apps/server/src (and the tests of core and the server) into rooms by area:
 *
 *   packages/core/src/kernel/        trpc, meta, context, errors, registry, write-batch, activity, notify, …
 *   packages/core/src/access/        agents, API keys, group membership, reachability
 *   packages/core/src/areas/<area>/  the rules of one catalogue area; its tools in areas/<area>/tools/<tool>.ts
 *   packages/core/src/people/        the account page's router and sessions
 *   packages/core/src/testing/       helpers for benchmarks and tests (`@kitty/core/testing`)
 *   {packages/core,apps/server}/test/<area>/…, test/scenarios/…
 *   apps/server/src/{http,auth,oauth,people,runtime}/  (index.ts and main.ts, the entry points, stay at the root)
 *
 * Files are placed by the table below, then by rules (a tool under src/tools/<area>/ goes to
 * areas/<area>/tools/; a domain file named invite-*, expense-*, … goes to its area). A file that
 * neither places is printed and the script exits 1 before changing anything: add a row and run again.
 *
 * Every relative import, export, dynamic import() and `typeof import()` in the repository's
 * TypeScript and JavaScript is rewritten (ts-morph), package.json `exports` that name a moved
 * file are updated, and repository paths written in docs, comments and configs (README, docs/,
 * ARCHITECTURE.md, .dependency-cruiser.cjs, eslint.config.js, schema.prisma comments …) follow their
 * file. The account page's components (apps/account/src, PascalCase) get kebab-case names. The blocks
 * between `old-layout:begin` and `old-layout:end` in .dependency-cruiser.cjs and eslint.config.js
 * (rules for the old layout) are dropped.
 *
 *   node --import tsx scripts/move-by-area.ts            # plan, check, move (git mv), rewrite
 *   node --import tsx scripts/move-by-area.ts --dry-run  # print the plan only
 *
 * Re-runnable: on a tree already moved there is nothing to place and it changes nothing.
 */
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { Node, Project, SyntaxKind, type SourceFile, type StringLiteral } from 'ts-morph';
import {
  ACCOUNT_RULES,
  CORE_TEST_MAP,
  CORE_TEST_RULES,
  SERVER_SRC_MAP,
  SERVER_SRC_RULES,
  SERVER_TEST_MAP,
  SERVER_TEST_RULES,
  SRC_MAP,
  SRC_RULES,
} from './move-by-area-table.ts';

const ROOT = path.resolve(import.meta.dirname, '..');
const DRY = process.argv.includes('--dry-run');
const CORE_SRC = 'packages/core/src/';
const CORE_TEST = 'packages/core/test/';
const SERVER_TEST = 'apps/server/test/';
const SERVER_SRC = 'apps/server/src/';
const ACCOUNT_SRC = 'apps/account/src/';

const git = (...args: string[]): string => execFileSync('git', args, { cwd: ROOT, encoding: 'utf8' });
const tracked = git('ls-files', '-z').split('\0').filter(Boolean);

/** Where one file goes (repository path), or null when it stays; 'unmapped' when nothing places it. */
function destination(file: string): string | null | 'unmapped' {
  for (const [prefix, map, rules] of [
    [CORE_SRC, SRC_MAP, SRC_RULES],
    [CORE_TEST, CORE_TEST_MAP, CORE_TEST_RULES],
    [SERVER_TEST, SERVER_TEST_MAP, SERVER_TEST_RULES],
    [SERVER_SRC, SERVER_SRC_MAP, SERVER_SRC_RULES],
    [ACCOUNT_SRC, {} as Record<string, string>, ACCOUNT_RULES],
  ] as const) {
    if (!file.startsWith(prefix)) continue;
    const rel = file.slice(prefix.length);
    if (rel in map) {
      const to = map[rel];
      return to === undefined || to === rel ? null : prefix + to;
    }
    for (const rule of rules) {
      const m = rule.from.exec(rel);
      if (!m) continue;
      const to = rule.to(m);
      if (to === null) return null;
      if (to.startsWith('unmapped:')) return 'unmapped';
      return to === rel ? null : prefix + to;
    }
    return 'unmapped';
  }
  return null;
}

const moves = new Map<string, string>(); // old repository path → new
const unmapped: string[] = [];
for (const file of tracked) {
  if (!existsSync(path.join(ROOT, file))) continue;
  const to = destination(file);
  if (to === 'unmapped') unmapped.push(file);
  else if (to) moves.set(file, to);
}
const targets = new Map<string, string>();
for (const [from, to] of moves) {
  const clash = targets.get(to) ?? (existsSync(path.join(ROOT, to)) && !moves.has(to) ? to : undefined);
  if (clash) unmapped.push(`${from} → ${to} (taken by ${clash})`);
  targets.set(to, from);
}
if (unmapped.length) {
  process.stderr.write(
    `move-by-area: ${unmapped.length} file(s) have no place; add them to scripts/move-by-area-table.ts:\n  ${unmapped.join('\n  ')}\n`,
  );
  process.exit(1);
}
if (moves.size === 0) {
  process.stdout.write('move-by-area: nothing to move (already arranged by area).\n');
  process.exit(0);
}
if (DRY) {
  for (const [from, to] of moves) process.stdout.write(`${from} → ${to}\n`);
  process.stdout.write(`${moves.size} files would move.\n`);
  process.exit(0);
}

// ── 1. Rewrite module specifiers (in memory, from the old locations) ──────────────────────────
const CODE = /\.(ts|tsx|mts|cts|js|mjs|cjs)$/;
const project = new Project({ useInMemoryFileSystem: false, skipAddingFilesFromTsConfig: true });
const codeFiles = tracked.filter((f) => CODE.test(f) && !f.includes('/generated/') && existsSync(path.join(ROOT, f)));
const rewritten = new Map<string, string>(); // old repository path → new text
const warnings: string[] = [];

/** The file a relative specifier names, as a repository path (the specifier as written, or with .ts / index.ts). */
function resolveSpecifier(fromFile: string, spec: string): string | null {
  const base = path.posix.normalize(path.posix.join(path.posix.dirname(fromFile), spec));
  for (const candidate of [base, `${base}.ts`, `${base}/index.ts`, `${base}.tsx`]) {
    const abs = path.join(ROOT, candidate);
    if (existsSync(abs) && statSync(abs).isFile()) return candidate;
  }
  return existsSync(path.join(ROOT, base)) ? base : null;
}

function relativeSpecifier(fromFile: string, target: string, written: string, original: string): string {
  // Keep the specifier's form: the written suffix (".ts", "/index.ts" or none) stays as it was.
  const suffix = original.slice(written.length);
  let rel = path.posix.relative(path.posix.dirname(fromFile), target);
  if (suffix && rel.endsWith(suffix)) rel = rel.slice(0, -suffix.length);
  return rel.startsWith('.') ? rel : `./${rel}`;
}

function specifierLiterals(sf: SourceFile): StringLiteral[] {
  const out: StringLiteral[] = [];
  for (const d of [...sf.getImportDeclarations(), ...sf.getExportDeclarations()]) {
    const s = d.getModuleSpecifier();
    if (s && Node.isStringLiteral(s)) out.push(s);
  }
  for (const call of sf.getDescendantsOfKind(SyntaxKind.CallExpression)) {
    const callee = call.getExpression().getText();
    if (!['import', 'require', 'vi.mock', 'vi.importActual', 'require.resolve'].includes(callee)) continue;
    const arg = call.getArguments()[0];
    if (arg && (Node.isStringLiteral(arg) || Node.isNoSubstitutionTemplateLiteral(arg))) out.push(arg as StringLiteral);
  }
  for (const t of sf.getDescendantsOfKind(SyntaxKind.ImportType)) {
    const lit = t.getArgument().getFirstDescendantByKind(SyntaxKind.StringLiteral);
    if (lit) out.push(lit);
  }
  // new URL('./relative', import.meta.url)
  for (const n of sf.getDescendantsOfKind(SyntaxKind.NewExpression)) {
    const args = n.getArguments();
    if (n.getExpression().getText() !== 'URL' || args[1]?.getText() !== 'import.meta.url') continue;
    if (args[0] && Node.isStringLiteral(args[0])) out.push(args[0]);
  }
  return out;
}

for (const file of codeFiles) {
  const sf = project.addSourceFileAtPath(path.join(ROOT, file));
  const newFile = moves.get(file) ?? file;
  let changed = false;
  for (const lit of specifierLiterals(sf)) {
    const spec = lit.getLiteralValue();
    if (!spec.startsWith('.')) continue;
    const target = resolveSpecifier(file, spec);
    if (!target) {
      if (moves.has(file)) warnings.push(`${file}: cannot resolve '${spec}'`);
      continue;
    }
    const newTarget = moves.get(target) ?? target;
    if (newTarget === target && newFile === file) continue;
    const written = path.posix.normalize(path.posix.join(path.posix.dirname(file), spec));
    const next = relativeSpecifier(newFile, newTarget, written, target);
    if (next !== spec) {
      lit.setLiteralValue(next);
      changed = true;
    }
  }
  if (moves.has(file) && path.posix.dirname(file) !== path.posix.dirname(newFile)) {
    const text = sf.getFullText();
    // Paths built at run time from the file's own folder cannot be rewritten safely: say where to look.
    if (/import\.meta\.(dirname|filename)|__dirname|fileURLToPath\(import\.meta\.url\)/.test(text))
      warnings.push(`${file}: builds paths from its own folder (import.meta/__dirname); check after the move`);
  }
  if (changed) rewritten.set(file, sf.getFullText());
}

// ── 2. Repository paths written in text (docs, comments, configs) ───────────────────────────────
/** Every form a path is written in: the full path and each shorter suffix of ≥ 2 segments that names only this file. */
const allPaths = new Set(tracked);
function suffixes(p: string): string[] {
  const parts = p.split('/');
  const out: string[] = [];
  for (let i = 0; i <= parts.length - 2; i++) {
    const s = parts.slice(i).join('/');
    const owners = [...allPaths].filter((t) => t === s || t.endsWith(`/${s}`));
    if (owners.length === 1) out.push(s);
  }
  return out;
}
const textPairs: Array<[string, string]> = [];
for (const [from, to] of moves) {
  const fromSuffixes = suffixes(from);
  for (const s of fromSuffixes) {
    const depth = s.split('/').length;
    // Replace with the new path cut to the same prefix ("core/src/domain/x.ts" → "core/src/areas/…/x.ts").
    const cut = from.split('/').length - depth;
    textPairs.push([s, to.split('/').slice(cut).join('/')]);
  }
}
textPairs.sort((a, b) => b[0].length - a[0].length);
const escape = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
const pathPattern = new RegExp(`(?<![\\w./-])(${textPairs.map(([s]) => escape(s)).join('|')})(?![\\w/-])`, 'g');
const pairMap = new Map(textPairs);
const TEXT = /\.(md|ts|tsx|mts|cts|js|mjs|cjs|json|jsonc|prisma|sh|yml|yaml|sql)$|(^|\/)(run|kitty)$/;
const textFiles = tracked.filter(
  (f) =>
    TEXT.test(f) &&
    !f.endsWith('pnpm-lock.yaml') &&
    !f.includes('/generated/') &&
    !f.includes('/migrations/') &&
    !f.startsWith('scripts/move-by-area'), // this script and its table name the old paths on purpose
);
for (const file of textFiles) {
  const abs = path.join(ROOT, file);
  if (!existsSync(abs)) continue;
  const before = rewritten.get(file) ?? readFileSync(abs, 'utf8');
  let after = before.replace(pathPattern, (m) => pairMap.get(m) ?? m);
  if (file === '.dependency-cruiser.cjs' || file === 'eslint.config.js')
    after = after.replace(/\n[ \t]*\/\/ old-layout:begin[\s\S]*?\/\/ old-layout:end[^\n]*/g, '');
  if (file.endsWith('package.json')) after = updateExports(file, after);
  if (after !== before) rewritten.set(file, after);
}

/** package.json `exports` values ("./src/x.ts") that name a moved file. */
function updateExports(file: string, text: string): string {
  const dir = path.posix.dirname(file);
  return text.replace(/"(\.\/[^"]+\.ts)"/g, (m, rel: string) => {
    const target = path.posix.join(dir, rel);
    const to = moves.get(target);
    return to ? `"./${path.posix.relative(dir, to)}"` : m;
  });
}

// ── 3. Move (git mv, so history follows) and write ─────────────────────────────────────────────
for (const [from, to] of moves) {
  mkdirSync(path.dirname(path.join(ROOT, to)), { recursive: true });
  git('mv', from, to);
}
for (const [file, text] of rewritten) writeFileSync(path.join(ROOT, moves.get(file) ?? file), text);

process.stdout.write(`move-by-area: moved ${moves.size} files, rewrote ${rewritten.size}.\n`);
if (warnings.length) process.stdout.write(`Check by hand:\n  ${warnings.join('\n  ')}\n`);
let grep = '';
try {
  grep = git('grep', '-n', '-E', 'src/domain/|core/src/tools/|src/account/', '--', '*.md', '*.ts', '*.cjs', '*.jsonc');
} catch {
  // git grep exits 1 when nothing matches
}
const leftovers = grep.split('\n').filter((l) => l && !l.startsWith('scripts/move-by-area'));
if (leftovers.length) process.stdout.write(`Folder names of the old layout still written (edit by hand):\n  ${leftovers.join('\n  ')}\n`);
// A file that changed its name (http.ts → http/app.ts) may still be named bare in comments and docs.
const renamed = [...moves].filter(([from, to]) => path.posix.basename(from) !== path.posix.basename(to));
const bare: string[] = [];
for (const [from, to] of renamed) {
  const name = path.posix.basename(from);
  let hits = '';
  try {
    hits = git('grep', '-n', '-E', `(^|[^\\w./-])${escape(name)}([^\\w/-]|$)`, '--', path.posix.dirname(to), 'docs', '*.md');
  } catch {
    // none
  }
  for (const l of hits.split('\n').filter(Boolean)) bare.push(`${l}   (${name} is now ${to})`);
}
if (bare.length) process.stdout.write(`Renamed files still named bare (check by hand):\n  ${bare.join('\n  ')}\n`);
