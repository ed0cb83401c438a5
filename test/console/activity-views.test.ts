import { create } from "@bufbuild/protobuf";
import { durationFromMs } from "@bufbuild/protobuf/wkt";
import { describe, expect, it } from "vitest";
import { QueueActivitySchema } from "../../gen/holdshelf/v1/queue_service_pb.js";
import { activitySeries, rowRates, totalRates } from "../../src/console/activity-views.js";

/** A queue's activity sampled at `times`, sending at `sent` messages a second over each interval. */
function activity(queue: string, times: number[], sent: number[]) {
  return create(QueueActivitySchema, {
    queue,
    sampleInterval: durationFromMs(10_000),
    sampleTimeMs: times.map(BigInt),
    visible: times.map(() => 1n),
    inFlight: times.map(() => 0n),
    delayed: times.map(() => 0n),
    oldestMessageAgeMs: times.map(() => -1n),
    sentPerSecond: sent,
    receivedPerSecond: times.map(() => 0),
    deletedPerSecond: times.map(() => 0),
    deadLetteredPerSecond: times.map(() => 0),
    arrivedPerSecond: times.map(() => 0),
  });
}

describe("the console's activity views", () => {
  it("gives a row's average as the events of the intervals its points cover, over their length", () => {
    // 0.5/s over a 10 s interval, then 1/s over a 20 s one: 25 messages in 30 s.
    const row = rowRates(activity("q", [0, 10_000, 30_000], [9, 0.5, 1]));
    expect(row.rates).toMatchObject({ t: [10_000, 30_000], sent: [0.5, 1] });
    expect(row.rateWindowMs).toBe(30_000);
    expect(row.averageRates.sent).toBeCloseTo(25 / 30, 12);
    expect(rowRates(undefined)).toMatchObject({ rateWindowMs: 0, averageRates: { sent: 0 }, rates: { t: [] } });
  });

  it("adds many queues' rates on the sample grid, whenever each broker sampled", () => {
    const total = totalRates(
      [activity("a", [0, 10_000, 20_000], [7, 1, 2]), activity("b", [1_200, 11_200, 21_200], [7, 10, 20])],
      5,
    );
    expect(total).toMatchObject({ t: [10_000, 20_000], sent: [11, 22] });
    expect(totalRates([activity("a", [0, 10_000, 20_000], [0, 1, 2])], 1)).toMatchObject({ t: [20_000], sent: [2] });
  });

  it("leaves out the newest slot while only some brokers have sampled it", () => {
    // Broker a sampled at 29.8 s (slot 30 s); broker b last sampled at 24.1 s (slot 20 s).
    const total = totalRates(
      [activity("a", [9_800, 19_800, 29_800], [7, 1, 2]), activity("b", [4_100, 14_100, 24_100], [7, 10, 20])],
      2,
    );
    expect(total).toMatchObject({ t: [10_000, 20_000], sent: [10, 21] });
  });

  it("ends a queue's series at now with the counts the page shows, and no rate there", () => {
    const series = activitySeries(activity("q", [0, 10_000], [0, 1]), 12_345, {
      visible: 7,
      inFlight: 1,
      delayed: 0,
      oldestMessageAgeMs: 500,
    });
    expect(series).toMatchObject({
      t: [0, 10_000, 12_345],
      visible: [1, 1, 7],
      inFlight: [0, 0, 1],
      oldestAgeMs: [null, null, 500],
      sent: [0, 1, null],
    });
  });

  it("keeps the series' times ascending when the owner's clock is ahead of this broker's", () => {
    const series = activitySeries(activity("q", [0, 10_000], [0, 1]), 9_000, {
      visible: 7,
      inFlight: 1,
      delayed: 0,
      oldestMessageAgeMs: null,
    });
    expect(series.t).toEqual([0, 10_000, 10_000]);
  });
});
