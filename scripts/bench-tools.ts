/**
 * Section 11 of the benchmark: what tools/list costs an agent, for each tool profile of live-mem and
 * for the official MCP memory server, measured as a new user would: the SDK's client over stdio,
 * the JSON of the tools/list result, in characters and in tokens (characters / 4).
 */
import { atMost, figure, freshHome, LIVE_MEM, PEER, peerAvailable, withServer, type Figure, type ServerSpec } from './bench-lib.js';

/** Targets from the brief, in tokens; `standard` has none. */
const PROFILES = [
  { profile: 'agent', maxTokens: 3_125 }, // issue 41: 12,500 characters
  { profile: 'standard', maxTokens: undefined },
  { profile: 'all', maxTokens: 8_000 },
] as const;

const tokensOf = (chars: number): number => chars / 4;

async function listingSize(spec: ServerSpec): Promise<{ tools: number; chars: number }> {
  const listing = (await withServer(await freshHome('tools'), (server) => server.listTools(), spec)) as { tools: unknown[] };
  return { tools: listing.tools.length, chars: JSON.stringify(listing).length };
}

export async function benchToolsList(): Promise<Figure[]> {
  const figures: Figure[] = [];
  for (const { profile, maxTokens } of PROFILES) {
    const spec: ServerSpec = { args: LIVE_MEM.args, env: (home) => ({ ...LIVE_MEM.env(home), LIVE_MEM_TOOLS: profile }) };
    const { tools, chars } = await listingSize(spec);
    figures.push(
      figure(`tools_list_${profile}_chars`, `tools/list, profile ${profile} (${tools} tools)`, chars, 'chars'),
      figure(`tools_list_${profile}_tokens`, '  in tokens (chars / 4)', tokensOf(chars), 'tokens', maxTokens === undefined ? undefined : atMost(maxTokens)),
    );
  }
  const peer = (await peerAvailable()) ? await listingSize(PEER) : null;
  figures.push(
    figure('peer_tools_list_chars', `tools/list, MCP memory server${peer ? ` (${peer.tools} tools)` : ''}`, peer?.chars ?? null, 'chars'),
    figure('peer_tools_list_tokens', '  in tokens (chars / 4)', peer ? tokensOf(peer.chars) : null, 'tokens'),
  );
  return figures;
}
