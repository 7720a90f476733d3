/**
 * Section 24 of the benchmark (run by bench.ts): consolidation whose plan the agent writes
 * (core/consolidation/agent-plan.ts), beside the configured endpoint's. The same notes go through
 * two twin stores: one consolidated by the endpoint (the growth bench's scripted model), one by a
 * scripted agent that asks for a work package, writes the plan with that same model's logic and
 * submits it. Measured per window: the tokens of the work package (what the agent's context takes)
 * and of the endpoint's prompt (system and user messages), p50 and p90; how often the retention
 * check sends the agent's plan back; and whether every note ends in history on both paths.
 *
 * Two sets of notes: the growth bench's (30 a window: facts, progress, decisions) and LoCoMo's
 * conversations (each turn a note by its speaker, the development split), written 30 at a time.
 * What it does not show: a real model's plan (the scripted writer is diligent), nor the tokens an
 * agent spends writing the plan.
 */
import path from 'node:path';
import { type Opened, openCore } from '../src/cli/open.js';
import { ownerCaller } from '../src/core/caller.js';
import { isLiveMemError } from '../src/shared/errors.js';
import { consolidationReply, startGrowthModel } from './bench-growth-model.js';
import { growthNotes } from './bench-growth.js';
import { figure, freshHome, percentile, progress, type Figure } from './bench-lib.js';
import { loadLocomo, SPLITS } from './bench-locomo-data.js';

const SPACE = 'agent';
/** Notes written before each consolidation, as the growth bench writes them. */
const BATCH = 30;
/** Growth windows consolidated (of 100): enough for the bank to be large and files shown in part. */
const GROWTH_WINDOWS = 40;
/** LoCoMo turns taken per conversation of the development split. */
const LOCOMO_TURNS = 600;

interface Note {
  category: string;
  content: string;
  agent?: string;
}

interface PathFigures {
  /** Tokens per window. */
  tokens: number[];
  windows: number;
  /** Notes left in live/ at the end (0 when every note was folded in). */
  left: number;
}

interface AgentFigures extends PathFigures {
  /** Plans sent back once for what they leave out (the retention check or an unaccounted note), then confirmed. */
  sentBack: number;
  /** Plans refused outright (a check other than retention), and the first reasons. */
  refused: number;
  reasons: string[];
}

const envOf = (home: string, extra: Record<string, string> = {}) => ({
  HOME: home,
  LIVE_MEM_HOME: path.join(home, 'store'),
  LIVE_MEM_AGENT: 'bench',
  LIVE_MEM_LOG_LEVEL: 'error',
  LIVE_MEM_SUMMARIES: 'off',
  LIVE_MEM_COMPACTION: 'auto',
  ...extra,
});

const liveLeft = async (opened: Opened): Promise<number> =>
  ((await opened.core.spaces.info(ownerCaller('bench'), { space_id: SPACE })) as { live: { notes_count: number } }).live.notes_count;

async function write(opened: Opened, notes: readonly Note[]): Promise<void> {
  for (const note of notes)
    await opened.core.notes.write(ownerCaller(note.agent ?? 'bench'), { space_id: SPACE, category: note.category, content: note.content });
}

/** The endpoint path: the notes, 30 at a time, each batch consolidated by the scripted model. */
async function endpointRun(batches: readonly Note[][], name: string): Promise<PathFigures> {
  const home = await freshHome(`agent-endpoint-${name}`);
  const model = await startGrowthModel();
  const opened = await openCore(
    { quiet: true },
    envOf(home, { LIVE_MEM_LLM_BASE_URL: model.url, LIVE_MEM_LLM_MODEL: 'growth', LIVE_MEM_LLM_API_KEY: 'bench' }),
  );
  try {
    await opened.core.spaces.create(ownerCaller('bench'), { space_id: SPACE });
    for (const batch of batches) {
      await write(opened, batch);
      await opened.core.consolidation.consolidate(ownerCaller('bench'), { space_id: SPACE });
      await opened.core.idle();
    }
    // A window is a consolidation request; a retention reminder is the same window asked again.
    const windows = model.calls.filter((call) => call.purpose === 'consolidation' && call.retentionFlagged === undefined);
    return { tokens: windows.map((call) => call.promptTokens), windows: windows.length, left: await liveLeft(opened) };
  } finally {
    await opened.close();
    await model.close();
  }
}

