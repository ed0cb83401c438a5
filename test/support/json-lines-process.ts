import { spawn, type ChildProcess } from "node:child_process";
import { once } from "node:events";

/** A child process that prints one JSON object per line on standard output. */
export interface JsonLinesProcess {
  readonly child: ChildProcess;
  /** Every line it printed so far, parsed. */
  readonly events: Record<string, unknown>[];
  /** Resolves with the first event (already printed or still to come) that `match` accepts. */
  waitFor(match: (event: Record<string, unknown>) => boolean, timeoutMs?: number): Promise<Record<string, unknown>>;
  /** Resolves with the exit code once it has exited. */
  exited(): Promise<number | null>;
  /** What it wrote to standard error, for failure messages. */
  stderr(): string;
}

/** Starts a program whose standard output is JSON lines. */
export function startJsonLines(command: string, args: string[], env: Record<string, string> = {}): JsonLinesProcess {
  const child = spawn(command, args, { stdio: ["ignore", "pipe", "pipe"], env: { ...process.env, ...env } });
  const events: Record<string, unknown>[] = [];
  const waiters = new Set<() => void>();
  let partial = "";
  let stderr = "";
  child.stdout!.on("data", (chunk: Buffer) => {
    const lines = (partial + chunk.toString()).split("\n");
    partial = lines.pop()!;
    for (const line of lines) if (line.trim() !== "") events.push(JSON.parse(line) as Record<string, unknown>);
    for (const waiter of [...waiters]) waiter();
  });
  child.stderr!.on("data", (chunk: Buffer) => (stderr += chunk.toString()));
  // "close", not "exit": only then has all its output been read.
  const exit = once(child, "close").then(([code]) => code as number | null);
  return {
    child,
    events,
    waitFor(match, timeoutMs = 15_000) {
      return new Promise((resolve, reject) => {
        const check = (): void => {
          const found = events.find(match);
          if (found === undefined) return;
          cleanup();
          resolve(found);
        };
        const timer = setTimeout(() => {
          cleanup();
          reject(
            new Error(
              `no matching event from ${command} within ${timeoutMs} ms; events: ${JSON.stringify(events.slice(-5))}; stderr: ${stderr}`,
            ),
          );
        }, timeoutMs);
        const gone = (): void => {
          cleanup();
          reject(new Error(`${command} exited before a matching event; stderr: ${stderr}`));
        };
        const cleanup = (): void => {
          clearTimeout(timer);
          waiters.delete(check);
          child.off("close", gone);
        };
        waiters.add(check);
        child.once("close", gone);
        check();
      });
    },
    exited: () => exit,
    stderr: () => stderr,
  };
}
