/**
 * How much a part may decode to, relative to its size: the bound that keeps a load's memory in proportion to the
 * parts its manifest lists, whatever they hold.
 */
import { pipeline, Readable } from 'node:stream';
import { createGunzip } from 'node:zlib';
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

/**
 * A gzip part's bytes inflated as they come, up to its limit (`inflateLimit` of its size as its manifest lists it):
 * past it, or not gzip, it is refused by name (never quoting it). An error of the bytes' own stream (a part that is not
 * its manifest's) is passed on as it is.
 */
export async function* gunzipChunks(
  chunks: AsyncIterable<Buffer>,
  partBytes: number,
  manifestUrl: string,
  key: string,
): AsyncGenerator<Buffer> {
  const limit = inflateLimit(partBytes);
  let sourceError: unknown;
  const source = Readable.from(chunks).on('error', (error) => (sourceError = error));
  const gunzip = pipeline(source, createGunzip(), () => {});
  let size = 0;
  try {
    for await (const chunk of gunzip) {
      size += (chunk as Buffer).length;
      if (size > limit) throw inflatedPast(manifestUrl, key, limit);
      yield chunk as Buffer;
    }
  } catch (error) {
    if (sourceError !== undefined) throw sourceError;
    if (error instanceof ManifestError) throw error;
    throw new ManifestError(manifestUrl, `part ${key} is not gzip`);
  } finally {
    gunzip.destroy();
  }
  if (sourceError !== undefined) throw sourceError;
}
