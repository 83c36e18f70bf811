import { DefaultFailureConverter } from '@temporalio/common';

/**
 * Loaded by path (`failureConverterPath`) by workers, clients and the workflow bundle when payload keys are set:
 * failure messages and stack traces move into a payload, which the encryption codec then seals, so an error that
 * quotes an input row or an event does not put contact data in history in the clear.
 */
export const failureConverter = new DefaultFailureConverter({ encodeCommonAttributes: true });
