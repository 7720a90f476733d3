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
 * The one cache policy of live-mem: a map that forgets its least recently used entries past a total
 * weight. The weight is what the owner counts — bytes, or 1 per entry for a cache bounded by its
 * count. Every derived-data cache (the corpus's texts and records, the indexes in memory, the
 * analyser's and the BM25 engine's per-word tables) is one of these.
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
