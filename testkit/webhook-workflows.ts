// The webhook workflows, for a worker (or a test) that registers only these. The main worker registers them
// through workflows/index.ts.
export { bucketCollector } from '../workflows/bucket-collector.ts';
export { deliverSignalEvent } from '../workflows/webhook-delivery.ts';
