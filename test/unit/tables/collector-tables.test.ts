/**
 * The webhook bucket collector writes each part also as the flat signals table, in every format its destination
 * lists, through the same part writer: Parquet read back by DuckDB, listed in the collector's manifest.
 */
import { createHash } from 'node:crypto';
import { mkdtemp, readFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { describe, expect, it } from 'vitest';
import { type CollectorManifest, createCollectorActivities } from '../../../activities/collector.ts';
import { collectorManifestKey, collectorStagingKey } from '../../../activities/webhook-layout.ts';
import { openStore } from '../../../config/storage.ts';
import { webhookDeliveryConfig } from '../../../config/webhook-destinations.ts';
import { SignalCreatedEventSchema } from '../../../connectors/webhooks/events.ts';
import { openDuck, sqlString } from '../../helpers/tables.ts';

describe('bucket collector: flat signals table', () => {
  it('writes part N as tables/signals/part-N in each format, manifested with its sha256', async () => {
    const root = await mkdtemp(join(tmpdir(), 'signal-kit-collector-'));
    const url = pathToFileURL(root).href;
    const config = webhookDeliveryConfig({
      destinations: [{ id: 'lake', kind: 'bucket', url, formats: ['parquet', 'csv'] }],
      deadLetterUrl: url,
    });
    const dest = config.destinations[0];
    if (dest?.kind !== 'bucket') throw new Error('no bucket destination');
    const store = openStore(url);
    const events = [0, 1, 2].map((i) =>
      SignalCreatedEventSchema.parse({
        event: 'signal.created',
        signal: {
          id: `sig_${i}`,
          type: i === 0 ? 'sec-8k' : 'news',
          company: { name: `Co ${i}`, domain: `co${i}.com` },
          title: `title ${i}`,
          detected_at: `2026-03-0${i + 1}T12:00:00+00:00`,
          data: { summary: `summary ${i}`, relevance: 0.5, technologies: i === 1 ? ['a'] : [{ name: 'b' }] },
        },
      }),
    );
    for (const event of events) {
      await store.writeText(collectorStagingKey(dest, event.signal.id), JSON.stringify(event));
    }
    const activities = createCollectorActivities({ config, openStore });
    const part = await activities.writeCollectorPart({
      destinationId: 'lake',
      seq: 7,
      signalIds: ['sig_0', 'sig_1', 'sig_2'],
    });
    expect(part.tables?.map((t) => [t.key, t.format, t.lines])).toEqual([
      ['collector/lake/tables/signals/part-00007.parquet', 'parquet', 3],
      ['collector/lake/tables/signals/part-00007.csv', 'csv', 3],
    ]);
    const manifest = JSON.parse(await store.readText(collectorManifestKey(dest))) as CollectorManifest;
    expect(manifest.parts[0]?.tables).toEqual(part.tables);
    for (const table of part.tables ?? []) {
      const bytes = await readFile(join(root, table.key));
      expect(createHash('sha256').update(bytes).digest('hex')).toBe(table.sha256);
    }
    const duck = await openDuck();
    try {
      const rows = await duck.query(
        `SELECT signal_id, domain, signal_type, signal_name, epoch_ms(detected_at)::DOUBLE AS at, summary, relevance,
                data::VARCHAR AS data
         FROM read_parquet(${sqlString(join(root, 'collector/lake/tables/signals/part-00007.parquet'))}) ORDER BY signal_id`,
      );
      expect(rows).toEqual(
        events.map(({ signal }, i) => ({
          signal_id: signal.id,
          domain: `co${i}.com`,
          signal_type: signal.type,
          signal_name: `title ${i}`,
          at: Date.parse(signal.detected_at),
          summary: `summary ${i}`,
          relevance: 0.5,
          data: JSON.stringify({ technologies: i === 1 ? ['a'] : [{ name: 'b' }] }),
        })),
      );
    } finally {
      duck.close();
    }
  });
});
