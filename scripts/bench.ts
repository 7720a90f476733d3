/**
 * live-mem benchmark: prints figures, never fails on a threshold.
 *
 * Everything runs over MCP stdio against the built binary (bin/live-mem.cjs) on the fs driver,
 * driven by the SDK's own Client + StdioClientTransport, each section in a fresh temp store under
 * os.tmpdir() (all removed at the end):
 *
 *   1. start-up      spawn → `initialize` answered (client.connect resolves), median/p90 of 15 spawns,
 *                    and the official MCP memory server's median for comparison
 *   2. live_note     (scripts/bench-notes.ts, as 3, 12 and 13) 2,000 sequential calls into one space in 5
 *                    rounds, each beside the floors measured in the same run: an MCP round trip
 *                    (system_whoami), a durable file creation (temp + write + fsync + rename of 250 B)
 *                    and an append + fdatasync; p50/p99, notes/s, and p50 as a multiple of round trip +
 *                    file creation (medians of the rounds)
 *   3. append        2,000 (median of 3 runs) and 10,000 notes over one connection (fresh space each),
 *                    sequential and with 32 calls in flight, against the official MCP memory server
 *                    (@modelcontextprotocol/server-memory) appending as many facts sequentially,
 *                    measured here on the same disk in the same run (a pinned devDependency:
 *                    `npm ci` brings it)
 *   4. live_read     limit 50 on a space of 10,000 notes seeded in-process through the core
 *                    (several agents and categories, timestamps spread over four hours):
 *                    p50/p99 of 200 sequential reads, and p50 of a category + agent filtered read
 *   5. peak RSS      VmHWM of the server process at the end of section 3 (Linux only)
 *   6. consolidation the time spent outside the LLM call to consolidate 500 notes into the 6 standard bank
 *                    files, in-process through the core, with a scripted OpenAI-compatible server on
 *                    127.0.0.1 (real `openai` client): on fs, and on radosgw when LIVE_MEM_TEST_S3_ENDPOINT
 *                    points at one (`bash scripts/ceph-up.sh` prints the variables)
 *   7. export/import `live-mem export` and `live-mem import` as processes, on a space of 10,000 notes and
 *                    10 bank files (fs): wall time and each process's peak RSS (the import's the median
 *                    of 3 runs: on ext4 without a journal, as here, creating files right after many
 *                    were deleted is slow, since the kernel skips recently freed inodes)
 *   8. recall        (scripts/bench-recall.ts, as 9 and 10) a generated project history: 140 facts about
 *                    made-up entities (20 in French, 20 restated later with a new value), a distractor per
 *                    fact and 600 filler notes, written in-process over 9 consolidations by a scripted model
 *                    that keeps a third of the notes in the bank; then one paraphrased question per fact
 *                    through memory_search (limit 5): recall@5 and MRR, and memory_context (4,000 tokens)
 *                    for 20 of them: mean tokens and the share holding the answer
 *   9. memory_search spaces of 10,000 live notes and of 100,000 notes (195 consolidations of 500 in
 *                    history, the rest live), their files written directly in one batch: index build from
 *                    scratch, snapshot size, warm p50/p99 and server CPU per call of 200 queries of 1–3
 *                    words the notes hold (after 200 others, so the hits' texts are mostly cached), 200
 *                    queries no note holds apart, beside the MCP round-trip floor (system_about), and cold
 *                    at 100,000 (a new server, snapshot in the store: spawn → first answer, median of 3)
 *  10. live_search   p50 and server CPU per call of 100 queries on 2,000 and on 10,000 live notes against
 *                    the official MCP memory server's search_nodes on as many entities of the same text
 *                    (created 500 per call), and 100 queries no note holds apart
 *  11. tools/list    (scripts/bench-tools.ts) what listing the tools costs an agent on every conversation:
 *                    the JSON of the tools/list result as the SDK client receives it, in characters and
 *                    tokens (characters / 4), for each tool profile (agent, standard, all) and for the
 *                    official MCP memory server
 *  12. processes     8 live-mem processes writing 1,000 notes each into one space at once: notes present
 *                    afterwards (all 4,000 expected) and notes/s
 *  13. S3 live_note  500 sequential notes on radosgw when LIVE_MEM_TEST_S3_ENDPOINT points at one, beside
 *                    the p50 of one bare PUT If-None-Match of 250 B from this process
 *  14. web viewer    (scripts/bench-ui.ts) page weight (html + js + css, raw and gzipped) and first render in
 *                    chromium of the spaces, live feed and history pages over a space of 10,000 live notes and
 *                    100 consolidations (fresh server, then the median of 5 loads)
 *  15. long-lived    (scripts/bench-growth.ts) 100 consolidations of 30 notes (3,000 facts, progress entries
 *                    and decisions, each with an id) in-process through the core opened as the CLI opens
 *                    it, by a scripted model (bench-growth-model.ts) that adds every note to the bank as a
 *                    dated line and digests sections when asked to compact, with a 32,768-token context
 *                    window: failures, prompt tokens at consolidations 1, 10, 50 and 100 (past the budget
 *                    within ±20% of each other), bank, largest file and space_summary at 100 against the
 *                    budgets, recall@5 of every note by its words, the newest entry of each kind in the
 *                    bank, the model tokens spent, and the kept notes the retention check flags (false
 *                    flags: the model keeps every note); with LIVE_MEM_COMPACTION=auto, then off, then off
 *                    with a 200,000-token window (where the bank still fits without compaction)
 *  16. install       (scripts/bench-install.ts) the packed tarball installed into an empty project (fresh
 *                    npm cache, offline): tarball size, node_modules on disk and its packages; and a cold
 *                    `npx -y -p <tarball> live-mem` (fresh cache) from spawn to the first tools/list answered
 *  17. HTTP          (scripts/bench-http.ts) N = 10, 50 and 200 clients at once calling live_note + memory_search
 *                    against `serve --http` and against the bare stateless SDK server doing the same work
 *                    (scripts/minimal-http-server.mjs), both warmed up for 4 s, then in interleaved rounds (3, 9
 *                    at N = 50, 3) of 3 s each in a new space: calls/s and server CPU per call, median ratios with min–max
 *  18. newest      (scripts/bench-context.ts) memory_context (no query) and live_read (limit 50) in-process
 *                    on 10,000 live notes and on 100,000 (195 consolidations of 500 + 2,500 live), seeded as
 *                    in 9: a new core (as a new process meets them; median of 5) and warm p50 of 20 calls
 *  19. index memory  (scripts/bench-index-memory.ts) 1,000 spaces of 20 notes searched by one process under
 *                    a 256 MB and a 16 MB LIVE_MEM_INDEX_MEMORY_MB: peak RSS over the process's base, the
 *                    indexes' estimate and the heap; a 100,000-note index built without a snapshot: bytes
 *                    a note (estimated, and heap) and peak RSS (about a minute)
 *  20. 1M cold     (scripts/bench-scale.ts) 100,000 and 1,000,000 notes (1,995 consolidations of 500 + 2,500
 *                    live), each step in a new process: a rebuild without a snapshot (time, peak RSS); then,
 *                    99 notes later, the first memory_search of a new process (snapshot load + catch-up,
 *                    median of 3 with spread), in-process and, round by round beside it, over stdio from
 *                    the spawn to the first answer (start, server CPU, load); memory_context new and warm
 *                    at 1M, with a query warm (p50, p90) at 100k and 1M; the peak RSS of the 1M process,
 *                    its index's bytes a note and warm search
 *  21. LoCoMo        (scripts/bench-locomo.ts) recall on real conversations (bench/locomo/, shipped with the
 *                    repository, not the package): one note per turn through the core, memory_search per
 *                    question of categories 1–4 beside a plain BM25 library and a grep baseline on the same
 *                    turns, before and after a lossy scripted consolidation, and memory_context (2,000 tokens):
 *                    turn- and session-level recall@k and MRR; the development split by default
 *                    (`--locomo-split heldout|all`), per-question results in .bench/
 *  22. headings      (scripts/bench-headings.ts) a bank file of 10,000 one-line headings (320 KB): its outline,
 *                    search documents, compaction sections, consolidation view and one section edit (median
 *                    of 5), a consolidation of one note into a space holding it (outside the model) and the
 *                    first memory_search of a new core on that space
 *  23. retention     (scripts/bench-retention.ts) the retention check on LoCoMo's turns, consolidated 30 at a
 *                    time by a scripted model that keeps a fragment of one note in four: notes flagged,
 *                    precision and recall against what the model cut (and the data's facts it took), kept
 *                    notes flagged, and the check's cost per window; section 15 gives its false flags on a
 *                    model that keeps every note
 *
 *  24. agent plans  (scripts/bench-agent.ts) consolidation whose plan the agent writes, beside the endpoint's:
 *                    work package tokens per window (p50/p90) against the endpoint prompt's, on the growth
 *                    bench's notes and LoCoMo's dev conversations; how often the retention check sends the
 *                    agent's plan back; notes left in live/ on each path
 *  25. writes       (scripts/bench-writes.ts) a note's CPU in-process on tmpfs (/dev/shm), 2,000 notes after a
 *                    warm-up, a new process a round: with --baseline, rounds alternate with the baseline's
 *                    build (at least 10 each; median, spread and the median of the rounds' ratios, with the
 *                    load); then 2,000 short notes (`fact i about component-(i % 97)`) over MCP stdio on the
 *                    temp folder's disk against as many create_entities of the official memory server, in
 *                    alternated rounds (a new server and store each): wall and server CPU, median ratio
 *  26. change feed  (scripts/bench-feed.ts) what watching a space where nothing happens costs per hour at the
 *                    default interval: on fs the CPU of a check (10 idle spaces watched at 20 ms, rounds
 *                    alternating with rounds watching nothing; median of 5) and its store calls; on radosgw,
 *                    when configured, the requests of a check counted through the driver, per hour at 5 s
 *  27. eras         (scripts/bench-eras.ts) stateless HTTP, 50 clients (a Client and a token each) writing
 *                    notes back to back: `serve --http` answered in the 2026-07-28 era (an McpServer per
 *                    request), the same in the 2025 era (the shared server), and a bare v2 SDK server
 *                    (scripts/minimal-eras-server.mjs), in rounds rotating the order: calls/s, p50/p99,
 *                    server CPU a call (/proc), the ratios modern/2025 and live-mem/bare, with the load
 *  28. anchors      (scripts/bench-anchors.ts) 1,000 anchors over a 10,000-file git repository: checked by a
 *                    new process, then warm (p50/p99), and what capturing a note's anchors adds to its write
 *
 * Each figure is printed next to its target with ✓/✗, then all figures as one line of JSON.
 * Progress goes to stderr, the report to stdout. The server fsyncs every note, so the append figures
 * follow the disk: on a shared VM they vary from run to run; compare runs on a quiet machine. On ext4
 * without a journal (these VMs), creating files within minutes of deleting thousands (a test run, or
 * this bench's own clean-up) is several times slower: the kernel scans past recently freed inodes.
 * Leave the disk a few minutes between runs.
 *
 * Each section's heading says the load average and the disk's fsync time as it started.
 *
 * Run: npm run bench                 (builds dist/, then `node --import tsx scripts/bench.ts`; a few minutes,
 *                                     most of them the peer appending 10,000 facts)
 *      npm run bench -- --only 4,6    only the sections numbered 4 and 6
 *      npm run bench -- --baseline e1b0e00 --only 3,10,20   those sections on this build, then each on
 *                                     e1b0e00 built in a temporary worktree, side by side
 *      npm run bench -- --only 21 --locomo-split all    the LoCoMo section on all ten conversations
 *      npm run bench:page             the benchmark page of docs/benchmarks.md (scripts/bench-page.ts)
 */
