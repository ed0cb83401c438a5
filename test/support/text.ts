/** A message body (or anything carrying one) as UTF-8 text; undefined stays undefined, for optional bytes such as checkpoints. */
export function text(source: Uint8Array | { readonly body: Uint8Array }): string;
export function text(source: Uint8Array | undefined): string | undefined;
export function text(source: Uint8Array | { readonly body: Uint8Array } | undefined): string | undefined {
  if (source === undefined) return undefined;
  return Buffer.from(source instanceof Uint8Array ? source : source.body).toString("utf8");
}
