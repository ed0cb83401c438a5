import type { Scenario } from "../scenario.js";
import { batchedPipeline } from "./batched-pipeline.js";

/** Every scenario of `npm run bench`, in the order they run. */
export const scenarios: Scenario[] = [batchedPipeline];
