import { createHash } from 'node:crypto';
import type { CreateMessageRequestParams, InputRequiredResult } from '@modelcontextprotocol/server';
import { inputRequired, inputResponse } from '@modelcontextprotocol/server';
import { createSamplingLlm, type SamplingResult } from '../llm/sampling.js';
import { LlmError, type LlmClient } from '../llm/types.js';
import { nonceIn } from '../core/prompt-fence.js';
import { invalid } from '../shared/errors.js';
import { type ModelLimits, samplingAnswer, samplingParams } from './client-model.js';
import type { RequestContext, ToolDefinition } from './tool.js';

/**
 * The client's own model for a 2026-07-28 request, which cannot push a sampling request to its client:
 * the call's work runs as usual with an LlmClient that answers each model request from what the client
 * has already answered, and records the requests it could not answer. The work then stops as at any
 * model failure (nothing half-written: each consolidation window or compaction commits whole or not
 * at all), and the call answers `input_required` with those requests embedded as sampling/createMessage.
 * The client runs them through its model and retries the call; the work runs again from the store, and
 * each model request of it — the same prompt for the same notes and bank — finds its answer. A window
 * committed in one round is not asked again in the next (its notes are no longer live), so a call moves
 * window by window, one round each, to its end. A prompt's fences carry a nonce drawn anew each run
 * (prompt-fence.ts): a request is known by its prompt with the nonce left out, and the answer the client
 * gave to the nonce it was asked with is handed to the run with that nonce changed for the run's own —
 * exactly what the model would have written, so the fence-echo checks hold.
 *
 * `requestState` carries the answers the last run used (and the new ones), plus what the earlier
 * rounds of the call did, for its final result (a tool's `rounds` merge). It is not signed: it grants
 * nothing the client could not say anyway — it is the model whose answers meet every guard, as the
 * answers in `inputResponses` are — and the counts it carries are only reported back to that client.
 * A call asks at most MAX_ROUNDS rounds (the SDK's client gives up after ten) and then returns what it
 * did, saying how to go on.
 */

/** Rounds one call may take; the SDK's client gives up past ten by default. */
export const MAX_ROUNDS = 8;
/** Model requests asked in one round (parallel work, such as summaries, may miss several at once). */
const MAX_ASKED = 8;
/** The state the client echoes: kept well under the request body limits of servers and proxies. */
const MAX_STATE_CHARS = 768 * 1024;
const STATE_VERSION = 1;

/** An answer of the client's model, with the nonce of the prompt it answered (if it had one). */
type Answer = SamplingResult & { nonce?: string };

interface RoundsState {
  v: number;
  tool: string;
  round: number;
  answers: Record<string, Answer>;
  /** The nonce each request asked in the last round carried. */
  asked?: Record<string, string>;
  /** What the earlier rounds of this call did (the tool's `rounds` merge of their results). */
  done?: Record<string, unknown>;
}

const WAITING = "waiting for the client's model (input_required)";

export interface ModelRounds {
  readonly llm: LlmClient;
  /**
   * After the tool ran (its result, or undefined when it threw): the input_required result that asks the
   * client's model what the run could not answer, or undefined when it needed nothing more.
   */
  ask(result: Record<string, unknown> | undefined): InputRequiredResult | undefined;
  /** The call's final result: this run's, merged with what the earlier rounds did (the tool's `rounds`). */
  settle(result: Record<string, unknown>): Record<string, unknown>;
}

/** A model request's key: its parameters' digest, nonce left out, so that the same prompt finds its answer in any round, on any replica. */
function keyOf(params: CreateMessageRequestParams, nonce: string | undefined): string {
  const text = JSON.stringify(params);
  const neutral = nonce ? text.replaceAll(nonce, '(nonce)') : text;
  return `model-${createHash('sha256').update(neutral).digest('base64url').slice(0, 22)}`;
}

/** `answer` as written for a prompt carrying `nonce`. */
const forNonce = (answer: Answer, nonce: string | undefined): SamplingResult => ({
  text: answer.nonce && nonce ? answer.text.replaceAll(answer.nonce, nonce) : answer.text,
  model: answer.model,
  truncated: answer.truncated,
});

