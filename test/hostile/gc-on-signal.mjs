// Preloaded (NODE_OPTIONS --import, with --expose-gc) into a broker process
// by tests that measure its memory: SIGUSR2 runs a full garbage collection,
// so that the heap figures its metrics report show what is live, not what
// merely waits to be collected. Each collection done writes its count to the
// file HOLDSHELF_GC_MARKER names: the test waits for that, not for the
// broker's GC metrics, because prom-client records only the first GC of
// each batch its performance observer is handed, so a forced collection that
// lands beside a minor one is often not counted at all.
import { writeFileSync } from "node:fs";

let collections = 0;
process.on("SIGUSR2", () => {
  // Without --expose-gc nothing is collected, and no count is written: the test then fails rather than compare garbage.
  if (typeof globalThis.gc !== "function") return;
  globalThis.gc();
  collections += 1;
  if (process.env["HOLDSHELF_GC_MARKER"]) writeFileSync(process.env["HOLDSHELF_GC_MARKER"], String(collections));
});
