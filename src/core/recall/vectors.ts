import { createHash } from 'node:crypto';
import { endianness } from 'node:os';

/**
 * An in-memory vector index for semantic recall: exact (brute-force) cosine search over one
 * contiguous float32 matrix. At live-mem's scale (up to ~100k documents) this beats an approximate
 * index on write speed, memory and simplicity, and never misses a neighbour.
 *
 * Contract:
 * - All vectors of a store have one dimension, fixed by the first `set` (or `dims`), even once every
 *   vector is deleted; another is a `VectorDimensionError`, for `set` and `search` alike (another
 *   model answers in another space: the caller rebuilds rather than mixes).
 * - Vectors are stored normalised, so a score is the cosine similarity, in [-1, 1]; `get` returns a
 *   copy of the stored (normalised) vector.
 * - `set` of an id present replaces it; `delete` of a missing id is a no-op. Ids cannot hold "\n".
 * - `serialize` returns a self-contained buffer; `loadVectorStore` of it answers every search the
 *   same, and throws `CorruptVectorsError` on any buffer it did not write (derived data is rebuilt,
 *   never trusted).
 */
export interface VectorHit {
  id: string;
  score: number;
}

export interface VectorSearchOptions {
  /** Most hits returned, best first; equal scores by id, so a reloaded store answers the same. */
  limit: number;
  /** False drops the id; asked only of vectors that score high enough to enter the results. */
  filter?: (id: string) => boolean;
}

export interface VectorStore {
  /** The dimension of the vectors, or 0 while none was set. */
  readonly dims: number;
  readonly size: number;
  set(id: string, vector: Float32Array): void;
  get(id: string): Float32Array | undefined;
  has(id: string): boolean;
  delete(id: string): void;
  ids(): IterableIterator<string>;
  search(query: Float32Array, options: VectorSearchOptions): VectorHit[];
  serialize(): Buffer;
  /** Memory held, in bytes: the kernel's whole memory (rows and scores) plus a row slot and a Map entry per id. */
  bytes(): number;
}

/** A buffer that is not a whole vector store written by this version: rebuild the vectors. */
export class CorruptVectorsError extends Error {
  override readonly name = 'CorruptVectorsError';
}

export class VectorDimensionError extends Error {
  override readonly name = 'VectorDimensionError';
  constructor(
    readonly expected: number,
    readonly actual: number,
  ) {
    super(`a vector of ${actual} dimensions does not fit a store of ${expected}-dimension vectors`);
  }
}

/**
 * Frame, little-endian: "LMVS", u32 version, u32 dims, u32 count, u32 byte length of the ids, the
 * ids (UTF-8, joined by "\n"), zero padding to a multiple of 4, the count × dims float32 matrix,
 * then the sha256 of everything before it (a bit flip anywhere is caught, not searched).
 */
const MAGIC = Buffer.from('LMVS');
const VERSION = 1;
const HEADER_BYTES = 20;
const CHECKSUM_BYTES = 32;

export function createVectorStore(options: { dims?: number } = {}): VectorStore {
  if (options.dims !== undefined && !(Number.isInteger(options.dims) && options.dims > 0))
    throw new Error(`dims must be a positive integer, got ${options.dims}`);
  return makeStore(options.dims ?? 0, [], Buffer.alloc(0));
}

