#!/usr/bin/env node
// The package's command; the TypeScript is compiled to dist/ by `npm ci` (prepare).
import { main } from "../dist/src/cli/main.js";

process.exitCode = await main(process.argv.slice(2));