import { execFile } from 'node:child_process';
import { mkdtemp, rm, symlink, writeFile } from 'node:fs/promises';
import { promisify } from 'node:util';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { ownerCaller } from '../src/core/caller.js';
import { createCore } from '../src/core/core.js';
import { mapLimit } from '../src/shared/concurrency.js';
import { createFsDriver } from '../src/storage/fs/fs-driver.js';
import { createS3Driver } from '../src/storage/s3/s3-driver.js';
import { listKeys } from '../src/storage/list.js';
import type { StorageDriver } from '../src/storage/types.js';
import { FIRST_PLAN } from '../fixtures/llm/scenarios.js';
import { startScriptedLlm } from '../test/helpers/scripted-llm.js';
import { ensureS3Bucket, s3DriverOptions, s3TestConfig, uniqueS3Prefix } from '../test/helpers/s3.js';
import {
  atLeast,
  below,
  describeMachine,
  figure,
  freshHome,
  LIVE_MEM,
  machineState,
  measureBuild,
  REPO,
  systemUnderTest,
  type Reported,
  type SectionState,
  PEER,
  peerAvailable,
  percentile,
  printJsonSummary,
  printReport,
  progress,
  removeTempHomes,
  setBaselineRoot,
  timeCalls,
  timedModel,
  timeMs,
  withServer,
  type Figure,
  type ServerSpec,
} from './bench-lib.js';
import { benchContext } from './bench-context.js';
import { benchGrowth } from './bench-growth.js';
import { benchHeadings } from './bench-headings.js';
import { benchRetention } from './bench-retention.js';
import { benchAgentConsolidation } from './bench-agent.js';
import { benchHttp } from './bench-http.js';
import { benchIndexMemory } from './bench-index-memory.js';
import { benchScale } from './bench-scale.js';
import { benchInstall } from './bench-install.js';
import { benchLocomo } from './bench-locomo.js';
import { benchAppendThroughput, benchNoteLatency, benchProcesses, benchS3Note, noteArgs } from './bench-notes.js';
import { benchLiveSearch, benchRecallQuality, benchSearchSpeed } from './bench-recall.js';
import { benchToolsList } from './bench-tools.js';
import { benchWriteCpu, benchWritesVsPeer } from './bench-writes.js';
import { benchUi } from './bench-ui.js';
import { benchAnchors } from './bench-anchors.js';
import { benchFeed } from './bench-feed.js';
import { benchEras } from './bench-eras.js';

