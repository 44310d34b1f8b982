/**
 * Full-text search over the docs server's content (MiniSearch, BM25+): one entry per tool
 * (name, title, area, description) and one per `## ` section of each spec-level page.
 * Names and titles weigh more than bodies; prefixes match ("settle" finds settle_up) and
 * longer words tolerate a typo. Built once at start-up; searching allocates only the results.
 */
import MiniSearch from 'minisearch';
import type { Registry } from '@kitty/core';
import { TOOL_PAGE_PREFIX, type DocPage } from './pages.ts';

/** One search hit as search_docs returns it. `score` is MiniSearch's relevance (higher is better, unbounded). */
export interface SearchHit {
  type: 'tool' | 'doc';
  name: string;
  title: string;
  /** The resource to read for the whole text. */
  uri: string;
  /** Up to 240 characters of the matching text, around the first matched word. */
  snippet: string;
  score: number;
}

interface Entry {
  id: string;
  type: 'tool' | 'doc';
  name: string;
  title: string;
  uri: string;
  heading: string;
  body: string;
}

function snippet(raw: string, terms: string[]): string {
  const lower = raw.toLowerCase();
  const at = terms.map((t) => lower.indexOf(t)).find((i) => i !== -1) ?? -1;
  const start = Math.max(0, at - 80);
  return (
    (start > 0 ? '…' : '') +
    raw
      .slice(start, start + 240)
      .replace(/\s+/g, ' ')
      .trim() +
    (start + 240 < raw.length ? '…' : '')
  );
}

/**
 * Indexes the registry's tools and the pages' sections.
 * @returns `search(query, limit)`: at most `limit` hits, best first; an exact tool name ranks
 *          that tool first; no match → [].
 */
export function docsSearch(registry: Registry, pages: DocPage[]): (query: string, limit: number) => SearchHit[] {
  const entries: Entry[] = [
    ...registry.catalogue.map((t) => ({
      id: `tool:${t.name}`,
      type: 'tool' as const,
      name: t.name,
      title: t.title,
      uri: TOOL_PAGE_PREFIX + t.name,
      heading: `${t.name} ${t.title} ${t.area}`,
      body: t.description,
    })),
    ...pages.flatMap((p) =>
      p.text.split(/\n(?=## )/).map((section, i) => {
        const heading = i === 0 ? p.title : section.split('\n')[0]!.replace(/^#+\s*/, '');
        return {
          id: `doc:${p.uri}#${i}`,
          type: 'doc' as const,
          name: p.name,
          title: i === 0 ? p.title : `${p.title}: ${heading}`,
          uri: p.uri,
          heading,
          body: section,
        };
      }),
    ),
  ];
  const byId = new Map(entries.map((e) => [e.id, e]));
  const index = new MiniSearch<Entry>({
    fields: ['heading', 'body'],
    searchOptions: { boost: { heading: 3 }, prefix: (term) => term.length > 2, fuzzy: (term) => (term.length > 4 ? 0.2 : false) },
  });
  index.addAll(entries);

  return (query, limit) => {
    const exactTool = `tool:${query.trim().toLowerCase()}`;
    return index
      .search(query, { boostDocument: (id) => (id === exactTool ? 10 : 1) })
      .slice(0, limit)
      .map((r) => {
        const e = byId.get(r.id as string)!;
        return {
          type: e.type,
          name: e.name,
          title: e.title,
          uri: e.uri,
          snippet: snippet(e.body, r.terms),
          score: Math.round(r.score * 1000) / 1000,
        };
      });
  };
}