/** The agent path: the same batches, each folded in window by window from work packages. */
async function agentRun(batches: readonly Note[][], name: string): Promise<AgentFigures> {
  const home = await freshHome(`agent-agent-${name}`);
  const opened = await openCore({ quiet: true }, envOf(home));
  const caller = ownerCaller('bench');
  const result: AgentFigures = { tokens: [], windows: 0, left: 0, sentBack: 0, refused: 0, reasons: [] };
  try {
    await opened.core.spaces.create(caller, { space_id: SPACE });
    for (const batch of batches) {
      await write(opened, batch);
      for (;;) {
        const pkg = (await opened.core.consolidation.ask(caller, { space_id: SPACE })) as { handle?: string; prompt: string; package_tokens: number };
        if (!pkg.handle) break;
        result.windows++;
        result.tokens.push(pkg.package_tokens);
        let plan = consolidationReply(pkg.prompt);
        try {
          await opened.core.consolidation.submit(caller, { space_id: SPACE, handle: pkg.handle }, plan);
        } catch (error) {
          const token = isLiveMemError(error, 'invalid_input') ? error.data.confirm : undefined;
          if (typeof token !== 'string') {
            // A scripted writer cannot correct its plan: the run stops here, its window claimed (what is left is counted).
            result.refused++;
            result.reasons.push((error as Error).message.slice(0, 400));
            result.left = await liveLeft(opened);
            return result;
          }
          result.sentBack++;
          plan = JSON.stringify({ ...JSON.parse(plan), confirm: token });
          await opened.core.consolidation.submit(caller, { space_id: SPACE, handle: pkg.handle }, plan);
        }
        await opened.core.idle();
      }
    }
    result.left = await liveLeft(opened);
    return result;
  } finally {
    await opened.close();
  }
}

function locomoBatches(): Note[][] {
  const notes = loadLocomo(SPLITS.dev).flatMap((conversation) =>
    conversation.turns.slice(0, LOCOMO_TURNS).map((turn) => ({ category: 'observation', content: `${turn.speaker}: ${turn.text}`, agent: turn.speaker })),
  );
  return Array.from({ length: Math.ceil(notes.length / BATCH) }, (_, i) => notes.slice(i * BATCH, (i + 1) * BATCH));
}

export async function benchAgentConsolidation(): Promise<Figure[]> {
  const figures: Figure[] = [];
  const sets: Array<[string, string, Note[][]]> = [
    ['growth', `the growth bench's notes (${GROWTH_WINDOWS} batches of ${BATCH})`, growthNotes().slice(0, GROWTH_WINDOWS)],
    ['locomo', `LoCoMo's dev conversations (${LOCOMO_TURNS} turns each)`, locomoBatches()],
  ];
  for (const [key, label, batches] of sets) {
    progress(`agent-written consolidation: ${label}, endpoint path`);
    const endpoint = await endpointRun(batches, key);
    progress(`agent-written consolidation: ${label}, agent path`);
    const agent = await agentRun(batches, key);
    const notes = batches.reduce((sum, batch) => sum + batch.length, 0);
    for (const reason of agent.reasons) progress(`agent plan refused: ${reason}`);
    figures.push(
      figure(`agent_${key}_package_p50`, `${label}: work package per window, p50 (${agent.windows} windows)`, percentile(agent.tokens, 50), 'tokens'),
      figure(`agent_${key}_package_p90`, '  work package per window, p90', percentile(agent.tokens, 90), 'tokens'),
      figure(`agent_${key}_package_max`, '  work package per window, largest (default budget 12,000)', Math.max(...agent.tokens), 'tokens'),
      figure(`agent_${key}_endpoint_p50`, `  the endpoint's prompt per window, p50 (${endpoint.windows} windows)`, percentile(endpoint.tokens, 50), 'tokens'),
      figure(`agent_${key}_endpoint_p90`, "  the endpoint's prompt per window, p90", percentile(endpoint.tokens, 90), 'tokens'),
      figure(
        `agent_${key}_sent_back`,
        '  agent plans sent back by the retention check, share of windows',
        agent.windows > 0 ? agent.sentBack / agent.windows : null,
        'ratio',
      ),
      figure(`agent_${key}_refused`, '  agent plans refused outright', agent.refused, 'x'),
      figure(`agent_${key}_left`, `  notes left in live/ of ${notes}, agent path (endpoint path: ${endpoint.left})`, agent.left, 'x'),
    );
  }
  return figures;
}
