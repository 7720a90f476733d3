/** A map that forgets its least recently used entries past a total weight. */
export class BoundedCache<V> {
  private readonly entries = new Map<string, { value: V; weight: number }>();
  private total = 0;
  constructor(private readonly capacity: number) {}

  /** What the entries weigh together. */
  get weight(): number {
    return this.total;
  }

  /** What the entries whose key starts with `prefix` weigh. */
  weightOf(prefix: string): number {
    let weight = 0;
    for (const [key, entry] of this.entries) if (key.startsWith(prefix)) weight += entry.weight;
    return weight;
  }

  /** Drops every entry whose key starts with `prefix`. */
  deletePrefix(prefix: string): void {
    this.deleteWhere((key) => key.startsWith(prefix));
  }

  deleteWhere(doomed: (key: string) => boolean): void {
    for (const key of [...this.entries.keys()]) if (doomed(key)) this.delete(key);
  }

  delete(key: string): void {
    const entry = this.entries.get(key);
    if (!entry) return;
    this.entries.delete(key);
    this.total -= entry.weight;
  }

  get(key: string): V | undefined {
    const entry = this.entries.get(key);
    if (!entry) return undefined;
    this.entries.delete(key);
    this.entries.set(key, entry);
    return entry.value;
  }

  /**
   * Keeps `value` unless it alone weighs more than the whole cache may (it is then only dropped: the
   * weight counted in the memory budget never exceeds the capacity).
   */
  set(key: string, value: V, weight: number): void {
    this.delete(key);
    if (weight > this.capacity) return;
    this.entries.set(key, { value, weight });
    this.total += weight;
    for (const [oldest, entry] of this.entries) {
      if (this.total <= this.capacity) break;
      this.entries.delete(oldest);
      this.total -= entry.weight;
    }
  }
}