/** Targets from the brief (the append ones derive from the peer's times below). */
const TARGET = { startupMs: 300, readP50Ms: 50, consolidationFsMs: 500, consolidationS3Ms: 3_000 } as const;
const CONSOLIDATION_NOTES = 500;
const ARCHIVE_NOTES = 10_000;
const ARCHIVE_BANK_FILES = 10;
const ARCHIVE_IMPORT_RUNS = 3;
const TARGET_ARCHIVE = { ms: 2_000, peakMiB: 150 } as const;
/**
 * Preloaded (CommonJS, so as not to start libuv's thread pool before bin/live-mem.cjs sizes it) into
 * a timed CLI process: prints its peak RSS (KiB) to stderr as it exits.
 */
const REPORT_MAX_RSS = "process.on('exit', () => process.stderr.write('maxrss=' + process.resourceUsage().maxRSS + '\\n'));\n";

const STARTUP_SPAWNS = 15;
const READ_SPACE_NOTES = 10_000;
const READ_CALLS = 200;
const FILTERED_READ_CALLS = 50;
const READ_LIMIT = 50;
const SEED_SPAN_MS = 4 * 60 * 60 * 1000;
const SEED_CONCURRENCY = 32;
const SEED_AGENTS = ['claude', 'cline', 'cursor', 'codex', 'gemini'] as const;
const FILTER = { category: 'decision', agent: 'cline' } as const;

