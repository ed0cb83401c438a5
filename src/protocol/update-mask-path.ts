/**
 * One update_mask path as QueueConfig reads it: a field's name, or a map
 * field with one key (AIP-161's map-key paths, e.g. tags.team or
 * tags.`team-a`).
 */
export interface UpdateMaskPath {
  readonly field: string;
  /** The map key the path names; undefined when it names the field whole. */
  readonly key?: string | undefined;
}

// A key written bare; any other key (dots, dashes, spaces, a leading digit, empty) goes in backticks.
const bareKey = /^[A-Za-z_][A-Za-z0-9_]*$/;

/**
 * Reads a path: `field`, `field.key` with a bare key, or `field.` then a key
 * in backticks where a backtick is written twice (AIP-161 allows backticks
 * but fixes no escape; doubling is the rule of SQL's quoted names). Returns
 * undefined for anything else.
 */
export function parseUpdateMaskPath(path: string): UpdateMaskPath | undefined {
  const dot = path.indexOf(".");
  if (dot === -1) return { field: path };
  const field = path.slice(0, dot);
  const rest = path.slice(dot + 1);
  if (bareKey.test(rest)) return { field, key: rest };
  if (!rest.startsWith("`") || !rest.endsWith("`") || rest.length < 2) return undefined;
  const quoted = rest.slice(1, -1);
  // Every backtick inside comes in pairs: a lone one would have closed the key early.
  if (quoted.replaceAll("``", "").includes("`")) return undefined;
  return { field, key: quoted.replaceAll("``", "`") };
}

/** The path naming one key of a map field: bare when it can be, else in backticks with each backtick doubled. */
export function mapKeyPath(field: string, key: string): string {
  return bareKey.test(key) ? `${field}.${key}` : `${field}.\`${key.replaceAll("`", "``")}\``;
}
