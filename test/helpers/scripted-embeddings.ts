/**
 * A scripted OpenAI-compatible embeddings server on 127.0.0.1: real HTTP, so the real `openai`
 * client is in the path. Its vectors are a hashed bag of words — each lowercased word adds 1 to one
 * of `dims` buckets — so texts sharing words are close and tests can reason about neighbours; a
 * synonym table maps words onto others (`{ car: 'automobile' }`) to make different words close.
 * Vectors are returned unnormalised on purpose: normalising is the client's job.
 */
import { createServer, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createOpenAiEmbeddings, type EmbeddingsClient } from '../../src/llm/embeddings.js';

export interface ScriptedEmbeddingsOptions {
  dims?: number;
  /** Answer the first N requests with `failStatus` instead of vectors. */
  failFirst?: number;
  /** Answer these requests (numbered from 1) with `failStatus`, e.g. to fail a later batch. */
  failOn?: number[];
  /** Default 500. */
  failStatus?: number;
  /** Word → the word it is counted as. */
  synonyms?: Record<string, string>;
}

export interface RecordedEmbeddingsRequest {
  model: string;
  inputCount: number;
  input: string[];
  encodingFormat: string | undefined;
}

export interface ScriptedEmbeddings {
  url: string;
  requests: RecordedEmbeddingsRequest[];
  /** The raw (unnormalised) vector this server answers for a text. */
  vectorOf(text: string): number[];
  /** A client of the real adapter for this server. */
  client(options?: { batchSize?: number; model?: string }): EmbeddingsClient;
  close(): Promise<void>;
}

export async function startScriptedEmbeddings(options: ScriptedEmbeddingsOptions = {}): Promise<ScriptedEmbeddings> {
  const dims = options.dims ?? 64;
  const requests: RecordedEmbeddingsRequest[] = [];
  const vectorOf = (text: string): number[] => {
    const vector = new Array<number>(dims).fill(0);
    for (const word of text.toLowerCase().match(/[\p{L}\p{N}]+/gu) ?? []) {
      const bucket = fnv1a(options.synonyms?.[word] ?? word) % dims;
      vector[bucket] = (vector[bucket] ?? 0) + 1;
    }
    return vector;
  };

  const answer = (body: string, res: ServerResponse): void => {
    const request = JSON.parse(body) as { model: string; input: string | string[]; encoding_format?: string };
    const input = typeof request.input === 'string' ? [request.input] : request.input;
    requests.push({ model: request.model, inputCount: input.length, input, encodingFormat: request.encoding_format });
    if (requests.length <= (options.failFirst ?? 0) || options.failOn?.includes(requests.length)) {
      error(res, options.failStatus ?? 500, `scripted failure ${requests.length}`);
      return;
    }
    if (input.some((text) => text === '')) {
      error(res, 400, "'$.input' is invalid: an input cannot be an empty string");
      return;
    }
    const data = input.map((text, index) => {
      const vector = vectorOf(text);
      const embedding = request.encoding_format === 'base64' ? Buffer.from(Float32Array.from(vector).buffer).toString('base64') : vector;
      return { object: 'embedding', index, embedding };
    });
    const tokens = input.reduce((sum, text) => sum + Math.ceil(text.length / 4), 0);
    res
      .writeHead(200, { 'content-type': 'application/json' })
      .end(JSON.stringify({ object: 'list', model: request.model, data, usage: { prompt_tokens: tokens, total_tokens: tokens } }));
  };

  const server: Server = createServer((req, res) => {
    let body = '';
    req.on('data', (chunk: Buffer) => (body += chunk.toString()));
    req.on('end', () => {
      if (req.method !== 'POST' || !req.url?.endsWith('/embeddings')) return error(res, 404, 'not found');
      answer(body, res);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`;
  return {
    url,
    requests,
    vectorOf,
    client: (clientOptions = {}) =>
      createOpenAiEmbeddings({
        baseUrl: url,
        apiKey: 'test-key',
        model: clientOptions.model ?? 'scripted-embed',
        ...(clientOptions.batchSize ? { batchSize: clientOptions.batchSize } : {}),
      }),
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

function error(res: ServerResponse, status: number, message: string): void {
  res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify({ error: { message, type: 'scripted' } }));
}

/** 32-bit FNV-1a: stable across runs and platforms, so a word always lands in the same bucket. */
function fnv1a(text: string): number {
  let hash = 0x811c9dc5;
  for (const byte of Buffer.from(text, 'utf8')) hash = Math.imul(hash ^ byte, 0x01000193) >>> 0;
  return hash;
}
