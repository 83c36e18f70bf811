/** The dev stack's smoke test: proves a worker can run an activity scheduled by a workflow. */
export interface SmokeActivities {
  greet(name: string): Promise<string>;
}

export function createSmokeActivities(): SmokeActivities {
  return {
    async greet(name) {
      return `Hello, ${name}! (from pid ${process.pid})`;
    },
  };
}
