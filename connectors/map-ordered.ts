/** Maps `items` through `fn` with at most `concurrency` calls in flight, yielding results in input order. */
export async function* mapOrdered<T, R>(
  items: AsyncIterable<T> | Iterable<T>,
  concurrency: number,
  fn: (item: T) => Promise<R>,
): AsyncGenerator<R> {
  const inFlight: Promise<R>[] = [];
  for await (const item of items) {
    const next = fn(item);
    next.catch(() => {}); // observed when its turn comes
    inFlight.push(next);
    if (inFlight.length >= concurrency) yield await inFlight.shift()!;
  }
  while (inFlight.length) yield await inFlight.shift()!;
}
