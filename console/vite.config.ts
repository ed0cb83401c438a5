// Builds the admin console (issue #18) into dist/console, which the broker's
// console listener serves at / and /assets/*.
import { fileURLToPath } from "node:url";
import { defineConfig } from "vite";

const root = fileURLToPath(new URL(".", import.meta.url));

export default defineConfig({
  root,
  // Relative asset URLs, so the page also works behind a proxy that mounts it under a path.
  base: "./",
  // Vite 8 compiles TSX with oxc; without this it would emit react/jsx-runtime imports.
  oxc: { jsx: { runtime: "automatic", importSource: "preact" } },
  build: {
    outDir: fileURLToPath(new URL("../dist/console/", import.meta.url)),
    emptyOutDir: true,
    // The console's Content-Security-Policy allows no inline script, and the
    // preload polyfill is one; every browser the console supports has modulepreload.
    modulePreload: { polyfill: false },
    // Nothing inlined as data: URLs into CSS or JS: the bundle stays plain files.
    assetsInlineLimit: 0,
    target: "es2022",
    reportCompressedSize: true,
  },
});
