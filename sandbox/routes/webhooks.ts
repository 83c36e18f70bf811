/** Webhook subscription management (spec 6; paths in sandbox/README.md). All free. */
import { z } from 'zod';
import type { ApiContext, ApiRequest, Route } from '../api.ts';
import { TYPE_INDEX } from '../data/signal-types.ts';
import { buildEmittedSignal } from '../data/signals.ts';
import { notFound, validationError } from '../errors.ts';
import { parse, signalTypes } from '../validation.ts';
import { type Subscription, WebhookService } from '../webhooks.ts';
import { objectBody } from './common.ts';

const url = z
  .string()
  .max(2048, { error: 'at most 2048 characters' })
  .refine(
    (s) => {
      try {
        const u = new URL(s);
        return u.protocol === 'http:' || u.protocol === 'https:';
      } catch {
        return false;
      }
    },
    { error: 'must be an absolute http(s) URL' },
  );

const description = z.string().max(500, { error: 'at most 500 characters' }).nullable();

const createSchema = z.strictObject({
  url,
  signal_types: signalTypes,
  description: description.optional(),
});

const updateSchema = z.strictObject({
  url: url.optional(),
  signal_types: signalTypes.optional(),
  description: description.optional(),
  status: z.enum(['active', 'paused'], { error: 'must be active or paused' }).optional(),
});

function find(req: ApiRequest, ctx: ApiContext): Subscription {
  const sub = ctx.webhooks.get(req.account, req.params['id']!);
  if (!sub) throw notFound(`no webhook ${req.params['id']}`);
  return sub;
}

export const webhookRoutes: Route[] = [
  {
    method: 'POST',
    path: '/v1/webhooks',
    handler: (req, ctx) => {
      const body = parse(createSchema, req.body);
      const sub = ctx.webhooks.create(req.account, body.url, body.signal_types, body.description ?? null);
      if (sub === 'limit') throw validationError('url', 'too many webhook subscriptions for this account');
      return { status: 201, body: WebhookService.view(sub, true) };
    },
  },
  {
    method: 'GET',
    path: '/v1/webhooks',
    handler: (req, ctx) => ({ body: { webhooks: ctx.webhooks.list(req.account).map((s) => WebhookService.view(s)) } }),
  },
  {
    method: 'GET',
    path: '/v1/webhooks/:id',
    handler: (req, ctx) => ({ body: WebhookService.view(find(req, ctx)) }),
  },
  {
    method: 'PATCH',
    path: '/v1/webhooks/:id',
    handler: (req, ctx) => {
      const body = parse(updateSchema, objectBody(req.body));
      const sub = find(req, ctx);
      const patch: Parameters<typeof ctx.webhooks.update>[1] = {};
      if (body.url !== undefined) patch.url = body.url;
      if (body.signal_types !== undefined) patch.signal_types = body.signal_types;
      if (body.description !== undefined) patch.description = body.description;
      if (body.status !== undefined) patch.status = body.status;
      return { body: WebhookService.view(ctx.webhooks.update(sub, patch)) };
    },
  },
  {
    method: 'DELETE',
    path: '/v1/webhooks/:id',
    handler: (req, ctx) => {
      const sub = find(req, ctx);
      ctx.webhooks.delete(sub);
      return { body: { webhook_id: sub.webhook_id, deleted: true } };
    },
  },
  {
    method: 'POST',
    path: '/v1/webhooks/:id/test',
    handler: async (req, ctx) => {
      objectBody(req.body);
      const sub = find(req, ctx);
      const type = sub.signal_types[0] ?? 'news';
      const typeIndex = TYPE_INDEX.get(type) ?? 0;
      const catalog = ctx.store.catalog;
      const n = ctx.webhooks.nextTestNumber();
      const profile = catalog.company(n % catalog.domains.length);
      const sample = buildEmittedSignal(ctx.store.seed, 0x7e570000 + n, profile, typeIndex, req.now);
      const r = await ctx.webhooks.test(sub, sample);
      const out: Record<string, unknown> = { delivered: r.delivered, status_code: r.status, attempts: 1 };
      if (r.error) out['error'] = r.error;
      return { body: out };
    },
  },
];
