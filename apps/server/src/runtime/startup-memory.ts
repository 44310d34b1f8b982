/**
 * Giving back what start-up used. Loading Kitty's modules keeps most of what it allocates, so V8 grows the young
 * generation to its cap (`--max-semi-space-size` in `./kitty`) during start-up, and an idle server would keep it until
 * V8's memory reducer notices the quiet. One full garbage collection of the "last resort" kind (the one V8 runs when
 * memory is low: it also shrinks the young generation back to its initial size and compacts) right after start-up
 * leaves the idle server small; under load the young generation grows again to its cap, where it saves the scavenges
 * a smaller one would run (docs/design-notes.md "Memory").
 */
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';

/** V8's gc extension function (`--expose-gc`), with the options object it takes since V8 10. */
type GcFunction = (options: { type: 'major'; execution: 'async'; flavor: 'last-resort' }) => Promise<void>;

/**
 * Runs one last-resort major GC after the current task (the collection itself pauses the process for ~50-100 ms).
 * The gc function is taken from a fresh context with `--expose-gc` set only while it is made, so nothing in this
 * process gets a global `gc` (as Jest's leak detector does). Never throws: a Node whose V8 refuses resolves all the same.
 * @returns resolves once the collection ran
 */
export async function releaseStartupMemory(): Promise<void> {
  let gc: GcFunction;
  try {
    setFlagsFromString('--expose-gc');
    gc = runInNewContext('gc') as GcFunction;
  } catch {
    return;
  } finally {
    setFlagsFromString('--no-expose-gc');
  }
  try {
    await gc({ type: 'major', execution: 'async', flavor: 'last-resort' });
  } catch {
    // an older V8 without these options: nothing was collected, nothing else changes
  }
}
