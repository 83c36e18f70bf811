/** Free reads: one signal by id, the type catalog, database statistics (spec 4.6 to 4.8). */
import type { Route } from '../api.ts';
import { catalogStats } from '../data/search.ts';
import { SIGNAL_TYPES } from '../data/signal-types.ts';
import { toLookupSignal } from '../data/signals.ts';
import { notFound } from '../errors.ts';
import { isoOffset } from '../time.ts';

export const signalRoutes: Route[] = [
  {
    method: 'GET',
    path: '/v1/signals/types',
    handler: (req, ctx) => {
      const stats = catalogStats(ctx.store, req.now);
      return {
        body: {
          types: SIGNAL_TYPES.map((t, i) => ({
            signal_type: t.type,
            category: t.category,
            source: t.source,
            association: t.association,
            description: t.description,
            subtypes: t.subtypes,
            signal_count: stats.byType[i]!,
          })),
        },
      };
    },
  },
  {
    method: 'GET',
    path: '/v1/signals/:id',
    handler: (req, ctx) => {
      const rec = ctx.store.lookup(req.params['id']!, req.now);
      if (!rec) throw notFound(`no signal ${req.params['id']}`);
      return { body: toLookupSignal(rec) };
    },
  },
  {
    method: 'GET',
    path: '/v1/stats',
    handler: (req, ctx) => {
      const stats = catalogStats(ctx.store, req.now);
      const byType: Record<string, number> = {};
      SIGNAL_TYPES.forEach((t, i) => {
        byType[t.type] = stats.byType[i]!;
      });
      return {
        body: {
          total_signals: stats.total,
          total_companies: stats.companies,
          by_type: byType,
          freshness: {
            latest_detected_at: stats.latest === undefined ? null : isoOffset(stats.latest),
            median_age_hours: stats.medianAgeHours,
          },
          generated_at: isoOffset(req.now),
        },
      };
    },
  },
];