// ---------------------------------------------------------------------------------------------
// Sections

async function medianStartupMs(spec: ServerSpec): Promise<{ median: number; p90: number }> {
  const home = await freshHome('startup');
  const connectMs: number[] = [];
  for (let spawn = 0; spawn < STARTUP_SPAWNS; spawn++) connectMs.push(await withServer(home, async (server) => server.connectMs, spec));
  return { median: percentile(connectMs, 50), p90: percentile(connectMs, 90) };
}

async function benchStartup(): Promise<Figure[]> {
  const ours = await medianStartupMs(LIVE_MEM);
  const peer = (await peerAvailable()) ? await medianStartupMs(PEER) : null;
  return [
    figure('startup_median_ms', `start-up median (${STARTUP_SPAWNS} spawns)`, ours.median, 'ms', below(TARGET.startupMs)),
    figure('startup_p90_ms', 'start-up p90', ours.p90, 'ms', below(TARGET.startupMs)),
    figure('peer_startup_median_ms', '  MCP memory server start-up median', peer?.median ?? null, 'ms'),
    figure('startup_vs_peer', '  start-up speed-up vs MCP memory server', peer ? peer.median / ours.median : null, 'x', atLeast(1)),
  ];
}

/** Writes `count` notes in-process through the core, as several agents over four hours. */
async function seedSpace(home: string, spaceId: string, count: number): Promise<void> {
  const storage = createFsDriver(home);
  const firstMs = Date.now() - SEED_SPAN_MS;
  let tick = 0;
  const clock = () => new Date(firstMs + Math.floor((tick++ * SEED_SPAN_MS) / count));
  const core = createCore({ storage, clock });
  const caller = ownerCaller('seed');
  await core.spaces.create(caller, { space_id: spaceId });
  await mapLimit(
    Array.from({ length: count }, (_, index) => index),
    SEED_CONCURRENCY,
    (index) => core.notes.write(caller, { ...noteArgs(spaceId, index), agent: SEED_AGENTS[index % SEED_AGENTS.length] }),
  );
  await storage.close?.();
}

