/** What a cache is told beyond its capacity (all optional). */
export interface BoundedCacheOptions<K, V> {
  /** Whether an entry may leave now; one in use is passed over by eviction (default: every entry may). */
  evictable?: (key: K, value: V) => boolean;
  /** Called for each entry evicted to fit (not for `delete` or `clear`): its owner releases what it holds. */
  onEvict?: (key: K, value: V) => void;
  /** Weight held outside the cache on an entry's behalf, counted in `trim`'s `extra`, that leaves with it. */
  outside?: (key: K) => number;
}

/**
 * The one cache policy of live-mem: past its bound, a cache forgets what was least recently used.
 * Two forms of it, for two kinds of client:
 *
 * - `BoundedCache` keeps the exact recency order and bounds a total weight (bytes, or 1 per entry),
 *   with hooks for entries in use and for what an entry holds outside the cache: the caches of
 *   derived data a read or a refresh asks of (the corpus's texts and records, the indexes in memory).
 * - `MemoCache` bounds a count and forgets the older half of its entries by when they were stored, so
 *   a hit is one `Map` lookup: the memo tables asked once per token (the analyser's stems, the BM25
 *   engine's per-word term numbers, its per-term bounds and background counts). Exact LRU
 *   bookkeeping there (a delete and a set per hit) made a 30,000-note index build 70% slower.
 */
export class BoundedCache<V, K extends string | number = string> {
  private readonly entries = new Map<K, { value: V; weight: number }>();
  private total = 0;
  private cursor: IterableIterator<[K, { value: V; weight: number }]> | undefined;
  constructor(
    private readonly capacity: number,
    private readonly options: BoundedCacheOptions<K, V> = {},
  ) {}

  /** What the entries weigh together. */
  get weight(): number {
    return this.total;
  }

  get size(): number {
    return this.entries.size;
  }

  /** What the entries whose key starts with `prefix` weigh. */
  weightOf(prefix: string): number {
    let weight = 0;
    for (const [key, entry] of this.entries) if (String(key).startsWith(prefix)) weight += entry.weight;
    return weight;
  }

  /** Drops every entry whose key starts with `prefix`. */
  deletePrefix(prefix: string): void {
    this.deleteWhere((key) => String(key).startsWith(prefix));
  }

  deleteWhere(doomed: (key: K) => boolean): void {
    for (const key of [...this.entries.keys()]) if (doomed(key)) this.delete(key);
  }

  delete(key: K): void {
    const entry = this.entries.get(key);
    if (!entry) return;
    this.entries.delete(key);
    this.total -= entry.weight;
  }

  clear(): void {
    this.entries.clear();
    this.total = 0;
    this.cursor = undefined;
  }

  /** The entry, now the most recently used. */
  get(key: K): V | undefined {
    const entry = this.entries.get(key);
    if (!entry) return undefined;
    this.entries.delete(key);
    this.entries.set(key, entry);
    return entry.value;
  }

  /** The entry, its recency unchanged (a look that is no use). */
  peek(key: K): V | undefined {
    return this.entries.get(key)?.value;
  }

  /** The keys, least recently used first. */
  keys(): IterableIterator<K> {
    return this.entries.keys();
  }

  /** The values, least recently used first. */
  *values(): IterableIterator<V> {
    for (const entry of this.entries.values()) yield entry.value;
  }

  /** The entry's weight, or undefined. */
  weightOfKey(key: K): number | undefined {
    return this.entries.get(key)?.weight;
  }

  /**
   * Keeps `value` as the most recently used unless it alone weighs more than the whole cache may (it
   * is then only dropped: the weight counted in the memory budget never exceeds the capacity), then
   * evicts past the capacity.
   */
  set(key: K, value: V, weight: number): void {
    this.delete(key);
    if (weight > this.capacity) return;
    this.entries.set(key, { value, weight });
    this.total += weight;
    this.trim();
  }

  /** Weighs an entry anew (it grew or shrank), its recency unchanged; nothing is evicted (`trim` does). */
  reweigh(key: K, weight: number): void {
    const entry = this.entries.get(key);
    if (!entry) return;
    this.total += weight - entry.weight;
    entry.weight = weight;
  }