function readState(raw: unknown, tool: string): RoundsState {
  if (raw === undefined) return { v: STATE_VERSION, tool, round: 0, answers: {} };
  let state: RoundsState;
  try {
    state = JSON.parse(Buffer.from(String(raw), 'base64url').toString('utf8')) as RoundsState;
  } catch {
    throw invalid('requestState is not one this server gave: retry the call without it');
  }
  const wellFormed =
    state?.v === STATE_VERSION &&
    state.tool === tool &&
    Number.isInteger(state.round) &&
    state.round >= 0 &&
    typeof state.answers === 'object' &&
    state.answers !== null &&
    Object.values(state.answers).every(
      (answer) => typeof answer?.text === 'string' && typeof answer.model === 'string' && (answer.nonce === undefined || typeof answer.nonce === 'string'),
    ) &&
    Object.values(state.asked ?? {}).every((nonce) => typeof nonce === 'string');
  if (!wellFormed) throw invalid(`requestState is not one this server gave for ${tool}: retry the call without it`);
  return state;
}

const writeState = (state: RoundsState): string => Buffer.from(JSON.stringify(state), 'utf8').toString('base64url');

/** The model rounds of one tool call (`ctx` its request: requestState and inputResponses are read from it). */
export function modelRounds(ctx: RequestContext, tool: ToolDefinition, limits: ModelLimits): ModelRounds {
  const state = readState(ctx.mcpReq.requestState?.(), tool.name);
  const known = new Map<string, Answer>(Object.entries(state.answers));
  const responses = ctx.mcpReq.inputResponses;
  for (const key of Object.keys(responses ?? {})) {
    const view = inputResponse(responses, key);
    const nonce = state.asked?.[key];
    if (view.kind === 'sampling') known.set(key, { ...samplingAnswer(view.result), ...(nonce ? { nonce } : {}) });
  }
  const used = new Map<string, Answer>();
  const missed = new Map<string, { params: CreateMessageRequestParams; nonce: string | undefined }>();
  const last = state.round >= MAX_ROUNDS;

  const llm = createSamplingLlm(async (request) => {
    const params = samplingParams(request);
    const nonce = nonceIn(`${request.systemPrompt}\n${request.messages.map((m) => m.text).join('\n')}`);
    const key = keyOf(params, nonce);
    const answer = known.get(key);
    if (answer) {
      used.set(key, answer);
      return forNonce(answer, nonce);
    }
    if (last)
      throw new LlmError(`this call has asked the client's model ${MAX_ROUNDS} times, as often as one call may: call ${tool.name} again to go on`, false);
    if (missed.size < MAX_ASKED) missed.set(key, { params, nonce });
    throw new LlmError(WAITING, false);
  }, limits);

  const merged = (result: Record<string, unknown> | undefined): Record<string, unknown> | undefined => {
    if (!result || !tool.rounds) return state.done;
    return state.done ? tool.rounds(state.done, result) : result;
  };

  return {
    llm,
    ask(result) {
      if (missed.size === 0) return undefined;
      const done = merged(result);
      const next: RoundsState = {
        v: STATE_VERSION,
        tool: tool.name,
        round: state.round + 1,
        answers: Object.fromEntries(used),
        asked: Object.fromEntries([...missed].flatMap(([key, { nonce }]) => (nonce ? [[key, nonce]] : []))),
        ...(done ? { done } : {}),
      };
      const requestState = writeState(next);
      if (requestState.length > MAX_STATE_CHARS)
        throw invalid(`the client model's answers in this call outgrew ${MAX_STATE_CHARS / 1024} KiB of requestState: call ${tool.name} again to go on`);
      const inputRequests = Object.fromEntries([...missed].map(([key, { params }]) => [key, inputRequired.createMessage(params)]));
      return inputRequired({ inputRequests, requestState });
    },
    settle(result) {
      const done = merged(result) ?? result;
      return state.round > 0 ? { ...done, model_rounds: state.round + 1 } : done;
    },
  };
}
