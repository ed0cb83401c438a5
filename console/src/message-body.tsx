// A message body in the form that reads best: JSON pretty-printed when it
// is JSON, plain text when it is UTF-8, hex otherwise; the user can switch.
import { useId, useState } from "preact/hooks";

type View = "json" | "text" | "hex";

// A body can be up to 1 MiB; its hex dump is cut here so a page of messages stays quick to render.
const hexLimitBytes = 4096;

/** The bytes of a base64 string. */
function bytesOf(base64: string): Uint8Array {
  const binary = atob(base64);
  return Uint8Array.from(binary, (char) => char.charCodeAt(0));
}

/** A hex dump, 16 bytes a line, with offsets. */
export function hexDump(bytes: Uint8Array): string {
  const lines: string[] = [];
  for (let offset = 0; offset < Math.min(bytes.length, hexLimitBytes); offset += 16) {
    const row = Array.from(bytes.subarray(offset, offset + 16), (byte) => byte.toString(16).padStart(2, "0"));
    lines.push(`${offset.toString(16).padStart(6, "0")}  ${row.join(" ")}`);
  }
  if (bytes.length > hexLimitBytes) lines.push(`… ${bytes.length - hexLimitBytes} more bytes`);
  return lines.join("\n");
}

function prettyJson(text: string | null): string | null {
  if (text === null) return null;
  const trimmed = text.trim();
  // Only objects and arrays: "42" or "true" are as readable as text.
  if (!trimmed.startsWith("{") && !trimmed.startsWith("[")) return null;
  try {
    return JSON.stringify(JSON.parse(trimmed), null, 2);
  } catch {
    return null;
  }
}

/** The body viewer of one message, with a toggle between the views it supports. */
export function MessageBody({ body, bodyText }: { body: string; bodyText: string | null }) {
  const json = prettyJson(bodyText);
  const views: View[] = [
    ...(json === null ? [] : ["json" as const]),
    ...(bodyText === null ? [] : ["text" as const]),
    "hex",
  ];
  const [view, setView] = useState<View>(views[0]!);
  const id = useId();
  const bytes = view === "hex" ? bytesOf(body) : null;
  const shown = view === "json" ? json : view === "text" ? bodyText : hexDump(bytes!);
  const labels: Record<View, string> = { json: "JSON", text: "Text", hex: "Hex" };
  return (
    <div class="message-body">
      {/* biome-ignore lint/a11y/useSemanticElements: a toolbar of toggle buttons, not a form's fieldset */}
      <div class="body-views" role="group" aria-label="Show the body as">
        {views.map((option) => (
          <button
            key={option}
            type="button"
            aria-pressed={view === option}
            onClick={() => setView(option)}
            aria-controls={id}
          >
            {labels[option]}
          </button>
        ))}
      </div>
      {/* biome-ignore lint/a11y/noNoninteractiveTabindex: a scrollable region must take focus to scroll by keyboard (axe's scrollable-region-focusable) */}
      <pre id={id} class="body" tabIndex={0}>
        {shown === "" ? <span class="muted">(empty body)</span> : shown}
      </pre>
    </div>
  );
}
