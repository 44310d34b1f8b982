/**
 * The edge check every tool call's arguments pass before anything else. The registry runs it in
 * `callTool` and `validateArgs`, so REST, MCP and the sandbox apply it to every tool by
 * construction — a new tool cannot forget it.
 *
 * Refused, anywhere in the arguments (values and object keys, at any depth):
 * - U+0000 (NUL): PostgreSQL `text` cannot store it (PostgreSQL docs, "Character Types");
 * - a lone UTF-16 surrogate (U+D800-U+DFFF not forming a pair): it has no UTF-8 encoding
 *   (RFC 3629 §3), so PostgreSQL refuses it;
 * - a number JSON.parse turned into ±Infinity (e.g. 1e309): no field takes it, and hashing or
 *   storing it fails further in;
 * - nesting deeper than MAX_ARGUMENT_DEPTH (no tool takes more than a few levels; deeper input
 *   only costs stack and time further in).
 * Other control characters are a per-field rule of the tool schemas (interface-spec "Limits").
 */
import type { ValidationIssue } from './errors.ts';

/** Deepest nesting of arrays/objects accepted in tool arguments (the arguments object is level 1). */
export const MAX_ARGUMENT_DEPTH = 32;
/** At most this many issues are reported for one call. */
const MAX_ISSUES = 20;

/** A high surrogate not followed by a low one, or a low one not preceded by a high one (no `u` flag: code units). */
const LONE_SURROGATE = /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/;

/** Control characters (C0, DEL, C1) and lone surrogates: what `display` escapes. */
// eslint-disable-next-line no-control-regex -- making control characters visible is the point
const UNSHOWABLE = /[\u0000-\u001f\u007f-\u009f]|[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/g;

/** Escapes NUL, lone surrogates and other control characters so a path can be shown safely. */
function display(key: string): string {
  return key.replace(UNSHOWABLE, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);
}

/** Any character that could make a string unsafe (NUL or any surrogate): a string without one needs no closer look. */
// eslint-disable-next-line no-control-regex -- NUL is what is looked for
const SUSPECT = /[\u0000\ud800-\udfff]/;

/** The issue of string `s` at `place` (its path is built only when there is one), or null. */
function stringIssue(s: string, place: Place | undefined, root: string): ValidationIssue | null {
  if (!SUSPECT.test(s)) return null;
  if (s.includes('\u0000')) return { path: pathOf(place, root), message: 'must not contain U+0000 (NUL)', code: 'nul_character' };
  if (LONE_SURROGATE.test(s))
    return {
      path: pathOf(place, root),
      message: 'must not contain a lone UTF-16 surrogate (U+D800-U+DFFF outside a pair): it is not valid Unicode text',
      code: 'lone_surrogate',
    };
  return null;
}

/** Where a value sits: its property name or index, under its parent (none for the arguments themselves). */
interface Place {
  key: string;
  parent: Place | undefined;
}

/** The dotted path of `place` ("payers.0.handle"; `root` for the arguments themselves), property names made showable. */
function pathOf(place: Place | undefined, root: string): string {
  if (!place) return root;
  const keys: string[] = [];
  for (let p: Place | undefined = place; p; p = p.parent) keys.push(display(p.key));
  return keys.reverse().join('.');
}

/**
 * Lists the problems above in `value` (iteratively: no recursion, so any depth is safe). Paths are
 * built only for the values that have a problem.
 * @param value the arguments as parsed from JSON
 * @param root  the path shown for `value` itself ("(root)" by default; e.g. "Idempotency-Key")
 * @returns issues with dotted paths like zod's ("payers.0.handle"), at most 20; empty when clean
 */
export function inputIssues(value: unknown, root = '(root)'): ValidationIssue[] {
  const issues: ValidationIssue[] = [];
  const stack: Array<{ v: unknown; place: Place | undefined; depth: number }> = [{ v: value, place: undefined, depth: 0 }];
  while (stack.length && issues.length < MAX_ISSUES) {
    const { v, place, depth } = stack.pop()!;
    if (typeof v === 'string') {
      const issue = stringIssue(v, place, root);
      if (issue) issues.push(issue);
      continue;
    }
    if (typeof v === 'number' && !Number.isFinite(v)) {
      issues.push({
        path: pathOf(place, root),
        message: 'number out of range: it overflows to infinity (JSON numbers must be finite doubles)',
        code: 'non_finite_number',
      });
      continue;
    }
    if (v === null || typeof v !== 'object') continue;
    if (depth >= MAX_ARGUMENT_DEPTH) {
      issues.push({
        path: pathOf(place, root),
        message: `nested too deeply: at most ${MAX_ARGUMENT_DEPTH} levels of arrays and objects`,
        code: 'too_deep',
      });
      continue;
    }
    // Children are pushed last to first, so they are looked at in order; a property name is checked when its object is.
    if (Array.isArray(v)) {
      for (let i = v.length - 1; i >= 0; i--) stack.push({ v: v[i], place: { key: String(i), parent: place }, depth: depth + 1 });
      continue;
    }
    const keys = Object.keys(v);
    for (let i = keys.length - 1; i >= 0; i--) {
      const k = keys[i]!;
      const child: Place = { key: k, parent: place };
      const keyIssue = stringIssue(k, child, root);
      if (keyIssue) {
        issues.push({ ...keyIssue, message: `property name ${keyIssue.message}` });
        if (issues.length >= MAX_ISSUES) break;
        continue;
      }
      stack.push({ v: (v as Record<string, unknown>)[k], place: child, depth: depth + 1 });
    }
  }
  return issues;
}
