/** A map that forgets its least recently used entries past a total weight. */
export class BoundedCache<V> {
  private readonly entries = new Map<string, { value: V; weight: number }>();
  private total = 0;
  constructor(private readonly capacity: number) {}

  /** Drops every entry whose key starts with `prefix`. */
  deletePrefix(prefix: string): void {
    for (const key of [...this.entries.keys()]) if (key.startsWith(prefix)) this.delete(key);
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

  set(key: string, value: V, weight: number): void {
    const old = this.entries.get(key);
    if (old) this.total -= old.weight;
    this.entries.delete(key);
    this.entries.set(key, { value, weight });
    this.total += weight;
    for (const [oldest, entry] of this.entries) {
      if (this.total <= this.capacity || this.entries.size <= 1) break;
      this.entries.delete(oldest);
      this.total -= entry.weight;
    }
  }
}
