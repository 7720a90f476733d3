/**
 * Writes the tiny embedding model the local-embeddings tests load (fixtures/embeddings/): a model
 * folder as transformers.js reads one from the Hugging Face hub — config.json, tokenizer.json,
 * tokenizer_config.json, onnx/model.onnx (float32) and onnx/model_quantized.onnx (int8, dynamic
 * quantization as the hub's `_quantized` files have it) — with all-MiniLM-L6-v2's architecture (a BERT
 * encoder: embeddings, post-norm layers of self-attention and a GELU feed-forward) shrunk to 2 layers of
 * 32 dimensions, 2 heads, and seeded random weights; and reference.json beside it: the mean-pooled,
 * normalised vectors of a few texts, computed here by a plain JavaScript forward pass of the same
 * network, tokenizer included, so the test checks transformers.js and onnxruntime against numbers
 * computed without them.
 *
 * The ONNX files are written as protobuf by hand (the schema is onnx/onnx.proto: ModelProto, GraphProto,
 * NodeProto, TensorProto, ValueInfoProto), with ONNX's standard operators only (opset 17).
 *
 *   node --import tsx scripts/make-tiny-embedding-model.ts    (rewrites the fixture; the same bytes each run)
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

export const TINY_MODEL_ID = 'live-mem/tiny-minilm';
const OUT = fileURLToPath(new URL(`../fixtures/embeddings/${TINY_MODEL_ID}/`, import.meta.url));

const HIDDEN = 32;
const HEADS = 2;
const HEAD = HIDDEN / HEADS;
const LAYERS = 2;
const FFN = 64;
const POSITIONS = 64;
const EPS = 1e-12;

// ---------------------------------------------------------------------------------------------
// Vocabulary and tokenizer (BERT's: lowercase, split on spaces and punctuation, greedy WordPiece)

const SPECIALS = ['[PAD]', '[UNK]', '[CLS]', '[SEP]', '[MASK]'];
const WORDS = (
  'the a an of to and in is was for on that with as it at by from be this are or we i you he she they ' +
  'car garage where kept stored parked automobile vehicle note memory search database migration auth token ' +
  'deploy build test server client bank invoice payment overdue lunch menu salad painted paint sunrise lake ' +
  'dog pup name adoption agency work progress decision meeting yesterday today tomorrow what who when why how'
).split(' ');
const SUFFIXES = ['##s', '##ing', '##ed', '##ly', '##er', '##tion'];
const LETTERS = 'abcdefghijklmnopqrstuvwxyz0123456789'.split('');
const PUNCTUATION = ".,!?'-:;()[]".split('');
export const VOCAB = [...SPECIALS, ...WORDS, ...SUFFIXES, ...LETTERS, ...LETTERS.map((c) => `##${c}`), ...PUNCTUATION];

const isPunctuation = (c: string) => /[\p{P}\p{S}]/u.test(c);

/** BERT's tokenizer as tokenizer.json describes it, for the plain reference: ids with [CLS] … [SEP]. */
export function tokenize(text: string): number[] {
  const ids = new Map(VOCAB.map((token, id) => [token, id]));
  const normalised = text
    .replace(/[\p{Cc}]/gu, ' ')
    .toLowerCase()
    .normalize('NFD')
    .replace(/\p{Mn}/gu, '');
  const words: string[] = [];
  for (const chunk of normalised.split(/\s+/).filter(Boolean)) {
    let word = '';
    for (const c of chunk) {
      if (isPunctuation(c)) {
        if (word) words.push(word);
        words.push(c);
        word = '';
      } else word += c;
    }
    if (word) words.push(word);
  }
  const out = [ids.get('[CLS]') as number];
  for (const word of words) {
    const pieces: number[] = [];
    let start = 0;
    while (start < word.length) {
      let end = word.length;
      let found: number | undefined;
      while (end > start) {
        found = ids.get(`${start > 0 ? '##' : ''}${word.slice(start, end)}`);
        if (found !== undefined) break;
        end--;
      }
      if (found === undefined) {
        pieces.length = 0;
        pieces.push(ids.get('[UNK]') as number);
        break;
      }
      pieces.push(found);
      start = end;
    }
    out.push(...pieces);
  }
  out.push(ids.get('[SEP]') as number);
  return out.slice(0, POSITIONS);
}

