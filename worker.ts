// `signal-kit/worker`: run the kit's worker inside your own process, or host the workflows on your own worker.
// A separate entry so that `import 'signal-kit'` (the client) does not load Temporal's native worker runtime.
export {
  type ActivityDeps,
  createApiActivities,
  createMainQueueActivities,
} from './activities/registry.ts';
export { ConfigError, parseWorkerConfig, type WorkerConfig } from './config/worker.ts';
export { type StartWorkerOptions, startWorker, type WorkerHandle, workflowsPath } from './workers/worker.ts';
