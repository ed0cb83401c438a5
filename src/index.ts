// The package's API is the TypeScript client: the same one @holdshelf/client
// ships without the server's dependencies (packages/client).
export * from "./client/index.js";
