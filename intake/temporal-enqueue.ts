/**
 * The intake's `enqueue` wired to Temporal: start `deliverSignalEvent` with workflow id `signal-<signal.id>`.
 *
 * The workflow id is the dedupe key: `REJECT_DUPLICATE` refuses a second start for as long as the namespace retains
 * the first execution (running or closed), and the refusal (`WorkflowExecutionAlreadyStartedError`) is answered
 * `200 {duplicate: true}` by the receiver, starting nothing. That is why the receiver keeps no replay cache.
 */
import { type Client, WorkflowExecutionAlreadyStartedError } from '@temporalio/client';
import { signalWorkflowId } from '../connectors/webhooks/events.ts';
import type { DeliverSignalEventInput } from '../workflows/webhook-delivery.ts';
import type { Enqueue } from './options.ts';

export interface TemporalEnqueueOptions {
  client: Client;
  taskQueue: string;
  /** Extra workflow input (schedule, destinations...) merged into every start. */
  input?: Omit<DeliverSignalEventInput, 'event'>;
}

export function temporalEnqueue({ client, taskQueue, input }: TemporalEnqueueOptions): Enqueue {
  return async (event) => {
    const workflowId = signalWorkflowId(event.signal.id);
    try {
      await client.workflow.start('deliverSignalEvent', {
        taskQueue,
        workflowId,
        args: [{ ...input, event } satisfies DeliverSignalEventInput],
        workflowIdReusePolicy: 'REJECT_DUPLICATE',
        workflowIdConflictPolicy: 'FAIL',
      });
      return { duplicate: false, workflowId };
    } catch (err) {
      if (err instanceof WorkflowExecutionAlreadyStartedError) return { duplicate: true, workflowId };
      throw err;
    }
  };
}
