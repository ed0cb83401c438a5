import { UsageError } from "./usage-error.js";

/**
 * One command-line option, declared once: the parser's options and the help
 * text are both made from it, so they cannot drift.
 */
export interface OptionSpec {
  readonly type: "string" | "boolean";
  /** One line for the help. */
  readonly description: string;
  /** The environment variable that sets it when the flag is not given. */
  readonly env?: string;
  /** The value the parser gets when neither the flag nor its variable is set. */
  readonly default?: string;
  /** The default the help shows when the command, not the parser, applies it (the parser must see what was given). */
  readonly shownDefault?: string;
  /** What the value is, in the help: FILE, URL, 30s. */
  readonly value?: string;
  /** May be given more than once. */
  readonly multiple?: boolean;
}

/** A command's options by flag name (without the dashes). */
export type OptionTable = Readonly<Record<string, OptionSpec>>;

type ParserOption<S extends OptionSpec> = S["multiple"] extends true
  ? { type: S["type"]; multiple: true; default: string[] }
  : S["type"] extends "boolean"
    ? { type: "boolean"; default: boolean }
    : S extends { readonly default: string }
      ? { type: "string"; default: string }
      : { type: "string"; default?: string };

/** parseArgs' options for a table: each default is its environment variable's value, else its table default. */
export function parserOptions<T extends OptionTable>(
  table: T,
  env: NodeJS.ProcessEnv,
): { [K in keyof T]: ParserOption<T[K]> } {
  const options: Record<string, { type: string; multiple?: boolean; default?: unknown }> = {};
  for (const [flag, spec] of Object.entries(table)) {
    const fromEnv = spec.env === undefined ? undefined : env[spec.env];
    if (spec.multiple === true) options[flag] = { type: spec.type, multiple: true, default: [] };
    else if (spec.type === "boolean")
      options[flag] = { type: "boolean", default: spec.env === undefined ? false : envSwitch(spec.env, fromEnv) };
    else {
      const value = fromEnv ?? spec.default;
      options[flag] = value === undefined ? { type: "string" } : { type: "string", default: value };
    }
  }
  return options as { [K in keyof T]: ParserOption<T[K]> };
}

/** A boolean environment variable: unset, "", "false" or "0" is off; "true" or "1" is on; anything else is refused. */
function envSwitch(name: string, value: string | undefined): boolean {
  if (value === undefined || value === "" || value === "false" || value === "0") return false;
  if (value === "true" || value === "1") return true;
  throw new UsageError(`${name} is true or false, not "${value}"`);
}

/** The help lines of a table: each flag with its value, default, environment variable and description. */
export function optionHelp(table: OptionTable): string[] {
  const rows = Object.entries(table).map(([flag, spec]) => {
    const left = `--${flag}${spec.type === "string" ? ` ${spec.value ?? "VALUE"}` : ""}`;
    const shown = spec.shownDefault ?? spec.default;
    const notes = [
      // An empty default is "not given", which the description says in its own words.
      ...(shown === undefined || shown === "" ? [] : [`default ${shown}`]),
      ...(spec.env === undefined ? [] : [`env ${spec.env}`]),
      ...(spec.multiple === true ? ["repeatable"] : []),
    ];
    return { left, right: `${spec.description}${notes.length === 0 ? "" : ` (${notes.join("; ")})`}` };
  });
  const width = Math.min(36, Math.max(...rows.map((row) => row.left.length)));
  return rows.map(({ left, right }) =>
    left.length > width ? `  ${left}\n  ${" ".repeat(width)}  ${right}` : `  ${left.padEnd(width)}  ${right}`,
  );
}
