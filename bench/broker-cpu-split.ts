import { sampleProcess } from "./proc-stats.js";
import { measureWindow, microsPerMessage, type BenchBroker, type Window } from "./scenario.js";

/**
 * measureWindow, and where the broker's CPU per message went: its main
 * thread (JavaScript) and the kernel (socket I/O and fsyncs), each in µs per
 * message: where the two APIs of scenario 13, or a broker with and without
 * its console (scenario 14), differ.
 */
export async function measureBrokerCpuSplit<T>(
  broker: BenchBroker,
  messages: number,
  work: () => Promise<T>,
): Promise<{ window: Window; value: T; split: { brokerMainThreadMicros: number; brokerSystemMicros: number } }> {
  const before = sampleProcess(broker.pid);
  const { window, value } = await measureWindow(broker, work);
  const after = sampleProcess(broker.pid);
  const micros = (seconds: number): number => Number(microsPerMessage(seconds, messages).toFixed(1));
  return {
    window,
    value,
    split: {
      brokerMainThreadMicros: micros(after.mainThreadSeconds - before.mainThreadSeconds),
      brokerSystemMicros: micros(after.systemSeconds - before.systemSeconds),
    },
  };
}
