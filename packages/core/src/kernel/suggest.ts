/**
 * "Did you mean …?" for names an agent got slightly wrong: tool names and argument keys.
 * Edit distance (Levenshtein) from `fastest-levenshtein`, plus prefix matches ("amount" → "amount_minor").
 */
import { distance } from 'fastest-levenshtein';

/**
 * The candidates closest to `word`, best first: those within an edit distance of a third of the
 * longer name (at least 2), or that start with `word` / that `word` starts with (3+ characters).
 * @returns at most `max` names; [] when nothing is close.
 */
export function closestNames(word: string, candidates: Iterable<string>, max = 3): string[] {
  const w = word.toLowerCase();
  const scored: Array<{ name: string; score: number }> = [];
  for (const name of candidates) {
    const n = name.toLowerCase();
    const d = distance(w, n);
    const prefix = w.length >= 3 && (n.startsWith(w) || w.startsWith(n) || n.includes(w));
    if (d <= Math.max(2, Math.floor(Math.max(w.length, n.length) / 3)) || prefix)
      scored.push({ name, score: prefix ? Math.min(d, 1.5) : d });
  }
  scored.sort((a, b) => a.score - b.score || a.name.localeCompare(b.name));
  return scored.slice(0, max).map((s) => s.name);
}

/** `did you mean "a" or "b"?`, or '' when there is nothing to suggest. */
export function didYouMean(names: string[]): string {
  if (names.length === 0) return '';
  const quoted = names.map((n) => `"${n}"`);
  return `did you mean ${quoted.length === 1 ? quoted[0] : `${quoted.slice(0, -1).join(', ')} or ${quoted.at(-1)}`}?`;
}