export function loadVectorStore(buffer: Buffer): VectorStore {
  if (buffer.length < HEADER_BYTES + CHECKSUM_BYTES) throw new CorruptVectorsError('vector store buffer is truncated');
  if (!buffer.subarray(0, 4).equals(MAGIC)) throw new CorruptVectorsError('not a live-mem vector store');
  const version = buffer.readUInt32LE(4);
  if (version !== VERSION) throw new CorruptVectorsError(`vector store version ${version} is not ${VERSION}`);
  const dims = buffer.readUInt32LE(8);
  const count = buffer.readUInt32LE(12);
  const idBytes = buffer.readUInt32LE(16);
  const matrixStart = HEADER_BYTES + align4(idBytes);
  const end = matrixStart + count * dims * 4;
  if (end + CHECKSUM_BYTES !== buffer.length) throw new CorruptVectorsError('vector store buffer is truncated or has trailing bytes');
  if (!createHash('sha256').update(buffer.subarray(0, end)).digest().equals(buffer.subarray(end)))
    throw new CorruptVectorsError('vector store checksum mismatch');
  if (count > 0 && dims === 0) throw new CorruptVectorsError('vector store has vectors of no dimension');
  const ids =
    count === 0
      ? []
      : buffer
          .subarray(HEADER_BYTES, HEADER_BYTES + idBytes)
          .toString('utf8')
          .split('\n');
  if (ids.length !== count || new Set(ids).size !== count) throw new CorruptVectorsError('vector store ids do not match its count');
  return makeStore(dims, ids, buffer.subarray(matrixStart, end));
}

/**
 * The store's rows live in the kernel's memory: the query at float 0, row r at stride × (r + 1),
 * and the scores of a search just past the last row. A row is `stride` floats (dims rounded up to
 * 8, zero-padded) for the kernel's two 4-lane accumulators. A delete moves the last row into the
 * hole, so the rows stay dense and a search reads one block of memory.
 */
function makeStore(initialDims: number, rowIds: string[], matrixBytes: Buffer): VectorStore {
  const kernel = createKernel();
  let dims = initialDims;
  let stride = Math.ceil(dims / 8) * 8;
  const rowOf = new Map<string, number>(rowIds.map((id, row) => [id, row]));
  const rowStart = (row: number) => stride * (row + 1);

  kernel.reserve(rowStart(rowIds.length) + rowIds.length);
  copyRowsIn(kernel.floats(), matrixBytes, rowIds.length, dims, stride);

  const checkDims = (vector: Float32Array): void => {
    if (vector.length !== dims) throw new VectorDimensionError(dims, vector.length);
  };

  return {
    get dims() {
      return dims;
    },
    get size() {
      return rowIds.length;
    },
    bytes() {
      // The ids' strings are the text index's (counted there); 8 bytes a slot, 40 a Map entry (bm25.ts).
      return kernel.floats().byteLength + rowIds.length * (8 + 40);
    },
    set(id, vector) {
      if (id.includes('\n')) throw new Error(`a vector id cannot contain a newline: ${JSON.stringify(id)}`);
      if (vector.length === 0) throw new Error('a vector needs at least one dimension');
      const scale = inverseNorm(vector); // checked before anything changes
      if (dims === 0) {
        dims = vector.length;
        stride = Math.ceil(dims / 8) * 8;
      }
      checkDims(vector);
      let row = rowOf.get(id);
      if (row === undefined) {
        row = rowIds.length;
        kernel.reserve(rowStart(row + 1) + row + 1);
        rowIds.push(id);
        rowOf.set(id, row);
      }
      writeScaled(kernel.floats(), rowStart(row), vector, scale);
    },
    get(id) {
      const row = rowOf.get(id);
      return row === undefined ? undefined : kernel.floats().slice(rowStart(row), rowStart(row) + dims);
    },
    has: (id) => rowOf.has(id),
    delete(id) {
      const row = rowOf.get(id);
      if (row === undefined) return;
      const last = rowIds.length - 1;
      const lastId = rowIds[last] as string;
      if (row !== last) {
        kernel.floats().copyWithin(rowStart(row), rowStart(last), rowStart(last + 1));
        rowIds[row] = lastId;
        rowOf.set(lastId, row);
      }
      rowIds.pop();
      rowOf.delete(id);
    },
    ids: () => rowOf.keys(),
    search(query, options) {
      if (rowIds.length === 0 || options.limit <= 0) return [];
      checkDims(query);
      writeScaled(kernel.floats(), 0, query, inverseNorm(query));
      const out = rowStart(rowIds.length);
      kernel.scores(rowStart(0), 0, rowIds.length, stride, out);
      return topK(kernel.floats().subarray(out, out + rowIds.length), rowIds, Math.floor(options.limit), options.filter);
    },
    serialize() {
      const ids = Buffer.from(rowIds.join('\n'), 'utf8');
      const header = Buffer.alloc(HEADER_BYTES + align4(ids.length));
      MAGIC.copy(header, 0);
      header.writeUInt32LE(VERSION, 4);
      header.writeUInt32LE(dims, 8);
      header.writeUInt32LE(rowIds.length, 12);
      header.writeUInt32LE(ids.length, 16);
      ids.copy(header, HEADER_BYTES);
      const floats = floatBytes(compactRows(kernel.floats(), rowIds.length, dims, stride));
      const checksum = createHash('sha256').update(header).update(floats).digest();
      return Buffer.concat([header, floats, checksum]);
    },
  };
}