/** Fails loudly if a read does not return what the seeded space holds: a fast wrong answer is no figure. */
function checkRead(result: Record<string, unknown>, filter: Partial<typeof FILTER>): void {
  const notes = result.notes as Array<Record<string, unknown>> | undefined;
  const matches = (note: Record<string, unknown>) => Object.entries(filter).every(([field, value]) => note[field] === value);
  if (notes?.length !== READ_LIMIT || result.has_more !== true || !notes.every(matches)) {
    throw new Error(`unexpected live_read result: ${JSON.stringify(result).slice(0, 300)}`);
  }
}

async function benchRead(): Promise<Figure[]> {
  const home = await freshHome('read');
  const spaceId = 'read';
  const seedMs = await timeMs(() => seedSpace(home, spaceId, READ_SPACE_NOTES));
  progress(`  seeded ${READ_SPACE_NOTES} notes in-process in ${(seedMs / 1000).toFixed(1)} s`);
  return withServer(home, async (server) => {
    const read = async (filter: Partial<typeof FILTER>) =>
      checkRead(await server.call('live_read', { space_id: spaceId, limit: READ_LIMIT, ...filter }), filter);
    const all = await timeCalls(READ_CALLS, 1, () => read({}));
    const filtered = await timeCalls(FILTERED_READ_CALLS, 1, () => read(FILTER));
    const notes = READ_SPACE_NOTES.toLocaleString('en');
    return [
      figure('live_read_p50_ms', `live_read p50 (limit ${READ_LIMIT}, ${notes} notes)`, percentile(all.latenciesMs, 50), 'ms', below(TARGET.readP50Ms)),
      figure('live_read_p99_ms', 'live_read p99', percentile(all.latenciesMs, 99), 'ms'),
      figure('live_read_filtered_p50_ms', 'live_read p50, category + agent filter', percentile(filtered.latenciesMs, 50), 'ms', below(TARGET.readP50Ms)),
    ];
  });
}

