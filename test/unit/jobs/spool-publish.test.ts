/**
 * What a re-run publishes from the worker's spool when two attempts of one batch both had their answer refused (an
 * attempt whose heartbeat lapsed and the one Temporal started after it, on the same worker): the first kept answer's
 * part and its flat tables, together, and none of the second's, whose part lost the race. A table must always be the
 * one of the lines part beside it.
 */
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { describe, expect, it } from 'vitest';
import { PartSpool } from '../../../activities/paid/spool.ts';
import { writePart, zeroCounts } from '../../../activities/run/parts.ts';
import { openStore } from '../../../config/storage.ts';
import { useTempDir } from '../../helpers/temp-dir.ts';

const tempDir = useTempDir('spool-publish');
const identity = { owner: 'job-1', options: '', index: 0 };

describe('two refused attempts of one batch in the spool', () => {
  it('publishes one attempt whole (its tables with its part), even when their writes were kept interleaved', async () => {
    const store = openStore(pathToFileURL(join(tempDir(), 'out')).href);
    const spool = new PartSpool(join(tempDir(), 'spool'));
    const part = 'job-1/parts/part-00000.jsonl';
    const table = 'job-1/tables/rows/part-00000.jsonl';
    // Both attempts read the batch with no part yet; each writes its table, then its part, and each is refused.
    const first = spool.keepOnly(store, { key: part, fingerprint: undefined });
    const second = spool.keepOnly(store, { key: part, fingerprint: undefined });
    const write = (target: typeof store, key: string, text: string) =>
      writePart(target, 'none', key, [text], { ...zeroCounts(), lines: 1 }, 'done', [], identity);
    await write(first, table, 'rows of the first answer');
    await write(second, table, 'rows of the second answer');
    await write(first, part, 'lines of the first answer');
    await write(second, part, 'lines of the second answer');

    await spool.publish(store, 'job-1/');

    expect(await store.readText(part)).toBe('"lines of the first answer"\n');
    expect(await store.readText(table)).toBe('"rows of the first answer"\n');
    // Nothing is left to publish again.
    expect(await spool.publish(store, 'job-1/')).toBe(0);
  });
});
