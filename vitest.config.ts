import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    include: ["test/**/*.test.ts"],
    // classic-level is a native addon: separate processes are the safe pool for it.
    pool: "forks",
    testTimeout: 20_000,
    hookTimeout: 20_000,
  },
});
