import type { BulkEnrichItem } from '../../../connectors/signal-api/index.ts';

/** What the push unit tests' services answer for a domain: one news signal (2 credits), the same every time. */
export function oneSignalAnswer(domain: string): BulkEnrichItem {
  return {
    domain,
    status: 'ok',
    company: { name: domain, domain },
    signals: [
      {
        signal_id: `sig_${domain}`,
        signal_type: 'news',
        signal_subtype: '',
        signal_name: 'n',
        detected_at: '2026-03-05T00:00:00.000Z',
        data: { summary: 'n' },
      },
    ],
    signal_summary: {},
    coverage: {},
  };
}