/** Consolidates CONSOLIDATION_NOTES notes on `storage`; returns the time spent outside the LLM. */
async function consolidationOverheadMs(storage: StorageDriver): Promise<number> {
  const server = await startScriptedLlm([{ reply: FIRST_PLAN }]);
  try {
    const llm = timedModel(server.client({ contextWindow: 1_000_000, maxTokens: 16_000 }));
    const core = createCore({ storage, llm });
    const caller = ownerCaller('bench');
    await core.spaces.create(caller, { space_id: 'consolidate' });
    await mapLimit(
      Array.from({ length: CONSOLIDATION_NOTES }, (_, index) => index),
      SEED_CONCURRENCY,
      (index) => core.notes.write(caller, { ...noteArgs('consolidate', index), agent: SEED_AGENTS[index % SEED_AGENTS.length] }),
    );
    const start = performance.now();
    const result = await core.consolidation.consolidate(caller, { space_id: 'consolidate' });
    const totalMs = performance.now() - start;
    if (result.status !== 'ok' || result.notes_processed !== CONSOLIDATION_NOTES || result.bank_files_created !== 6) {
      throw new Error(`unexpected consolidation result: ${JSON.stringify(result).slice(0, 300)}`);
    }
    return totalMs - llm.spentMs;
  } finally {
    await server.close();
  }
}

async function benchConsolidation(): Promise<Figure[]> {
  const fsMs = await consolidationOverheadMs(createFsDriver(await freshHome('consolidate')));
  const s3 = s3TestConfig();
  let s3Ms: number | null = null;
  if (s3) {
    await ensureS3Bucket(s3);
    const driver = createS3Driver({ ...s3DriverOptions(s3), prefix: uniqueS3Prefix('bench') });
    try {
      s3Ms = await consolidationOverheadMs(driver);
    } finally {
      await driver.deleteMany(await listKeys(driver, ''));
      await driver.close();
    }
  } else {
    progress('  radosgw not configured (LIVE_MEM_TEST_S3_ENDPOINT): skipping the S3 figure');
  }
  return [
    figure('consolidation_overhead_fs_ms', `consolidation overhead, ${CONSOLIDATION_NOTES} notes → 6 files, fs`, fsMs, 'ms', below(TARGET.consolidationFsMs)),
    figure(
      'consolidation_overhead_s3_ms',
      `consolidation overhead, ${CONSOLIDATION_NOTES} notes → 6 files, radosgw`,
      s3Ms,
      'ms',
      below(TARGET.consolidationS3Ms),
    ),
  ];
}

/** Runs the CLI as a process; returns its wall time and peak RSS. */
async function timedCli(args: string[], home: string): Promise<{ ms: number; peakMiB: number | null }> {
  const preload = path.join(home, 'report-max-rss.cjs');
  await writeFile(preload, REPORT_MAX_RSS);
  const start = performance.now();
  const { stderr } = await promisify(execFile)(process.execPath, ['--require', preload, systemUnderTest().bin, ...args], {
    env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? tmpdir(), LIVE_MEM_HOME: home, LIVE_MEM_LOG_LEVEL: 'warn' },
    maxBuffer: 16 * 1024 * 1024,
  });
  const ms = performance.now() - start;
  const kib = /maxrss=(\d+)/.exec(stderr)?.[1];
  return { ms, peakMiB: kib === undefined ? null : Number(kib) / 1024 };
}

