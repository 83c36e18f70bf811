/** A Map that forgets its oldest entries past `capacity`: every cache and registry in the sandbox is one. */
export class BoundedMap<K, V> {
  readonly capacity: number;
  readonly map = new Map<K, V>();

  constructor(capacity: number) {
    this.capacity = capacity;
  }

  get size(): number {
    return this.map.size;
  }

  get(key: K): V | undefined {
    return this.map.get(key);
  }

  has(key: K): boolean {
    return this.map.has(key);
  }

  set(key: K, value: V): void {
    if (!this.map.has(key) && this.map.size >= this.capacity) {
      const oldest = this.map.keys().next();
      if (!oldest.done) this.map.delete(oldest.value);
    }
    this.map.set(key, value);
  }

  delete(key: K): boolean {
    return this.map.delete(key);
  }

  values(): IterableIterator<V> {
    return this.map.values();
  }

  clear(): void {
    this.map.clear();
  }
}

/** An array that keeps only its last `capacity` items (delivery log). */
export function pushBounded<T>(list: T[], item: T, capacity: number): void {
  list.push(item);
  if (list.length > capacity) list.splice(0, list.length - capacity);
}