/** The rows without their padding (a view, not a copy, when there is none). */
function compactRows(floats: Float32Array, rows: number, dims: number, stride: number): Float32Array {
  if (dims === stride) return floats.subarray(stride, stride * (rows + 1));
  const compact = new Float32Array(rows * dims);
  for (let row = 0; row < rows; row++) compact.set(floats.subarray(stride * (row + 1), stride * (row + 1) + dims), row * dims);
  return compact;
}

/** 1 / length (0 for a zero vector, which then scores 0 against everything). */
function inverseNorm(vector: Float32Array): number {
  let sum = 0;
  for (let i = 0; i < vector.length; i++) {
    const value = vector[i] as number;
    if (!Number.isFinite(value)) throw new Error('a vector must hold finite numbers');
    sum += value * value;
  }
  return sum > 0 ? 1 / Math.sqrt(sum) : 0;
}

function writeScaled(target: Float32Array, offset: number, vector: Float32Array, scale: number): void {
  for (let i = 0; i < vector.length; i++) target[offset + i] = (vector[i] as number) * scale;
}

/** The `limit` best rows. The best so far sit in a min-heap, so a row that does not beat the worst of them costs one comparison. */
function topK(scores: Float32Array, rowIds: string[], limit: number, filter?: (id: string) => boolean): VectorHit[] {
  const heap: VectorHit[] = [];
  for (let row = 0; row < scores.length; row++) {
    const score = scores[row] as number;
    if (heap.length === limit && score < (heap[0] as VectorHit).score) continue;
    const id = rowIds[row] as string;
    if (filter && !filter(id)) continue;
    if (heap.length < limit) heapPush(heap, { id, score });
    else if (better(score, id, heap[0] as VectorHit)) heapReplaceTop(heap, { id, score });
  }
  return heap.sort((a, b) => (better(a.score, a.id, b) ? -1 : 1));
}

/** Higher score first; equal scores by id, so results do not depend on row order. */
function better(score: number, id: string, than: VectorHit): boolean {
  return score > than.score || (score === than.score && id < than.id);
}

function heapPush(heap: VectorHit[], hit: VectorHit): void {
  let i = heap.push(hit) - 1;
  while (i > 0) {
    const parent = (i - 1) >> 1;
    const up = heap[parent] as VectorHit;
    if (!better(up.score, up.id, hit)) break;
    heap[i] = up;
    i = parent;
  }
  heap[i] = hit;
}

/** Replaces the worst hit (the root) and sifts it down. */
function heapReplaceTop(heap: VectorHit[], hit: VectorHit): void {
  let i = 0;
  for (;;) {
    const left = 2 * i + 1;
    if (left >= heap.length) break;
    const right = left + 1;
    const l = heap[left] as VectorHit;
    const worst = right < heap.length && better(l.score, l.id, heap[right] as VectorHit) ? right : left;
    const child = heap[worst] as VectorHit;
    if (!better(hit.score, hit.id, child)) break;
    heap[i] = child;
    i = worst;
  }
  heap[i] = hit;
}

