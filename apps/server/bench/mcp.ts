/**
 * MCP tools/call against REST for the same read tool (get_me), one row per protocol era:
 * 2026-07-28 (per-request `_meta` envelope and its headers) and 2025-11-25 (a stateless call with
 * the MCP-Protocol-Version header, as a 2025 client sends after initialize). Goal ≥ 0.7x REST.
 * Each row also gives the Kitty process's CPU time per call on both sides (medians over the rounds), which
 * moves much less than throughput when other processes share the cores.
 */
import { readFileSync } from 'node:fs';
import { load, paired, compare, median, profiler, SECONDS, type Result } from './measure.ts';

const ENVELOPE = {
  'io.modelcontextprotocol/protocolVersion': '2026-07-28',
  'io.modelcontextprotocol/clientInfo': { name: 'bench', version: '1' },
  'io.modelcontextprotocol/clientCapabilities': {},
};

/** The body and headers of one MCP tools/call get_me in the given era. */
export function mcpCall(era: '2026-07-28' | '2025-11-25', auth: Record<string, string>) {
  const modern = era === '2026-07-28';
  const params = { name: 'get_me', arguments: {}, ...(modern ? { _meta: ENVELOPE } : {}) };
  return {
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params }),
    headers: {
      ...auth,
      accept: 'application/json, text/event-stream',
      'mcp-protocol-version': era,
      ...(modern ? { 'mcp-method': 'tools/call', 'mcp-name': 'get_me' } : {}),
    },
  };
}

/** CPU time (µs, user + system) process `pid` has used so far, from Linux /proc (clock ticks of 10 ms). */
function cpuMicros(pid: number): number {
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
  return (Number(fields[11]) + Number(fields[12])) * 10_000;
}

/**
 * One row per era: MCP tools/call get_me vs REST get_me, alternating. With BENCH_PROFILE the target
 * writes a CPU profile of each load (`mcp-<era>-<round>`, `rest-<era>-<round>`; `bareUrl` reaches it).
 * @param targetPid the Kitty process (the bench target), for its CPU time per call
 */
export async function benchMcp(
  kittyUrl: string,
  auth: Record<string, string>,
  loadRest: () => Promise<Result>,
  bareUrl?: string,
  targetPid?: number,
): Promise<void> {
  const profiled = profiler(bareUrl);
  /** Runs a load and records the target's CPU µs per request into `into`. */
  const metered = (into: number[], run: () => Promise<Result>) => async (): Promise<Result> => {
    const before = targetPid ? cpuMicros(targetPid) : 0;
    const r = await run();
    if (targetPid) into.push((cpuMicros(targetPid) - before) / (r.total || r.rps * SECONDS));
    return r;
  };
  for (const era of ['2026-07-28', '2025-11-25'] as const) {
    const { body, headers } = mcpCall(era, auth);
    const probe = await fetch(`${kittyUrl}/mcp`, { method: 'POST', headers, body });
    const answer = (await probe.json().catch(() => null)) as { result?: { isError?: boolean } } | null;
    if (probe.status !== 200 || !answer?.result || answer.result.isError) {
      console.log(`\nMCP ${era}: /mcp answered ${probe.status} ${JSON.stringify(answer)}; skipped`);
      continue;
    }
    await load({ url: `${kittyUrl}/mcp`, method: 'POST', headers, body, duration: 1 });
    const cpu = { mcp: [] as number[], rest: [] as number[] };
    const [mcp, rest, ratio] = await paired(
      metered(
        cpu.mcp,
        profiled(`mcp-${era}`, () => load({ url: `${kittyUrl}/mcp`, method: 'POST', headers, body })),
      ),
      metered(cpu.rest, profiled(`rest-${era}`, loadRest)),
    );
    const note = targetPid
      ? `Kitty CPU per call ${median(cpu.mcp, (x) => x).toFixed(0)} vs ${median(cpu.rest, (x) => x).toFixed(0)} µs`
      : undefined;
    compare(`MCP ${era} tools/call vs REST (get_me)`, mcp, `MCP ${era} tools/call get_me`, rest, 'REST get_me', '≥ 0.7x', ratio, note);
  }
}
