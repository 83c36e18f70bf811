import { checkKey } from './url.ts';

/** Where a bucket store lives: its normalized URL, its bucket, and the prefix ("" or "a/b/") its keys go under. */
export interface BucketLocation {
  url: string;
  bucket: string;
  prefix: string;
}

/** What S3 and GCS stores share: their location, and how a key becomes an object name and a URL. */
export abstract class BucketStore {
  readonly url: string;
  readonly bucket: string;
  readonly prefix: string;
  private readonly scheme: 's3' | 'gs';

  constructor(location: BucketLocation, scheme: 's3' | 'gs') {
    this.url = location.url;
    this.bucket = location.bucket;
    this.prefix = location.prefix;
    this.scheme = scheme;
  }

  urlOf(key: string): string {
    return `${this.scheme}://${this.bucket}/${this.objectKey(key)}`;
  }

  /** The object's name in the bucket; a key that could escape the prefix is refused. */
  protected objectKey(key: string): string {
    return this.prefix + checkKey(key, this.url);
  }
}