/** The few WebAssembly globals used here: the project's `lib` (no DOM) does not declare them. */
interface WasmMemory {
  readonly buffer: ArrayBuffer;
  grow(pages: number): number;
}
interface WasmApi {
  Module: new (bytes: Uint8Array) => object;
  Instance: new (module: object) => { exports: Record<string, unknown> };
}

interface Kernel {
  /** A float32 view of the whole memory: take it anew after `reserve`, which may replace it. */
  floats(): Float32Array;
  /** Grows the memory to hold at least this many floats. */
  reserve(floats: number): void;
  /** scores[out + r] = matrix row r · query, for rows of `stride` floats (a multiple of 8); offsets in floats. */
  scores(matrix: number, query: number, rows: number, stride: number, out: number): void;
}

const PAGE_BYTES = 65_536;
const MAX_PAGES = 65_536;

/**
 * The dot products in WebAssembly SIMD (f32x4): V8 does not vectorise JavaScript, and a plain loop
 * took ~55 ms for 100k × 384 on the reference machine, where this takes about a quarter of that
 * (the matrix is read at memory speed). One instance per store, with its own memory.
 */
function createKernel(): Kernel {
  const wasm = (globalThis as unknown as { WebAssembly: WasmApi }).WebAssembly;
  const { exports } = new wasm.Instance(new wasm.Module(kernelModule()));
  const memory = exports.memory as WasmMemory;
  const scores = exports.scores as (matrix: number, query: number, rows: number, strideBytes: number, out: number) => void;
  let view = new Float32Array(memory.buffer);
  return {
    floats: () => view,
    reserve(floats) {
      const have = memory.buffer.byteLength / PAGE_BYTES;
      const need = Math.ceil((floats * 4) / PAGE_BYTES);
      if (need <= have) return;
      if (need > MAX_PAGES) throw new Error('the vector store is full: its vectors take more than 4 GiB');
      memory.grow(Math.min(MAX_PAGES, Math.max(need, Math.ceil(have * 1.5))) - have);
      view = new Float32Array(memory.buffer);
    },
    scores: (matrix, query, rows, stride, out) => scores(matrix * 4, query * 4, rows, stride * 4, out * 4),
  };
}

/**
 * The kernel's module, assembled here rather than shipped as a binary so it can be read:
 * `scores(m, q, rows, strideBytes, out)` — for each row, two f32x4 accumulators over the row in
 * steps of 8 floats, the lanes summed and stored at `out`, then m += strideBytes, out += 4.
 */
