/** `text` parsed as JSON, or `fallback` when it is not JSON. */
export function parseJsonOr<F>(text: string, fallback: F): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return fallback;
  }
}