function tokenizerJson(): unknown {
  const special = (id: number) => ({ id, content: SPECIALS[id], single_word: false, lstrip: false, rstrip: false, normalized: false, special: true });
  return {
    version: '1.0',
    truncation: null,
    padding: null,
    added_tokens: SPECIALS.map((_, id) => special(id)),
    normalizer: { type: 'BertNormalizer', clean_text: true, handle_chinese_chars: true, strip_accents: null, lowercase: true },
    pre_tokenizer: { type: 'BertPreTokenizer' },
    post_processor: {
      type: 'TemplateProcessing',
      single: [{ SpecialToken: { id: '[CLS]', type_id: 0 } }, { Sequence: { id: 'A', type_id: 0 } }, { SpecialToken: { id: '[SEP]', type_id: 0 } }],
      pair: [
        { SpecialToken: { id: '[CLS]', type_id: 0 } },
        { Sequence: { id: 'A', type_id: 0 } },
        { SpecialToken: { id: '[SEP]', type_id: 0 } },
        { Sequence: { id: 'B', type_id: 1 } },
        { SpecialToken: { id: '[SEP]', type_id: 1 } },
      ],
      special_tokens: {
        '[CLS]': { id: '[CLS]', ids: [2], tokens: ['[CLS]'] },
        '[SEP]': { id: '[SEP]', ids: [3], tokens: ['[SEP]'] },
      },
    },
    decoder: { type: 'WordPiece', prefix: '##', cleanup: true },
    model: {
      type: 'WordPiece',
      unk_token: '[UNK]',
      continuing_subword_prefix: '##',
      max_input_chars_per_word: 100,
      vocab: Object.fromEntries(VOCAB.map((token, id) => [token, id])),
    },
  };
}

// ---------------------------------------------------------------------------------------------
// Weights: seeded, so the fixture is the same bytes at every run

