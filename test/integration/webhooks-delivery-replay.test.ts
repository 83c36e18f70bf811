/**
 * A delivery started by the release before destinations were listed in a local activity replays on the current
 * workflow code: the change is behind a patch, so deliveries already waiting out their retry schedule go on.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { Worker } from '@temporalio/worker';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createWebhookDeliveryActivities } from '../../activities/webhook-delivery.ts';
import { openStore } from '../../connectors/storage/index.ts';
import { webhookDeliveryConfig } from '../../connectors/webhooks/destinations.ts';
import { generateWebhookSecret } from '../../connectors/webhooks/signature.ts';
import { acmeSignalEvent } from '../helpers/signal-event.ts';
import { startWorkflowTestbed, type WorkflowTestbed } from '../helpers/temporal-stack.ts';

const previousRelease = fileURLToPath(
  new URL('../fixtures/webhook-delivery-before-local-destinations.ts', import.meta.url),
);
const currentWorkflows = fileURLToPath(new URL('../../workflows/webhook-workflows.ts', import.meta.url));

describe('deliverSignalEvent across the local-activity release', () => {
  let tb: WorkflowTestbed<{ temporal: true; s3: false; gcs: false }>;
  let destination: Server;

  beforeAll(async () => {
    tb = await startWorkflowTestbed({ temporal: true, s3: false, gcs: false }, previousRelease, 'delivery-replay');
    destination = createServer((req, res) => {
      req.resume();
      req.on('end', () => res.writeHead(204).end());
    });
    await new Promise<void>((resolve) => destination.listen(0, '127.0.0.1', resolve));
  });

  afterAll(async () => {
    destination?.closeAllConnections();
    await new Promise<void>((resolve) => (destination ? destination.close(() => resolve()) : resolve()));
    await tb?.stop();
  });

  it('replays a delivery the previous release made on the current code', async () => {
    const url = `http://127.0.0.1:${(destination.address() as AddressInfo).port}/hook`;
    const config = webhookDeliveryConfig({
      destinations: [{ id: 'crm', kind: 'http', url, secret: generateWebhookSecret() }],
      deadLetterUrl: pathToFileURL(`${tb.workDir}/dead-letters`).href,
      allowlist: ['127.0.0.1/32'],
    });
    const taskQueue = `delivery-replay-${Date.now()}`;
    const { worker, done } = await tb.startWorker({
      taskQueue,
      activities: createWebhookDeliveryActivities({ config, openStore }),
    });
    try {
      const event = acmeSignalEvent({ type: 'news', title: 'Acme opens an office', data: { summary: 'office' } });
      const handle = await tb.client.workflow.start('deliverSignalEvent', {
        taskQueue,
        workflowId: `signal-${event.signal.id}`,
        args: [{ event }],
      });
      const result = (await handle.result()) as { destinations: { id: string; outcome: string }[] };
      expect(result.destinations.map((d) => [d.id, d.outcome])).toEqual([['crm', 'delivered']]);
      const history = await handle.fetchHistory();
      // The previous release's shape: the destinations were listed by an activity task.
      const scheduled = history.events?.flatMap(
        (e) => e.activityTaskScheduledEventAttributes?.activityType?.name ?? [],
      );
      expect(scheduled).toEqual(['listWebhookDestinations', 'deliverToEndpoint']);

      await expect(
        Worker.runReplayHistory({ workflowsPath: currentWorkflows }, history, handle.workflowId),
      ).resolves.toBeUndefined();
    } finally {
      worker.shutdown();
      await done;
    }
  });
});
