/**
 * The storage driver contract. Keys are '/'-separated relative paths (see shared/keys.ts); every
 * driver normalises and confines them before any I/O.
 *
 * Contract, identical for every driver (test/storage/suite.ts proves it):
 * - `get` / `stat` of a missing key resolve to `null`, never throw.
 * - Only what live-mem could have written is an object. A folder, a FIFO, a symbolic link (fs: at the
 *   key, or, for `get`, a link to a folder on the way that leads out of the store) is none: `null`, as
 *   for a missing key — a link planted in a shared store must not serve a file of the reading user's.
 *   An object larger than MAX_OBJECT_BYTES (object-size.ts), or than the `maxBytes` a caller gives, is
 *   not read: `get` throws `storage_error` marked `too_large` (isObjectTooLarge), so a caller reading
 *   many objects can leave that one out.
 * - `put` replaces atomically: a reader sees the old body or the new one, never a mix.
 * - `put` with `ifNoneMatch: '*'` creates only; with `ifMatch: etag` replaces only that version.
 *   A lost condition throws LiveMemError('precondition_failed') and writes nothing. Both work across
 *   processes (and, on S3, across machines).
 * - `list` returns keys in ascending byte order, one page at a time (`cursor` continues).
 *   With `delimiter: '/'` it returns the immediate children: objects, and `prefixes` for sub-folders.
 * - `delete` / `deleteMany` are idempotent: a missing key is not an error.
 * - A `WriteBatch` (see `openBatch` in batch.ts) writes many objects that nobody reads until the
 *   caller publishes them; they are durable once its `flush` resolves.
 */
export interface ObjectInfo {
  key: string;
  /** Bytes. Always set by `stat`/`get`; `list` may leave it undefined where it costs an extra call (fs). */
  size?: number;
  /** Always set by `stat`/`get`; `list` may leave it undefined (fs). */
  lastModified?: Date;
  /** An opaque version tag for compare-and-swap. */
  etag?: string;
}

export interface StoredObject extends Required<Pick<ObjectInfo, 'key' | 'size' | 'lastModified' | 'etag'>> {
  body: Buffer;
}

export interface GetOptions {
  /**
   * Refuse an object larger than this (a caller that knows how big its objects can be: a note), as one
   * larger than MAX_OBJECT_BYTES is refused: `storage_error` marked `too_large`, nothing read.
   */
  maxBytes?: number;
}

export interface PutOptions {
  /** '*' = create only: fail if the key exists. */
  ifNoneMatch?: '*';
  /** Replace only if the current version has this etag. */
  ifMatch?: string;
  contentType?: string;
  /**
   * With `ifNoneMatch: '*'`, on a driver with folders (one that has `removeFolder`): fail with
   * `not_found`, writing nothing, when the key's folder does not exist, instead of creating it.
   * A writer learns this way, at no extra cost, that `removeFolder` took the folder away. Drivers
   * without folders ignore it.
   */
  inExistingFolder?: boolean;
}

export interface ListOptions {
  /** Continue after this cursor (from a previous page). */
  cursor?: string;
  /**
   * Page size; drivers may return fewer. Default: the driver's natural page — 1000 on S3; everything
   * on fs and memory, which read a whole folder at once anyway (paging them would re-read it per page).
   */
  limit?: number;
  /** '/' lists one level: immediate objects plus sub-folder `prefixes`. */
  delimiter?: '/';
  /**
   * Only keys after this one (S3's StartAfter): a listing can begin anywhere in the key order, so
   * a caller after the newest names of a folder whose names sort by time (notes) lists from a
   * recent point instead of from the start.
   */
  startAfter?: string;
}

export interface ListPage {
  objects: ObjectInfo[];
  /** With a delimiter: the sub-folder prefixes (each ending in '/'), ascending. */
  prefixes: string[];
  /** Set when more pages follow. */
  cursor?: string;
}

/**
 * Many writes to keys that no reader looks at until the caller publishes them with a regular `put`
 * afterwards (a space being restored, before its `_meta.json`; a backup, before its manifest).
 * Each `put` creates or replaces its object but may skip per-object atomicity and durability, so
 * a crash before `flush` resolves can leave objects missing or torn: the caller writes its marker
 * only after `flush`, and treats unmarked objects as leftovers.
 */
export interface WriteBatch {
  put(key: string, body: Buffer | string, options?: Pick<PutOptions, 'contentType'>): Promise<void>;
  /** Makes every object put so far durable. */
  flush(): Promise<void>;
}

export type DriverName = 'memory' | 'fs' | 's3';

export interface StorageDriver {
  readonly name: DriverName;
  /** A human-readable location for messages ("/home/u/.live-mem", "s3://bucket/prefix"). */
  readonly location: string;
  /**
   * How many requests this driver serves well at once: callers that read or write many objects keep
   * that many in flight (a remote store hides latency with more; a local disk gains little past 16).
   */
  readonly parallelism: number;
  get(key: string, options?: GetOptions): Promise<StoredObject | null>;
  stat(key: string): Promise<ObjectInfo | null>;
  put(key: string, body: Buffer | string, options?: PutOptions): Promise<{ etag: string }>;
  list(prefix: string, options?: ListOptions): Promise<ListPage>;
  delete(key: string): Promise<void>;
  deleteMany(keys: readonly string[]): Promise<void>;
  /**
   * Removes a folder (`prefix` ends in '/') and every object below it in one atomic step: no reader
   * sees a part of it gone, and from that step on every `put` with `inExistingFolder` into it fails.
   * Resolves to the number of objects removed, once the removal is durable. Optional: a driver with
   * folders (fs, memory) has it; one without (S3) leaves it out, and callers delete object by object.
   */
  removeFolder?(prefix: string): Promise<number>;
  /**
   * A write batch cheaper than one `put` per object, where the driver has one (fs: no temp file and
   * no fsync per object, one barrier at `flush`). Optional: `openBatch` falls back to plain puts.
   */
  batch?(): WriteBatch;
  /**
   * A cheap token for the entries directly in a folder (`prefix` ends in '/'): whenever an object
   * in it is created, replaced or removed, later calls return a different token. `null` means "cannot
   * vouch right now": list it. Optional: a driver without a cheap way (S3) leaves it out, and callers
   * list every time. Derived data (the recall index) uses it to skip listings that changed nothing.
   */
  version?(prefix: string): Promise<string | null>;
  /**
   * Whether the store really honours create-only and compare-and-swap writes (S3 look-alikes may
   * accept the headers and ignore them). Optional: fs and memory always do, and leave it out.
   */
  checkConditionalWrites?(): Promise<'supported' | 'unsupported'>;
  /**
   * Files below `prefix` that are no objects but a writer's own (fs: temp and lock files), found
   * without changing anything; with `remove`, the stale ones are deleted. Optional: a store whose
   * writes leave nothing behind (S3, memory) leaves it out.
   */
  debris?(prefix: string, options?: { remove?: boolean }): Promise<DebrisFile[]>;
  /** Releases clients and handles. Optional. */
  close?(): Promise<void>;
}

/** A file a writer left beside the objects (see `StorageDriver.debris`). */
export interface DebrisFile {
  /** Its path below the store's root, '/'-separated (not a key: keys never end with its suffix). */
  path: string;
  ageMs: number;
  /**
   * Left by a killed writer, safe to delete: older than any running write, or written by a process of
   * this machine that has exited (fs, on Linux). The others belong to a write in progress.
   */
  stale: boolean;
  /** Deleted by this call (`remove: true`). */
  removed: boolean;
}
