/** What a call made with a client throws, the client closed either way; the test fails when the call does not throw. */
export async function thrownBy<C extends { close(): Promise<void> }>(
  client: C,
  call: (client: C) => Promise<unknown>,
  expected: string,
): Promise<unknown> {
  try {
    await call(client);
  } catch (error) {
    return error;
  } finally {
    await client.close();
  }
  throw new Error(expected);
}
