import { readdirSync, readFileSync, statSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import ts from "typescript";

/** The repository's root folder. */
export const root = resolve(dirname(fileURLToPath(import.meta.url)), "../..");

/** One import of one file, as written and as resolved. */
export interface Edge {
  readonly from: string;
  readonly specifier: string;
  /** The repository path of a relative import; undefined for a package. */
  readonly file: string | undefined;
}

/** Every module a file names in an import, export ... from, or import(), read by TypeScript's own pre-parser. */
export function importsOf(file: string): Edge[] {
  const { importedFiles } = ts.preProcessFile(readFileSync(join(root, file), "utf8"), true, true);
  return importedFiles.map(({ fileName: specifier }) => {
    if (!specifier.startsWith(".")) return { from: file, specifier, file: undefined };
    // NodeNext: sources import each other by their .js output names.
    const target = relative(root, resolve(root, dirname(file), specifier)).replace(/\.js$/, ".ts");
    return { from: file, specifier, file: target };
  });
}

/** The repository paths of the TypeScript files under a folder, sorted. */
export function sourceFiles(folder: string): string[] {
  const found: string[] = [];
  const walk = (path: string): void => {
    for (const name of readdirSync(join(root, path)).sort()) {
      const child = `${path}/${name}`;
      if (statSync(join(root, child)).isDirectory()) walk(child);
      else if (name.endsWith(".ts")) found.push(child);
    }
  };
  walk(folder);
  return found;
}
