/**
 * How much a part may decode to, relative to its size: the bound that keeps a load's memory in proportion to the
 * parts its manifest lists, whatever they hold.
 */
import { gunzipSync } from 'node:zlib';
import { ManifestError } from '../connectors/errors.ts';

/**
 * What a part may decode to (gunzipped, or a Parquet row group's pages decompressed): 64 times its size as its
 * manifest lists it (and the store confirmed), and at least 64 MiB. The kit's own parts stay far below (gzip JSON
 * lines about 10 times, ZSTD columns less); a part past it is refused by name before it takes the memory it claims.
 */
export const INFLATE_RATIO = 64;
export const INFLATE_FLOOR = 64 * 1024 * 1024;
export const inflateLimit = (partBytes: number): number => Math.max(INFLATE_FLOOR, partBytes * INFLATE_RATIO);

/** The refusal of a part that decodes to more than its limit (`inflateLimit`). */
export const inflatedPast = (manifestUrl: string, key: string, limit: number): ManifestError =>
  new ManifestError(
    manifestUrl,
    `part ${key} inflates past ${limit} bytes (${INFLATE_RATIO} times its size, at least ${INFLATE_FLOOR / 1024 / 1024} MiB); nothing was loaded`,
  );

/** A gzip part's bytes inflated, up to its limit: past it, or not gzip, it is refused by name (never quoting it). */
export function gunzipPart(bytes: Buffer, manifestUrl: string, key: string): Buffer {
  const limit = inflateLimit(bytes.length);
  try {
    return gunzipSync(bytes, { maxOutputLength: limit });
  } catch (error) {
    if ((error as { code?: string }).code === 'ERR_BUFFER_TOO_LARGE') throw inflatedPast(manifestUrl, key, limit);
    throw new ManifestError(manifestUrl, `part ${key} is not gzip`);
  }
}
