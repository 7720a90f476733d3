/**
 * The vector store's kernel (vectors.ts): the dot products of a search in WebAssembly SIMD, over
 * memory the store keeps its rows in. Apart from the store because it is a small machine of its own —
 * the module's bytes assembled here, its instantiation and its memory's growth — that the store only
 * calls once per search, never per row.
 */

/** The few WebAssembly globals used here: the project's `lib` (no DOM) does not declare them. */
interface WasmMemory {
  readonly buffer: ArrayBuffer;
  grow(pages: number): number;
}
interface WasmApi {
  Module: new (bytes: Uint8Array) => object;
  Instance: new (module: object) => { exports: Record<string, unknown> };
}

export interface Kernel {
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
export function createKernel(): Kernel {
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
