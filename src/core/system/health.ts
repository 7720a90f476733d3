import { canAccessSpace, type Caller } from '../caller.js';
import type { CoreContext } from '../context.js';
import { MODEL_FIX, MODEL_FIX_REMOTE } from '../model.js';
import { listSpaceIds } from '../space-meta.js';

/** How long an LLM reachability check is reused: health may be polled, the endpoint need not be. */
const LLM_CHECK_TTL_MS = 60_000;
const CHECK_TIMEOUT_MS = 5_000;

/**
 * A service's state. The model's is `missing` when none is configured (with the `fix`), or `sampling`
 * when none is but the caller's MCP client lends its own: a server knows that of a client it serves,
 * never of clients in general.
 */
type Check = { status: 'ok' | 'error' | 'missing' | 'sampling'; latency_ms?: number; message?: string; [field: string]: unknown };

export interface HealthOptions {
  /** The caller's MCP client declared sampling and may lend its model to this caller's consolidations. */
  sampling?: boolean;
  /** The caller reaches this server over the network (HTTP): a missing model is for whoever runs it to fix (MODEL_FIX_REMOTE). */
  remote?: boolean;
}

/** system_health: is the store reachable, is the model configured and reachable (without spending tokens). */
export function createHealth(context: CoreContext) {
  const started = context.monotonic();
  let llmCheck: { at: number; result: Check } | undefined;

  const timed = async (run: (signal: AbortSignal) => Promise<unknown>): Promise<Check> => {
    const start = context.monotonic();
    try {
      await run(AbortSignal.timeout(CHECK_TIMEOUT_MS));
      return { status: 'ok', latency_ms: Math.round((context.monotonic() - start) * 10) / 10 };
    } catch (error) {
      return { status: 'error', latency_ms: Math.round(context.monotonic() - start), message: error instanceof Error ? error.message : String(error) };
    }
  };

  const checkLlm = async (options: HealthOptions): Promise<Check> => {
    const llm = context.llm;
    const fix = options.remote ? MODEL_FIX_REMOTE : MODEL_FIX;
    if (!llm && options.sampling)
      return {
        status: 'sampling',
        message:
          'no model is configured: what this client asks for (consolidation, compaction, summaries) runs on its own model through MCP sampling; ' +
          'the compaction and summaries that follow a consolidation by themselves need a configured one',
        fix,
      };
    if (!llm) return { status: 'missing', message: 'no model is configured: consolidation, compaction and summaries cannot run', fix };
    if (llmCheck && context.monotonic() - llmCheck.at < LLM_CHECK_TTL_MS) return { ...llmCheck.result, cached: true };
    const result = { ...(await timed((signal) => llm.ping?.(signal) ?? Promise.resolve())), model: llm.label };
    llmCheck = { at: context.monotonic(), result };
    return result;
  };

  return async (caller: Caller, options: HealthOptions = {}) => {
    const [storage, llm] = await Promise.all([timed(() => context.storage.list('_system/', { limit: 1 })), checkLlm(options)]);
    const spaces = storage.status === 'ok' ? await listSpaceIds(context) : [];
    // Public, so that a liveness probe needs no token; but the model's label names its endpoint
    // (an internal URL) and an error message may name a host, a bucket or a path. A caller with
    // no permission at all (anonymous under LIVE_MEM_AUTH=required) gets the statuses only; any
    // token (every permission implies read) gets the details an agent needs to say what is wrong.
    const detailed = caller.permissions.size > 0;
    const services: { storage: Check; llm: Check } = detailed
      ? { storage: { ...storage, driver: context.storage.name }, llm }
      : { storage: { status: storage.status, driver: context.storage.name }, llm: { status: llm.status } };
    return {
      status: storage.status === 'ok' ? ('ok' as const) : ('error' as const),
      services,
      version: context.version,
      uptime_seconds: Math.round((context.monotonic() - started) / 1000),
      // Only spaces the caller may see are counted: a count must not reveal others' spaces.
      spaces_count: spaces.filter((id) => canAccessSpace(caller, id)).length,
    };
  };
}
