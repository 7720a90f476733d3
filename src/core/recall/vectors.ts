import { createHash } from 'node:crypto';
import { endianness } from 'node:os';
import { createKernel } from './vectors-kernel.js';

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
