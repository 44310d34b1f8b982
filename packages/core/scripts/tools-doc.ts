/**
 * Writes docs/tools.md, the tool reference, from the registry: every tool's title, kind, scope and description, and its
 * examples (meta.examples: the arguments sent and the `data` answered). test/kernel/examples.test.ts fails when the
 * committed file differs from what this writes. Run from the repository root after changing a tool or an example:
 *   node --import tsx packages/core/scripts/tools-doc.ts
 */
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Registry } from '../src/kernel/registry.ts';

export const TOOLS_DOC = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..', '..', 'docs', 'tools.md');

const json = (v: unknown) => '```json\n' + JSON.stringify(v, null, 2) + '\n```\n';

/** The text of docs/tools.md for this registry. */
export function toolsReference(registry: Registry): string {
  const areas = [...new Set(registry.catalogue.map((t) => t.area))];
  const out: string[] = [
    '# Tool reference\n',
    'Generated from the tool registry by `packages/core/scripts/tools-doc.ts` (run `node --import tsx packages/core/scripts/tools-doc.ts`',
    'after changing a tool or an example; a test fails while this file is out of date). Every tool is `POST /v1/tools/<name>` with',
    'its arguments as the JSON body, answered `{"ok":true,"data":{…}}` (REST), or `tools/call` with the same arguments (MCP).',
    'The examples show the arguments and the `data`; they tell one story (alice, bob and carol share a trip in EUR), and each is',
    "checked against its tool's schemas. Amounts are integers in minor units (`9000` = €90.00). The full input and output schemas:",
    '`GET /v1/tools/<name>`, or `GET /openapi.json` (which carries the same examples).\n',
    areas.map((a) => `[${a}](#${a})`).join(' · ') + '\n',
  ];
  for (const area of areas) {
    out.push(`## ${area}\n`);
    for (const t of registry.catalogue.filter((x) => x.area === area)) {
      const who = t.scope ? `scope \`${t.scope}\`` : 'no credential';
      out.push(`### ${t.name}\n`, `**${t.title}** · ${t.kind} · ${who}\n`, `${t.description}\n`);
      for (const ex of registry.examples?.get(t.name) ?? []) {
        out.push(`**Example: ${ex.summary}**\n`, json(ex.arguments), 'Result (`data`):\n', json(ex.result));
      }
    }
  }
  return out.join('\n');
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const { appRouter } = await import('../src/catalogue.ts');
  const { buildRegistry } = await import('../src/kernel/registry.ts');
  writeFileSync(TOOLS_DOC, toolsReference(buildRegistry(appRouter)));
  process.stdout.write(`wrote ${path.relative(process.cwd(), TOOLS_DOC)}\n`);
}
