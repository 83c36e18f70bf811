export * from './connectors/signal-api/index.ts';
