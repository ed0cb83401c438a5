import type { Scenario } from "../scenario.js";
import { batchedPipeline } from "./batched-pipeline.js";
import { longPollLatency } from "./long-poll-latency.js";
import { singlePipeline } from "./single-pipeline.js";

/** Every scenario of `npm run bench`, in the order they run (3 reads 2's rate). */
export const scenarios: Scenario[] = [batchedPipeline, singlePipeline, longPollLatency];
