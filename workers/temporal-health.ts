/** Whether Temporal answers right now: a cheap frontend call (GetSystemInfo) with a short deadline. */
interface Answering {
  withDeadline<T>(deadline: number | Date, fn: () => Promise<T>): Promise<T>;
  workflowService: { getSystemInfo(request: object): Promise<{ serverVersion?: string | null }> };
}

export async function temporalAnswers(connection: Answering, address: string, timeoutMs = 2_000): Promise<string> {
  const info = await connection.withDeadline(Date.now() + timeoutMs, () =>
    connection.workflowService.getSystemInfo({}),
  );
  return `Temporal ${info.serverVersion ?? ''} at ${address} answers`.replace('  ', ' ');
}
