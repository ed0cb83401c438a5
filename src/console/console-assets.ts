import { createHash } from "node:crypto";
import { existsSync } from "node:fs";
import { readdir, readFile } from "node:fs/promises";
import { extname, join, relative, sep } from "node:path";
import { fileURLToPath } from "node:url";

/** One built file, held in memory: the console's bundle is small. */
export interface ConsoleAsset {
  readonly body: Buffer;
  readonly contentType: string;
  readonly etag: string;
  /** Vite names assets by their content's hash, so they never change under one name. */
  readonly immutable: boolean;
}

const contentTypes: Record<string, string> = {
  ".html": "text/html; charset=utf-8",
  ".js": "text/javascript; charset=utf-8",
  ".css": "text/css; charset=utf-8",
  ".svg": "image/svg+xml",
  ".png": "image/png",
  ".ico": "image/x-icon",
  ".woff2": "font/woff2",
  ".json": "application/json",
  ".txt": "text/plain; charset=utf-8",
};

/**
 * Where `npm run build` put the console's files: dist/console, found from
 * this module whether it runs built (dist/src/console) or as source
 * (src/console, under vitest). The UI's sources in console/ have an
 * index.html too, but no built assets/, so they are never mistaken for it.
 */
export function builtAssetsDir(): string | undefined {
  const candidates = [new URL("../../console/", import.meta.url), new URL("../../dist/console/", import.meta.url)].map(
    (url) => fileURLToPath(url),
  );
  return candidates.find((dir) => existsSync(join(dir, "index.html")) && existsSync(join(dir, "assets")));
}

/** Every file under `dir`, by its URL path ("/index.html", "/assets/index-3f2a.js"). */
export async function loadAssets(dir: string): Promise<Map<string, ConsoleAsset>> {
  const assets = new Map<string, ConsoleAsset>();
  for (const entry of await readdir(dir, { recursive: true, withFileTypes: true })) {
    if (!entry.isFile()) continue;
    const path = join(entry.parentPath, entry.name);
    const urlPath = `/${relative(dir, path).split(sep).join("/")}`;
    const body = await readFile(path);
    assets.set(urlPath, {
      body,
      contentType: contentTypes[extname(path)] ?? "application/octet-stream",
      etag: `"${createHash("sha256").update(body).digest("base64url").slice(0, 22)}"`,
      immutable: urlPath.startsWith("/assets/"),
    });
  }
  return assets;
}
