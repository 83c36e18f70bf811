// The kit's workflows plus the smoke workflow, the smallest proof that workflows, workers and the server agree: the
// bundle of every test's job environment. Production workers register workflows/index.ts alone.
export * from '../workflows/index.ts';
export { smokeWorkflow } from './smoke-workflow.ts';
