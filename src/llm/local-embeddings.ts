import { type EmbeddingsClient, normalised } from './embeddings.js';
import { LlmError } from './types.js';

/**
 * An embedding model run in this process (LIVE_MEM_EMBEDDINGS_LOCAL), behind the same port as an
 * endpoint, for users with none: a sentence encoder from the Hugging Face hub (all-MiniLM-L6-v2,
 * bge-small-en-v1.5…) through transformers.js on onnxruntime's CPU library. The library and its
 * runtime take 300–475 MB, so it is an optional peer dependency, imported only when the setting is
 * set (as the AWS SDK is for S3), and never bundled.
 *
 * Small batches, one forward pass each: a call of the background indexer stays short on a slow CPU
 * (recall-service.ts sends `batchSize` documents a call), and a query, run beside it, waits for no
 * queue. Vectors are mean-pooled over the tokens and of unit length, as sentence-transformers' models
 * are used.
 */
export interface LocalEmbeddingsSettings {
  /** A model id of the hub, "Xenova/all-MiniLM-L6-v2": the folder <dir>/<id>/ with its onnx/ files. */
  model: string;
  /** Where models are looked for; set, nothing is ever downloaded (an offline machine). */
  dir?: string;
  /** Without `dir`: where a model downloaded from the hub is kept (the library's own folder otherwise). */
  cacheDir?: string;
  /** The weights' type: q8 (int8, `onnx/model_quantized.onnx`, the default), fp32, fp16, q4… */
  dtype?: string;
  /** Texts per forward pass (default 8). */
  batchSize?: number;
}

/** An optional peer dependency: a `string`, so neither the type check nor the bundle looks for it (it is imported when the setting is set). */
export const TRANSFORMERS_PACKAGE: string = '@huggingface/transformers';
const DEFAULT_BATCH = 8;

type Extractor = (texts: string[], options: { pooling: 'mean'; normalize: boolean }) => Promise<{ tolist(): number[][] }>;
interface Transformers {
  env: { localModelPath: string; allowRemoteModels: boolean; allowLocalModels: boolean; cacheDir: string | null };
  pipeline(task: 'feature-extraction', model: string, options: { dtype: string; device: string }): Promise<Extractor>;
}

export function createLocalEmbeddings(settings: LocalEmbeddingsSettings): EmbeddingsClient {
  const dtype = settings.dtype ?? 'q8';
  const batchSize = Math.max(1, Math.floor(settings.batchSize ?? DEFAULT_BATCH));
  let loading: Promise<Extractor> | undefined;
  const extractor = (): Promise<Extractor> => {
    loading ??= load(settings, dtype).catch((error: unknown) => {
      loading = undefined; // a later call tries again (a model folder copied in meanwhile)
      throw error;
    });
    return loading;
  };

  return {
    label: `${settings.model} (local, ${dtype})`,
    local: true,
    batchSize,
    async ping() {
      await extractor();
    },
    async embed(texts, signal) {
      const run = await extractor();
      const vectors: Float32Array[] = [];
      for (let start = 0; start < texts.length; start += batchSize) {
        if (signal?.aborted) throw new LlmError('the local embeddings call was aborted', true);
        // An empty text is given a space, as the endpoint adapter does: a text of no token pools nothing.
        const batch = texts.slice(start, start + batchSize).map((text) => (text === '' ? ' ' : text));
        let rows: number[][];
        try {
          rows = (await run(batch, { pooling: 'mean', normalize: true })).tolist();
        } catch (error) {
          throw new LlmError(`the local embedding model failed: ${(error as Error).message}`, false, undefined, { cause: error });
        }
        vectors.push(...rows.map(normalised));
      }
      return vectors;
    },
  };
}

/**
 * The library (say how to install it when missing), then the model's pipeline, from `dir` only when set.
 * The library's `env` is process-wide: a process runs one local model, the one its settings name.
 */
async function load(settings: LocalEmbeddingsSettings, dtype: string): Promise<Extractor> {
  let library: Transformers;
  try {
    library = (await import(TRANSFORMERS_PACKAGE)) as unknown as Transformers;
  } catch (error) {
    const { code, message } = error as { code?: unknown; message?: unknown };
    if (code !== 'ERR_MODULE_NOT_FOUND' || !String(message).includes(TRANSFORMERS_PACKAGE)) throw error;
    throw new LlmError(
      `LIVE_MEM_EMBEDDINGS_LOCAL needs ${TRANSFORMERS_PACKAGE}, which is not installed: add it next to live-mem — ` +
        `\`npm install -g ${TRANSFORMERS_PACKAGE}\` for a global install, \`npm install ${TRANSFORMERS_PACKAGE}\` in a project ` +
        '(offline, on Linux x64, with ONNXRUNTIME_NODE_INSTALL=skip: its install otherwise fetches CUDA libraries live-mem does not use)',
      false,
      undefined,
      { cause: error },
    );
  }
  if (settings.dir) {
    library.env.localModelPath = settings.dir.endsWith('/') ? settings.dir : `${settings.dir}/`;
    library.env.allowLocalModels = true;
    library.env.allowRemoteModels = false;
  } else if (settings.cacheDir) library.env.cacheDir = settings.cacheDir;
  try {
    return await library.pipeline('feature-extraction', settings.model, { dtype, device: 'cpu' });
  } catch (error) {
    const where = settings.dir
      ? ` in ${settings.dir} (LIVE_MEM_EMBEDDINGS_LOCAL_DIR: a folder ${settings.model}/ with config.json, tokenizer.json and onnx/)`
      : '';
    throw new LlmError(`cannot load the local embedding model ${settings.model} (${dtype})${where}: ${(error as Error).message}`, false, undefined, {
      cause: error,
    });
  }
}