function kernelModule(): Uint8Array {
  const [M, Q, ROWS, STRIDE, OUT, I, A, B] = [0, 1, 2, 3, 4, 5, 6, 7];
  const get = (local: number) => [0x20, local];
  const set = (local: number) => [0x21, local];
  const tee = (local: number) => [0x22, local];
  const simd = (op: number, ...immediates: number[]) => [0xfd, ...leb(op), ...immediates];
  const load = (offset: number) => simd(0x00, 4, offset); // v128.load align=16
  const [F32X4_ADD, F32X4_MUL, F32X4_EXTRACT, V128_CONST] = [0xe4, 0xe6, 0x1f, 0x0c];
  const accumulate = (acc: number, offset: number) => [
    ...get(acc),
    ...get(M),
    ...get(I),
    0x6a,
    ...load(offset),
    ...get(Q),
    ...get(I),
    0x6a,
    ...load(offset),
    ...simd(F32X4_MUL),
    ...simd(F32X4_ADD),
    ...set(acc),
  ];
  const body = [
    0x02,
    0x40,
    ...get(ROWS),
    0x45,
    0x0d,
    0x00, // block; br_if out when rows == 0
    0x03,
    0x40, // loop (rows)
    ...simd(V128_CONST, ...new Array<number>(16).fill(0)),
    ...tee(A),
    ...set(B),
    0x41,
    0x00,
    ...set(I),
    0x03,
    0x40, // loop (columns)
    ...accumulate(A, 0),
    ...accumulate(B, 16),
    ...get(I),
    0x41,
    0x20,
    0x6a,
    ...tee(I),
    ...get(STRIDE),
    0x49,
    0x0d,
    0x00, // i += 32; br_if i < stride
    0x0b,
    ...get(OUT),
    ...get(A),
    ...get(B),
    ...simd(F32X4_ADD),
    ...tee(A),
    ...simd(F32X4_EXTRACT, 0),
    ...[1, 2, 3].flatMap((lane) => [...get(A), ...simd(F32X4_EXTRACT, lane), 0x92]), // f32.add
    0x38,
    0x02,
    0x00, // f32.store
    ...get(OUT),
    0x41,
    0x04,
    0x6a,
    ...set(OUT),
    ...get(M),
    ...get(STRIDE),
    0x6a,
    ...set(M),
    ...get(ROWS),
    0x41,
    0x01,
    0x6b,
    ...tee(ROWS),
    0x0d,
    0x00, // br_if rows - 1 != 0
    0x0b,
    0x0b,
    0x0b, // end loop, end block, end function
  ];
  const I32 = 0x7f;
  const V128 = 0x7b;
  const locals = [0x02, 0x01, I32, 0x02, V128];
  const vector = (items: number[][]) => [...leb(items.length), ...items.flat()];
  const section = (id: number, bytes: number[]) => [id, ...leb(bytes.length), ...bytes];
  const name = (text: string) => [text.length, ...Buffer.from(text, 'ascii')];
  const code = [...locals, ...body];
  return Uint8Array.from([
    ...[0x00, 0x61, 0x73, 0x6d, 0x01, 0x00, 0x00, 0x00],
    ...section(1, vector([[0x60, 5, I32, I32, I32, I32, I32, 0]])), // type: (i32 × 5) → ()
    ...section(3, vector([[0]])), // one function of that type
    ...section(5, vector([[0x01, ...leb(1), ...leb(MAX_PAGES)]])), // memory: 1 page, up to 4 GiB
    ...section(
      7,
      vector([
        [...name('memory'), 0x02, 0],
        [...name('scores'), 0x00, 0],
      ]),
    ),
    ...section(10, vector([[...leb(code.length), ...code]])),
  ]);
}

/** Unsigned LEB128, the integer encoding of WebAssembly binaries. */
function leb(value: number): number[] {
  const bytes: number[] = [];
  do {
    let byte = value & 0x7f;
    value = Math.floor(value / 128);
    if (value > 0) byte |= 0x80;
    bytes.push(byte);
  } while (value > 0);
  return bytes;
}

function align4(n: number): number {
  return Math.ceil(n / 4) * 4;
}

/** The frame is little-endian whatever the machine; on the usual (little-endian) one, a plain view. */
function floatBytes(values: Float32Array): Buffer {
  if (endianness() === 'LE') return Buffer.from(values.buffer, values.byteOffset, values.byteLength);
  const bytes = Buffer.alloc(values.length * 4);
  values.forEach((value, i) => bytes.writeFloatLE(value, i * 4));
  return bytes;
}

/** Serialised rows (little-endian, unpadded) into the kernel's rows, straight from the buffer. */
function copyRowsIn(floats: Float32Array, bytes: Buffer, rows: number, dims: number, stride: number): void {
  if (endianness() !== 'LE') {
    for (let i = 0; i < rows * dims; i++) floats[stride * (Math.floor(i / dims) + 1) + (i % dims)] = bytes.readFloatLE(i * 4);
  } else if (dims === stride) {
    new Uint8Array(floats.buffer, stride * 4, bytes.length).set(bytes);
  } else {
    for (let row = 0; row < rows; row++)
      new Uint8Array(floats.buffer, stride * (row + 1) * 4, dims * 4).set(bytes.subarray(row * dims * 4, (row + 1) * dims * 4));
  }
}