function mulberry32(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

interface Tensor {
  dims: number[];
  data: Float32Array;
}

interface Layer {
  q: Tensor;
  qb: Tensor;
  k: Tensor;
  kb: Tensor;
  v: Tensor;
  vb: Tensor;
  o: Tensor;
  ob: Tensor;
  ln1g: Tensor;
  ln1b: Tensor;
  f1: Tensor;
  f1b: Tensor;
  f2: Tensor;
  f2b: Tensor;
  ln2g: Tensor;
  ln2b: Tensor;
}

interface Weights {
  words: Tensor;
  positions: Tensor;
  types: Tensor;
  lng: Tensor;
  lnb: Tensor;
  layers: Layer[];
}

function makeWeights(): Weights {
  const random = mulberry32(30);
  const tensor = (dims: number[], spread: number, centre = 0): Tensor => {
    const data = new Float32Array(dims.reduce((a, b) => a * b, 1));
    for (let i = 0; i < data.length; i++) data[i] = centre + (random() * 2 - 1) * spread;
    return { dims, data };
  };
  const matrix = (rows: number, cols: number) => tensor([rows, cols], Math.sqrt(3 / rows));
  return {
    words: tensor([VOCAB.length, HIDDEN], 1),
    positions: tensor([POSITIONS, HIDDEN], 0.2),
    types: tensor([2, HIDDEN], 0.2),
    lng: tensor([HIDDEN], 0.1, 1),
    lnb: tensor([HIDDEN], 0.1),
    layers: Array.from({ length: LAYERS }, () => ({
      q: matrix(HIDDEN, HIDDEN),
      qb: tensor([HIDDEN], 0.1),
      k: matrix(HIDDEN, HIDDEN),
      kb: tensor([HIDDEN], 0.1),
      v: matrix(HIDDEN, HIDDEN),
      vb: tensor([HIDDEN], 0.1),
      o: matrix(HIDDEN, HIDDEN),
      ob: tensor([HIDDEN], 0.1),
      ln1g: tensor([HIDDEN], 0.1, 1),
      ln1b: tensor([HIDDEN], 0.1),
      f1: matrix(HIDDEN, FFN),
      f1b: tensor([FFN], 0.1),
      f2: matrix(FFN, HIDDEN),
      f2b: tensor([HIDDEN], 0.1),
      ln2g: tensor([HIDDEN], 0.1, 1),
      ln2b: tensor([HIDDEN], 0.1),
    })),
  };
}

/** Symmetric per-tensor int8, as dynamic quantization stores a weight: w ≈ scale × q, zero point 0. */
function quantize(weight: Tensor): { q: Int8Array; scale: number } {
  let max = 0;
  for (const value of weight.data) max = Math.max(max, Math.abs(value));
  const scale = Math.fround(max / 127);
  return { q: Int8Array.from(weight.data, (value) => Math.max(-127, Math.min(127, Math.round(value / scale)))), scale };
}

// ---------------------------------------------------------------------------------------------
// The plain forward pass: one text (no padding), float32 storage, the int8 path as ONNX defines it

const f = Math.fround;

/** Round half to even, as ONNX's quantizers round. */
const roundEven = (x: number) => {
  const r = Math.round(x);
  return Math.abs(x % 1) === 0.5 && r % 2 !== 0 ? r - 1 : r;
};

/** rows × n times n × m (a weight), the ONNX way for `quantized`: DynamicQuantizeLinear on x, MatMulInteger, scales. */
function matmul(x: Float32Array, rows: number, w: Tensor, quantized: boolean): Float32Array {
  const [n, m] = w.dims as [number, number];
  const out = new Float32Array(rows * m);
  if (!quantized) {
    for (let r = 0; r < rows; r++)
      for (let j = 0; j < m; j++) {
        let sum = 0;
        for (let i = 0; i < n; i++) sum += (x[r * n + i] as number) * (w.data[i * m + j] as number);
        out[r * m + j] = sum;
      }
    return out;
  }
  const { q, scale: wScale } = quantize(w);
  let low = 0;
  let high = 0;
  for (const value of x) {
    low = Math.min(low, value);
    high = Math.max(high, value);
  }
  const xScale = f((high - low) / 255);
  const zero = Math.max(0, Math.min(255, roundEven(f(-low / xScale))));
  const xq = Int32Array.from(x, (value) => Math.max(0, Math.min(255, roundEven(f(value / xScale)) + zero)) - zero);
  const scale = f(xScale * wScale);
  for (let r = 0; r < rows; r++)
    for (let j = 0; j < m; j++) {
      let sum = 0;
      for (let i = 0; i < n; i++) sum += (xq[r * n + i] as number) * (q[i * m + j] as number);
      out[r * m + j] = f(sum) * scale;
    }
  return out;
}

function addBias(x: Float32Array, bias: Tensor): void {
  const m = bias.data.length;
  for (let i = 0; i < x.length; i++) x[i] = (x[i] as number) + (bias.data[i % m] as number);
}

function layerNorm(x: Float32Array, g: Tensor, b: Tensor): Float32Array {
  const out = new Float32Array(x.length);
  for (let r = 0; r < x.length / HIDDEN; r++) {
    const row = x.subarray(r * HIDDEN, (r + 1) * HIDDEN);
    const mean = row.reduce((a, v) => a + v, 0) / HIDDEN;
    const variance = row.reduce((a, v) => a + (v - mean) ** 2, 0) / HIDDEN;
    const inv = 1 / Math.sqrt(variance + EPS);
    for (let i = 0; i < HIDDEN; i++) out[r * HIDDEN + i] = ((row[i] as number) - mean) * inv * (g.data[i] as number) + (b.data[i] as number);
  }
  return out;
}

/** erf: its Taylor series up to 3 (converges to double precision there), Abramowitz & Stegun 7.1.26 past it (erf is 1 − 2e-5 there). */
function erf(x: number): number {
  const a = Math.abs(x);
  let y: number;
  if (a <= 3) {
    let term = a;
    let sum = a;
    for (let n = 1; n < 200 && Math.abs(term) > 1e-17; n++) {
      term *= (-a * a) / n;
      sum += term / (2 * n + 1);
    }
    y = (2 / Math.sqrt(Math.PI)) * sum;
  } else {
    const t = 1 / (1 + 0.3275911 * a);
    y = 1 - ((((1.061405429 * t - 1.453152027) * t + 1.421413741) * t - 0.284496736) * t + 0.254829592) * t * Math.exp(-a * a);
  }
  return x < 0 ? -y : y;
}

export function forward(weights: Weights, ids: readonly number[], quantized: boolean): number[] {
  const seq = ids.length;
  let x: Float32Array = new Float32Array(seq * HIDDEN);
  for (let s = 0; s < seq; s++)
    for (let i = 0; i < HIDDEN; i++)
      x[s * HIDDEN + i] =
        f((weights.words.data[(ids[s] as number) * HIDDEN + i] as number) + (weights.positions.data[s * HIDDEN + i] as number)) +
        (weights.types.data[i] as number);
  x = layerNorm(x, weights.lng, weights.lnb);
  for (const layer of weights.layers) {
    const project = (w: Tensor, b: Tensor) => {
      const out = matmul(x, seq, w, quantized);
      addBias(out, b);
      return out;
    };
    const [q, k, v] = [project(layer.q, layer.qb), project(layer.k, layer.kb), project(layer.v, layer.vb)];
    const context = new Float32Array(seq * HIDDEN);
    for (let h = 0; h < HEADS; h++)
      for (let s = 0; s < seq; s++) {
        const scores = new Float32Array(seq);
        for (let t = 0; t < seq; t++) {
          let dot = 0;
          for (let d = 0; d < HEAD; d++) dot += (q[s * HIDDEN + h * HEAD + d] as number) * (k[t * HIDDEN + h * HEAD + d] as number);
          scores[t] = f(dot) * f(1 / Math.sqrt(HEAD));
        }
        const top = Math.max(...scores);
        const exp = scores.map((score) => Math.exp(score - top));
        const total = exp.reduce((a, b) => a + b, 0);
        for (let d = 0; d < HEAD; d++) {
          let sum = 0;
          for (let t = 0; t < seq; t++) sum += ((exp[t] as number) / total) * (v[t * HIDDEN + h * HEAD + d] as number);
          context[s * HIDDEN + h * HEAD + d] = sum;
        }
      }
    const attended = matmul(context, seq, layer.o, quantized);
    addBias(attended, layer.ob);
    for (let i = 0; i < attended.length; i++) attended[i] = (attended[i] as number) + (x[i] as number);
    x = layerNorm(attended, layer.ln1g, layer.ln1b);
    const inner = matmul(x, seq, layer.f1, quantized);
    addBias(inner, layer.f1b);
    for (let i = 0; i < inner.length; i++) {
      const value = inner[i] as number;
      inner[i] = 0.5 * value * (1 + erf(value / Math.SQRT2));
    }
    const out = matmul(inner, seq, layer.f2, quantized);
    addBias(out, layer.f2b);
    for (let i = 0; i < out.length; i++) out[i] = (out[i] as number) + (x[i] as number);
    x = layerNorm(out, layer.ln2g, layer.ln2b);
  }
  // Mean pooling over the tokens (no padding: every one), then unit length: what the pipeline returns.
  const pooled = new Array<number>(HIDDEN).fill(0);
  for (let s = 0; s < seq; s++) for (let i = 0; i < HIDDEN; i++) pooled[i] = (pooled[i] as number) + (x[s * HIDDEN + i] as number) / seq;
  const norm = Math.sqrt(pooled.reduce((a, v) => a + v * v, 0));
  return pooled.map((value) => value / norm);
}

// ---------------------------------------------------------------------------------------------
// Protobuf, the few wire types ONNX needs

type Bytes = number[];
const varint = (value: number | bigint): Bytes => {
  let v = BigInt.asUintN(64, BigInt(value));
  const out: Bytes = [];
  do {
    let byte = Number(v & 0x7fn);
    v >>= 7n;
    if (v > 0n) byte |= 0x80;
    out.push(byte);
  } while (v > 0n);
  return out;
};
const key = (field: number, wire: number) => varint((field << 3) | wire);
const int = (field: number, value: number | bigint): Bytes => [...key(field, 0), ...varint(value)];
const bytes = (field: number, data: Bytes | Uint8Array): Bytes => [...key(field, 2), ...varint(data.length), ...data];
const str = (field: number, text: string): Bytes => bytes(field, [...Buffer.from(text, 'utf8')]);
const float32 = (field: number, value: number): Bytes => {
  const buffer = Buffer.alloc(4);
  buffer.writeFloatLE(value);
  return [...key(field, 5), ...buffer];
};

const DT = { FLOAT: 1, UINT8: 2, INT8: 3, INT32: 6, INT64: 7 } as const;

/** TensorProto: dims 1, data_type 2, name 8, raw_data 9 (little-endian). */
function tensorProto(name: string, dataType: number, dims: number[], raw: Uint8Array): Bytes {
  return [...dims.flatMap((d) => int(1, d)), ...int(2, dataType), ...str(8, name), ...bytes(9, raw)];
}
const floatRaw = (data: Float32Array) => new Uint8Array(Buffer.from(Float32Array.from(data).buffer));
const int64Raw = (values: number[]) => new Uint8Array(Buffer.from(BigInt64Array.from(values.map(BigInt)).buffer));

type Attribute = { name: string } & ({ f: number } | { i: number } | { ints: number[] });
/** AttributeProto: name 1, f 2, i 3, ints 8, type 20 (FLOAT 1, INT 2, INTS 7). */
function attributeProto(attribute: Attribute): Bytes {
  const head = str(1, attribute.name);
  if ('f' in attribute) return [...head, ...float32(2, attribute.f), ...int(20, 1)];
  if ('i' in attribute) return [...head, ...int(3, attribute.i), ...int(20, 2)];
  return [...head, ...attribute.ints.flatMap((v) => int(8, v)), ...int(20, 7)];
}

/** ValueInfoProto of a tensor: name 1, type 2 → TypeProto.tensor_type 1 → elem_type 1, shape 2 → dim 1 (dim_value 1 | dim_param 2). */
function valueInfo(name: string, elemType: number, shape: Array<number | string>): Bytes {
  const dims = shape.flatMap((d) => bytes(1, typeof d === 'number' ? int(1, d) : str(2, d)));
  return [...str(1, name), ...bytes(2, bytes(1, [...int(1, elemType), ...bytes(2, dims)]))];
}

class Graph {
  readonly nodes: Bytes[] = [];
  readonly initializers: Bytes[] = [];
  private count = 0;

  /** A node: NodeProto input 1, output 2, name 3, op_type 4, attribute 5. Returns its first output's name. */
  op(type: string, inputs: string[], attributes: Attribute[] = [], outputs = 1): string {
    const names = Array.from({ length: outputs }, (_, i) => `${type.toLowerCase()}_${this.count}${i > 0 ? `_${i}` : ''}`);
    this.nodes.push([
      ...inputs.flatMap((input) => str(1, input)),
      ...names.flatMap((output) => str(2, output)),
      ...str(3, `n${this.count}`),
      ...str(4, type),
      ...attributes.flatMap((a) => bytes(5, attributeProto(a))),
    ]);
    this.count++;
    return names[0] as string;
  }

  weight(name: string, tensor: Tensor): string {
    this.initializers.push(tensorProto(name, DT.FLOAT, tensor.dims, floatRaw(tensor.data)));
    return name;
  }

  constant(name: string, dataType: number, dims: number[], raw: Uint8Array): string {
    this.initializers.push(tensorProto(name, dataType, dims, raw));
    return name;
  }
}

function onnxModel(weights: Weights, quantized: boolean): Uint8Array {
  const g = new Graph();
  const one64 = g.constant('one_i64', DT.INT64, [], int64Raw([1]));
  const zero64 = g.constant('zero_i64', DT.INT64, [], int64Raw([0]));
  const oneF = g.constant('one_f', DT.FLOAT, [], floatRaw(Float32Array.of(1)));
  const half = g.constant('half_f', DT.FLOAT, [], floatRaw(Float32Array.of(0.5)));
  const sqrt2 = g.constant('sqrt2_f', DT.FLOAT, [], floatRaw(Float32Array.of(Math.SQRT2)));
  const masked = g.constant('masked_f', DT.FLOAT, [], floatRaw(Float32Array.of(-10000)));
  const attScale = g.constant('att_scale', DT.FLOAT, [], floatRaw(Float32Array.of(1 / Math.sqrt(HEAD))));
  const heads = g.constant('heads_shape', DT.INT64, [4], int64Raw([0, 0, HEADS, HEAD]));
  const merged = g.constant('merged_shape', DT.INT64, [3], int64Raw([0, 0, HIDDEN]));
  const maskAxes = g.constant('mask_axes', DT.INT64, [2], int64Raw([1, 2]));
  const int8Zero = g.constant('w_zero', DT.INT8, [], new Uint8Array([0]));

  let weightCount = 0;
  /** x · w: MatMul, or (int8) DynamicQuantizeLinear → MatMulInteger → Cast → × (x scale × w scale). */
  const matmul = (x: string, w: Tensor): string => {
    const name = `w${weightCount++}`;
    if (!quantized) return g.op('MatMul', [x, g.weight(name, w)]);
    const { q, scale } = quantize(w);
    g.constant(`${name}_q`, DT.INT8, w.dims, new Uint8Array(q.buffer));
    g.constant(`${name}_scale`, DT.FLOAT, [], floatRaw(Float32Array.of(scale)));
    const xq = g.op('DynamicQuantizeLinear', [x], [], 3);
    const [xScale, xZero] = [`${xq}_1`, `${xq}_2`];
    const product = g.op('MatMulInteger', [xq, `${name}_q`, xZero, int8Zero]);
    const asFloat = g.op('Cast', [product], [{ name: 'to', i: DT.FLOAT }]);
    return g.op('Mul', [asFloat, g.op('Mul', [xScale, `${name}_scale`])]);
  };
  const linear = (x: string, w: Tensor, b: Tensor) => g.op('Add', [matmul(x, w), g.weight(`b${weightCount}`, b)]);
  let norms = 0;
  const layerNorm = (x: string, gain: Tensor, bias: Tensor) => {
    const n = norms++;
    return g.op(
      'LayerNormalization',
      [x, g.weight(`ln${n}_g`, gain), g.weight(`ln${n}_b`, bias)],
      [
        { name: 'axis', i: -1 },
        { name: 'epsilon', f: EPS },
      ],
    );
  };

  const words = g.op('Gather', [g.weight('word_embeddings', weights.words), 'input_ids']);
  const length = g.op('Gather', [g.op('Shape', ['input_ids']), one64]);
  const positions = g.op('Gather', [g.weight('position_embeddings', weights.positions), g.op('Range', [zero64, length, one64])]);
  const types = g.op('Gather', [g.weight('token_type_embeddings', weights.types), 'token_type_ids']);
  let x = layerNorm(g.op('Add', [g.op('Add', [words, positions]), types]), weights.lng, weights.lnb);
  const mask = g.op('Unsqueeze', [g.op('Cast', ['attention_mask'], [{ name: 'to', i: DT.FLOAT }]), maskAxes]);
  const maskBias = g.op('Mul', [g.op('Sub', [oneF, mask]), masked]);

  for (const layer of weights.layers) {
    const split = (t: string, perm: number[]) => g.op('Transpose', [g.op('Reshape', [t, heads])], [{ name: 'perm', ints: perm }]);
    const q = split(linear(x, layer.q, layer.qb), [0, 2, 1, 3]);
    const k = split(linear(x, layer.k, layer.kb), [0, 2, 3, 1]);
    const v = split(linear(x, layer.v, layer.vb), [0, 2, 1, 3]);
    const scores = g.op('Add', [g.op('Mul', [g.op('MatMul', [q, k]), attScale]), maskBias]);
    const probs = g.op('Softmax', [scores], [{ name: 'axis', i: -1 }]);
    const context = g.op('Reshape', [g.op('Transpose', [g.op('MatMul', [probs, v])], [{ name: 'perm', ints: [0, 2, 1, 3] }]), merged]);
    x = layerNorm(g.op('Add', [linear(context, layer.o, layer.ob), x]), layer.ln1g, layer.ln1b);
    const inner = linear(x, layer.f1, layer.f1b);
    const gelu = g.op('Mul', [g.op('Mul', [inner, g.op('Add', [g.op('Erf', [g.op('Div', [inner, sqrt2])]), oneF])]), half]);
    x = layerNorm(g.op('Add', [linear(gelu, layer.f2, layer.f2b), x]), layer.ln2g, layer.ln2b);
  }
  g.nodes.push([...str(1, x), ...str(2, 'last_hidden_state'), ...str(3, 'output'), ...str(4, 'Identity')]);

  const graph = [
    ...g.nodes.flatMap((node) => bytes(1, node)),
    ...str(2, 'tiny-minilm'),
    ...g.initializers.flatMap((tensor) => bytes(5, tensor)),
    ...['input_ids', 'attention_mask', 'token_type_ids'].flatMap((name) => bytes(11, valueInfo(name, DT.INT64, ['batch_size', 'sequence_length']))),
    ...bytes(12, valueInfo('last_hidden_state', DT.FLOAT, ['batch_size', 'sequence_length', HIDDEN])),
  ];
  // ModelProto: ir_version 1, producer_name 2, graph 7, opset_import 8 (domain 1, version 2).
  return Uint8Array.from([
    ...int(1, 8),
    ...str(2, 'live-mem scripts/make-tiny-embedding-model.ts'),
    ...bytes(7, graph),
    ...bytes(8, [...str(1, ''), ...int(2, 17)]),
  ]);
}

// ---------------------------------------------------------------------------------------------

/** Texts the test embeds: known words, a word spelt in pieces, an unknown character, punctuation, accents. */
export const REFERENCE_TEXTS = [
  'where is the car kept',
  'The automobile was parked in the garage yesterday.',
  'Deploying the build: tests passed!',
  'zebra café ☃ invoice',
  'what',
];

if (import.meta.url === `file://${process.argv[1]}`) {
  const weights = makeWeights();
  mkdirSync(`${OUT}onnx`, { recursive: true });
  const config = {
    _comment: 'A tiny random BERT with all-MiniLM-L6-v2 architecture, written by scripts/make-tiny-embedding-model.ts for the tests',
    architectures: ['BertModel'],
    model_type: 'bert',
    hidden_size: HIDDEN,
    num_hidden_layers: LAYERS,
    num_attention_heads: HEADS,
    intermediate_size: FFN,
    hidden_act: 'gelu',
    max_position_embeddings: POSITIONS,
    type_vocab_size: 2,
    vocab_size: VOCAB.length,
    layer_norm_eps: EPS,
    pad_token_id: 0,
  };
  writeFileSync(`${OUT}config.json`, `${JSON.stringify(config, null, 2)}\n`);
  writeFileSync(`${OUT}tokenizer.json`, `${JSON.stringify(tokenizerJson())}\n`);
  const tokenizerConfig = {
    tokenizer_class: 'BertTokenizer',
    do_lower_case: true,
    model_max_length: POSITIONS,
    cls_token: '[CLS]',
    sep_token: '[SEP]',
    pad_token: '[PAD]',
    unk_token: '[UNK]',
    mask_token: '[MASK]',
  };
  writeFileSync(`${OUT}tokenizer_config.json`, `${JSON.stringify(tokenizerConfig, null, 2)}\n`);
  writeFileSync(`${OUT}onnx/model.onnx`, onnxModel(weights, false));
  writeFileSync(`${OUT}onnx/model_quantized.onnx`, onnxModel(weights, true));
  const round = (vector: number[]) => vector.map((value) => Math.round(value * 1e7) / 1e7);
  const reference = {
    _comment: 'Vectors of the texts computed by the plain forward pass of scripts/make-tiny-embedding-model.ts (mean pooling, unit length)',
    dims: HIDDEN,
    texts: REFERENCE_TEXTS.map((text) => {
      const ids = tokenize(text);
      return { text, ids, fp32: round(forward(weights, ids, false)), q8: round(forward(weights, ids, true)) };
    }),
  };
  writeFileSync(`${OUT}reference.json`, `${JSON.stringify(reference, null, 1)}\n`);
  process.stdout.write(`wrote ${OUT}\n`);
}
