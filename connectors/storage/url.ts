import { isAbsolute, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { InvalidStorageUrlError } from './errors.ts';

export type StorageLocation =
  | { scheme: 'file'; url: string; dir: string }
  | { scheme: 's3'; url: string; bucket: string; prefix: string }
  | { scheme: 'gs'; url: string; bucket: string; prefix: string };

/**
 * `file:///abs/dir` or a plain path (relative paths resolve against the working directory), `s3://bucket/prefix`,
 * `gs://bucket/prefix`. The bucket prefix is normalized to "" or "a/b/" so that keys can be appended to it.
 */
export function parseStorageUrl(input: string): StorageLocation {
  const trimmed = input.trim();
  if (!trimmed) throw new InvalidStorageUrlError(input, 'empty');
  const scheme = /^([a-z][a-z0-9+.-]*):\/\//i.exec(trimmed)?.[1]?.toLowerCase();
  if (scheme === undefined) {
    const dir = isAbsolute(trimmed) ? resolve(trimmed) : resolve(process.cwd(), trimmed);
    return { scheme: 'file', url: pathToFileURL(dir).href, dir };
  }
  if (scheme === 'file') {
    let dir: string;
    try {
      dir = resolve(fileURLToPath(trimmed));
    } catch (err) {
      throw new InvalidStorageUrlError(input, (err as Error).message);
    }
    return { scheme: 'file', url: pathToFileURL(dir).href, dir };
  }
  if (scheme === 's3' || scheme === 'gs') {
    const rest = trimmed.slice(scheme.length + 3);
    const slash = rest.indexOf('/');
    const bucket = slash === -1 ? rest : rest.slice(0, slash);
    if (!/^[a-z0-9][a-z0-9._-]{1,221}[a-z0-9]$/.test(bucket)) {
      throw new InvalidStorageUrlError(input, `"${bucket}" is not a valid bucket name`);
    }
    const path = slash === -1 ? '' : rest.slice(slash + 1);
    const segments = path.split('/').filter((segment) => segment !== '');
    const prefix = segments.length ? `${segments.join('/')}/` : '';
    return { scheme, url: `${scheme}://${bucket}${prefix ? `/${prefix.slice(0, -1)}` : ''}`, bucket, prefix };
  }
  throw new InvalidStorageUrlError(input, `unsupported scheme "${scheme}:" (expected file://, s3:// or gs://)`);
}

/** Rejects keys that could escape the store's prefix or that no backend can hold. */
export function checkKey(key: string, url: string): string {
  if (
    key === '' ||
    key.startsWith('/') ||
    key.endsWith('/') ||
    key.includes('\0') ||
    key.split('/').some((segment) => segment === '' || segment === '.' || segment === '..')
  ) {
    throw new InvalidStorageUrlError(`${url}/${key}`, `"${key}" is not a valid object key`);
  }
  return key;
}
