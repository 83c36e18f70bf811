/**
 * jsforce tries a GET, PUT or DELETE again by itself after a 5xx, a 429 or a cut connection (up to five times, about
 * 15 s of silent waits). The write-back's own pacing (`pacing.ts`) already does that, and says so through `onPause`:
 * on the kit's connections jsforce's retries are off, so every wait of a slow write-back is reported with its reason.
 */
import { Transport } from 'jsforce/lib/transport.js';
import type { HttpRequest, HttpRequestOptions } from 'jsforce/lib/types/common.js';

export class NoHiddenRetriesTransport extends Transport {
  override httpRequest(req: HttpRequest, options: HttpRequestOptions = {}) {
    return super.httpRequest(req, { ...options, retry: { ...options.retry, maxRetries: 0 } });
  }
}