async function benchArchive(): Promise<Figure[]> {
  const home = await freshHome('archive');
  await seedSpace(home, 'archive', ARCHIVE_NOTES);
  const storage = createFsDriver(home);
  for (let i = 0; i < ARCHIVE_BANK_FILES; i++) await storage.put(`archive/bank/file${i}.md`, `# File ${i}\n\n${'A line of the memory bank.\n'.repeat(400)}`);
  const file = path.join(home, 'archive.tar.gz');
  // Let the kernel write the seeded files back first: an import racing that writeback measures the disk.
  await promisify(execFile)('sync');
  const exported = await timedCli(['export', 'archive', '-o', file], home);
  // The median of a few imports: creating 10,000 files swings with what the disk did just before.
  const imports: Array<Awaited<ReturnType<typeof timedCli>>> = [];
  for (let run = 0; run < ARCHIVE_IMPORT_RUNS; run++) imports.push(await timedCli(['import', file, '--as', `archive-copy-${run}`], home));
  imports.sort((a, b) => a.ms - b.ms);
  const imported = imports[Math.floor(imports.length / 2)] as (typeof imports)[number];
  const label = `${ARCHIVE_NOTES.toLocaleString('en')} notes + ${ARCHIVE_BANK_FILES} bank files, fs`;
  return [
    figure('export_ms', `export (${label})`, exported.ms, 'ms', below(TARGET_ARCHIVE.ms)),
    figure('export_peak_rss_mib', '  export peak RSS', exported.peakMiB, 'MiB', below(TARGET_ARCHIVE.peakMiB)),
    figure('import_ms', `import, median of ${ARCHIVE_IMPORT_RUNS} (${label})`, imported.ms, 'ms', below(TARGET_ARCHIVE.ms)),
    figure('import_peak_rss_mib', '  import peak RSS', imported.peakMiB, 'MiB', below(TARGET_ARCHIVE.peakMiB)),
    figure('import_max_ms', `  slowest of ${ARCHIVE_IMPORT_RUNS} imports`, (imports.at(-1) as (typeof imports)[number]).ms, 'ms'),
  ];
}

// ---------------------------------------------------------------------------------------------

/**
 * Sections, with whether the baseline (`--baseline <ref>`) can run them: those that spawn the build's
 * executable (its `bin/`) or load its core from `src/` through bench-lib's `importFrom`. The others
 * import this checkout's modules directly, so a baseline run of them would measure this build again.
 */
const SECTIONS: ReadonlyArray<{ title: string; run: () => Promise<Figure[]>; baseline?: true; interleaves?: true }> = [
  { title: '1. start-up', run: benchStartup, baseline: true },
  { title: '2. live_note latency, beside the floors', run: benchNoteLatency, baseline: true },
  { title: '3. append throughput (+ 5. peak RSS)', run: benchAppendThroughput, baseline: true },
  { title: '4. live_read on 10,000 notes', run: benchRead, baseline: true },
  { title: '6. consolidation overhead', run: benchConsolidation },
  { title: '7. export and import', run: benchArchive, baseline: true },
  { title: '8. recall quality', run: benchRecallQuality },
  { title: '9. memory_search speed', run: benchSearchSpeed, baseline: true },
  { title: '10. live_search vs the MCP memory server', run: benchLiveSearch, baseline: true },
  { title: '11. tools/list size', run: benchToolsList, baseline: true },
  { title: '12. processes writing at once', run: benchProcesses, baseline: true },
  { title: '13. live_note on S3 (radosgw)', run: benchS3Note, baseline: true },
  { title: '14. web viewer', run: benchUi },
  { title: '15. a long-lived space', run: benchGrowth },
  { title: '16. install and first launch', run: benchInstall },
  { title: '17. HTTP clients at once', run: benchHttp, baseline: true },
  { title: '18. newest notes on big spaces', run: benchContext },
  { title: '19. search indexes under a memory budget', run: benchIndexMemory },
  { title: '20. a million notes, cold', run: benchScale, baseline: true },
  { title: '21. LoCoMo: recall on real conversations', run: benchLocomo },
  { title: '22. a bank file of 10,000 headings', run: benchHeadings },
  { title: '23. retention: nothing dropped silently', run: benchRetention },
  { title: '24. agent-written consolidation', run: benchAgentConsolidation },
  // Runs both builds itself, round by round (--baseline sets bench-lib's baselineRoot): not run again on the baseline.
  {
    title: '25. writes: CPU against the baseline, MCP against the official server',
    run: async () => [...(await benchWriteCpu()), ...(await benchWritesVsPeer())],
    interleaves: true,
  },
  { title: '26. change detection of an idle watched space', run: benchFeed },
  { title: '27. HTTP at N = 50 in both MCP eras, against a bare v2 SDK server', run: benchEras, baseline: true },
  { title: '28. anchors: checks over a 10,000-file repository', run: () => benchAnchors() },
];