  /**
   * Evicts the least recently used evictable entries until they, with `extra` held outside the cache
   * (less what `outside` says leaves with each), fit the capacity.
   */
  trim(extra = 0): void {
    let total = this.total + extra;
    if (total <= this.capacity) return;
    const { evictable, onEvict, outside } = this.options;
    for (;;) {
      if (total <= this.capacity) return;
      const oldest = evictable ? this.oldestEvictable(evictable) : this.oldest();
      if (!oldest) return;
      const [key, entry] = oldest;
      this.entries.delete(key);
      this.total -= entry.weight;
      total -= entry.weight + (outside?.(key) ?? 0);
      onEvict?.(key, entry.value);
    }
  }

  /**
   * The least recently used entry, from a cursor kept between calls: every entry before it was evicted
   * (a read moves an entry to the end, after it), so each eviction costs O(1). Scanning from the start
   * each time cost O(evicted so far) — a Map keeps deleted slots until it is rehashed — and 400,000
   * sets into a cache of 200,000 took 19 s.
   */
  private oldest(): [K, { value: V; weight: number }] | undefined {
    let next = this.cursor?.next();
    if (!next || next.done) {
      this.cursor = this.entries.entries();
      next = this.cursor.next();
    }
    return next.done ? undefined : next.value;
  }

  /** The least recently used entry that may leave now (in-use ones are passed over, and looked at again next time). */
  private oldestEvictable(evictable: (key: K, value: V) => boolean): [K, { value: V; weight: number }] | undefined {
    for (const pair of this.entries) if (evictable(pair[0], pair[1].value)) return pair;
    return undefined;
  }
}

/**
 * The policy of `BoundedCache` by count, for memo tables asked once per token: past `limit` entries,
 * the older half goes — older by when stored, since keeping the order of use is the per-hit
 * bookkeeping these tables cannot pay. So a hit costs one `Map` lookup, eviction costs O(1) per entry
 * stored, and the cache always keeps the `limit / 2` entries stored last (clearing it whole instead
 * kept nothing at that point; on 2 million tokens of a 273,000-word vocabulary, limit 200,000, it
 * missed 370,000 times, this 349,000). A generational cache, where a hit on an entry of the older
 * half copies it back, missed about as often (346,000) and tokenised 5 to 15% slower: the second
 * `Map` lookup and the copy cost more than the stems they spared.
 */
export class MemoCache<V, K extends string | number = string> {
  private readonly entries = new Map<K, V>();
  private total = 0;
  constructor(
    private readonly limit: number,
    /** What an entry weighs beside its slot (its key's characters, say), tallied in `weight`: it bounds nothing. */
    private readonly weigh?: (key: K) => number,
  ) {}

  get size(): number {
    return this.entries.size;
  }

  /** What `weigh` says the entries weigh together (0 without it). */
  get weight(): number {
    return this.total;
  }

  get(key: K): V | undefined {
    return this.entries.get(key);
  }

  /**
   * Stores the value of a key `get` just missed, checking nothing else (a key stored while held is
   * weighed twice). A key taken from a larger string should be detached first (search/analyze.ts
   * `detach`): kept as a view, it would keep the whole string alive.
   */
  set(key: K, value: V): void {
    if (this.limit < 1) return;
    if (this.entries.size >= this.limit) this.evictOlderHalf();
    this.entries.set(key, value);
    if (this.weigh) this.total += this.weigh(key);
  }

  clear(): void {
    this.entries.clear();
    this.total = 0;
  }

  /** Deletes entries from the oldest stored until `limit / 2` are left (a Map iterates in order of insertion). */
  private evictOlderHalf(): void {
    let doomed = this.entries.size - Math.floor(this.limit / 2);
    for (const key of this.entries.keys()) {
      if (doomed-- <= 0) return;
      this.entries.delete(key);
      if (this.weigh) this.total -= this.weigh(key);
    }
  }
}
