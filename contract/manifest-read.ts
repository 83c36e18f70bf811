import { z } from 'zod';
import { ManifestPlaceError, ObjectNotFoundError } from '../connectors/errors.ts';
import type { Store } from '../connectors/storage/store.ts';
import { type ManifestClaims, manifestUrlAt, placeManifest } from './manifest-place.ts';
import { MANIFEST_SCHEMA_VERSION, ManifestSchema } from './manifest-schemas.ts';

/**
 * A job manifest as read back: the shipped schema, also for the manifests of the release before (`schema_version` 1,
 * which had no `output`), so that a job finished then is still found finished and its rate still learned.
 */
export const ReadableManifestSchema = ManifestSchema.extend({
  schema_version: z.union([z.literal(1), z.literal(MANIFEST_SCHEMA_VERSION)]),
  output: z.string().optional(),
});

/**
 * The largest manifest the kit reads back. A job's manifest lists one small entry per part: 1 MiB holds about 5,000
 * parts (500,000 domains); anything larger was not written by the kit and is skipped unread past this.
 */
export const MANIFEST_READ_LIMIT_BYTES = 1024 * 1024;

/** Deeper nesting than any manifest the kit writes (a handful of levels); checked before parsing. */
export const MANIFEST_MAX_DEPTH = 32;

/** A manifest read back: `manifest` when it holds, `skipped` (why not) when one is there but cannot be believed. */
export type CheckedManifest<T> = { manifest: T; skipped?: undefined } | { manifest?: undefined; skipped: string };

/**
 * Reads a manifest the kit wrote earlier and believes it only when it is one: at most `limitBytes`
 * (MANIFEST_READ_LIMIT_BYTES unless its kind grows past it; never read further), JSON, nested no deeper than MANIFEST_MAX_DEPTH, and valid under its shipped schema.
 * Undefined when there is none; storage failures are thrown as they are.
 */
export async function readCheckedManifest<S extends z.ZodType>(
  store: Store,
  key: string,
  schema: S,
  limitBytes = MANIFEST_READ_LIMIT_BYTES,
): Promise<CheckedManifest<z.output<S>> | undefined> {
  let text: string;
  try {
    const read = await readCapped(store, key, limitBytes);
    if (read === undefined) return { skipped: `larger than ${limitBytes} bytes` };
    text = read;
  } catch (error) {
    if (error instanceof ObjectNotFoundError) return undefined;
    throw error;
  }
  if (nestingDepth(text) > MANIFEST_MAX_DEPTH) return { skipped: `nested more than ${MANIFEST_MAX_DEPTH} levels deep` };
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return { skipped: 'not JSON' };
  }
  const parsed = schema.safeParse(value);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    const where = issue?.path.length ? issue.path.join('.') : 'manifest';
    return { skipped: `not a valid manifest: ${where}: ${issue?.message ?? 'invalid'}` };
  }
  return { manifest: parsed.data };
}

/**
 * `readCheckedManifest`, then believed only in its own place (manifest-place.ts): a manifest at `key` whose ids name
 * another folder, whose `output` is another, or that lists a part outside its folder is skipped, naming the field.
 */
export async function readPlacedManifest<S extends z.ZodType>(
  store: Store,
  key: string,
  schema: S,
  claims: (manifest: z.output<S>) => ManifestClaims,
  limitBytes = MANIFEST_READ_LIMIT_BYTES,
): Promise<CheckedManifest<z.output<S>> | undefined> {
  const read = await readCheckedManifest(store, key, schema, limitBytes);
  if (read?.manifest === undefined) return read;
  try {
    placeManifest(manifestUrlAt(store.url, key), claims(read.manifest));
  } catch (error) {
    if (error instanceof ManifestPlaceError) return { skipped: `not in its own place: ${error.reason}` };
    throw error;
  }
  return read;
}

/** The object's text, or undefined when it is longer than `limit` bytes (the read stops there). */
async function readCapped(store: Store, key: string, limit: number): Promise<string | undefined> {
  const stream = await store.openRead(key);
  const chunks: Buffer[] = [];
  let size = 0;
  try {
    for await (const chunk of stream) {
      const bytes = typeof chunk === 'string' ? Buffer.from(chunk) : (chunk as Buffer);
      size += bytes.length;
      if (size > limit) return undefined;
      chunks.push(bytes);
    }
  } finally {
    stream.destroy();
  }
  return Buffer.concat(chunks).toString('utf8');
}

/** The deepest nesting of `[` and `{` in JSON text (outside strings), found without parsing it. */
function nestingDepth(text: string): number {
  let depth = 0;
  let deepest = 0;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (inString) {
      if (c === 0x5c)
        i++; // backslash: skip the escaped character
      else if (c === 0x22) inString = false;
    } else if (c === 0x22) inString = true;
    else if (c === 0x5b || c === 0x7b) {
      depth++;
      if (depth > deepest) deepest = depth;
    } else if (c === 0x5d || c === 0x7d) depth--;
  }
  return deepest;
}