/**
 * `--baseline <ref>`: the ref checked out in a temporary worktree (node_modules linked from this
 * checkout) and built, so each section that can is measured on it right after this build, in the
 * same run, on stores seeded the same way. Returns the worktree, or throws.
 */
async function prepareBaseline(ref: string): Promise<string> {
  const run = promisify(execFile);
  const dir = await mkdtemp(path.join(tmpdir(), 'live-mem-bench-baseline-'));
  await rm(dir, { recursive: true, force: true });
  progress(`baseline: ${ref} into ${dir}`);
  await run('git', ['-C', REPO, 'worktree', 'add', '--detach', dir, ref]);
  await symlink(path.join(REPO, 'node_modules'), path.join(dir, 'node_modules'), 'dir');
  await run(process.execPath, [path.join(dir, 'scripts', 'build.mjs')], { cwd: dir, maxBuffer: 16 * 1024 * 1024 });
  return dir;
}

async function removeBaseline(dir: string): Promise<void> {
  await promisify(execFile)('git', ['-C', REPO, 'worktree', 'remove', '--force', dir]).catch(() => rm(dir, { recursive: true, force: true }));
}

async function main(): Promise<void> {
  const machine = describeMachine();
  const figures: Reported[] = [];
  const states: SectionState[] = [];
  const start = performance.now();
  const argument = (flag: string) => (process.argv.includes(flag) ? process.argv[process.argv.indexOf(flag) + 1] : undefined);
  const ref = argument('--baseline');
  const baselineDir = ref ? await prepareBaseline(ref) : undefined;
  setBaselineRoot(baselineDir);
  const probeDir = await freshHome('machine');
  try {
    // `npm run bench -- --only 4,6` runs the sections whose titles start with those numbers.
    const only = argument('--only')?.split(',') ?? null;
    for (const section of SECTIONS.filter((s) => !only || only.some((n) => s.title.startsWith(`${n}.`)))) {
      const state: SectionState = { title: section.title, ...machineState(probeDir) };
      progress(`${section.title} (load ${state.load.toFixed(1)}, fsync ${state.fsyncMs.toFixed(2)} ms)`);
      const found = await section.run();
      states.push(state);
      let baseline: Figure[] | null = null;
      if (baselineDir && section.baseline) {
        state.baseline = machineState(probeDir);
        progress(`  the same on the baseline (${ref}; load ${state.baseline.load.toFixed(1)}, fsync ${state.baseline.fsyncMs.toFixed(2)} ms)`);
        measureBuild(baselineDir);
        try {
          baseline = await section.run();
        } catch (error) {
          state.baseline.error = `failed: ${(error as Error).message.split('\n')[0]}`;
          progress(`  baseline ${state.baseline.error}`);
        } finally {
          measureBuild(REPO);
        }
      }
      for (const fig of found) {
        // A section that interleaves the builds itself prints the baseline's figures as its own rows.
        const base = baselineDir && !section.interleaves ? (baseline?.find((b) => b.key === fig.key)?.value ?? null) : undefined;
        figures.push({ ...fig, section: section.title, ...(base === undefined ? {} : { baseline: base }) });
      }
    }
  } finally {
    progress('removing the temp stores');
    await removeTempHomes();
    if (baselineDir) await removeBaseline(baselineDir);
  }
  progress(`done in ${((performance.now() - start) / 1000).toFixed(1)} s (measured: ${systemUnderTest().root})`);
  printReport(figures, machine, states);
  printJsonSummary(figures, states);
}

await main();
