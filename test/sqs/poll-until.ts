/**
 * Polls `read` every 20 ms until `done` holds of its answer (10 s at most),
 * for work the broker does in the background on the real clock (dead-letter
 * moves, move tasks), which no answer waits for.
 */
export async function pollUntil<T>(read: () => Promise<T>, done: (value: T) => boolean): Promise<T> {
  for (let waited = 0; ; waited += 20) {
    const value = await read();
    if (done(value)) return value;
    if (waited > 10_000)
      throw new Error(
        `never done: ${JSON.stringify(value, (_, item: unknown) => (typeof item === "bigint" ? String(item) : item))}`,
      );
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}
