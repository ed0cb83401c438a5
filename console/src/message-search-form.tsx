// The message browser's search box: which part of a message to search, and
// the text, case-insensitive. The broker reads a bounded stretch of the
// queue per search, and the page offers to search further.
import { useId, useState } from "preact/hooks";
import type { SearchField } from "./triage-api.js";

/** A search as submitted. */
export interface MessageSearch {
  readonly field: SearchField;
  readonly text: string;
}

const hints: Record<SearchField, string> = {
  id: "All or part of a message id.",
  body: "Text in the body; a body that is not UTF-8 text never matches.",
  attribute: "name=value, name=, =value, or text found in a name or a value.",
};

/** The search form; `onClear` appears once a search is shown. */
export function MessageSearchForm({
  onSearch,
  onClear,
  busy,
}: {
  onSearch: (search: MessageSearch) => void;
  onClear: (() => void) | null;
  busy: boolean;
}) {
  const [field, setField] = useState<SearchField>("body");
  const [text, setText] = useState("");
  const id = useId();
  return (
    <form
      class="message-search"
      aria-label="Search messages"
      onSubmit={(event) => {
        event.preventDefault();
        if (text !== "") onSearch({ field, text });
      }}
    >
      <div class="field">
        <label for={`${id}-field`}>Search in</label>
        <select
          id={`${id}-field`}
          value={field}
          onChange={(event) => setField(event.currentTarget.value as SearchField)}
        >
          <option value="id">Message id</option>
          <option value="body">Body text</option>
          <option value="attribute">Attributes</option>
        </select>
      </div>
      <div class="field search-text">
        <label for={`${id}-text`}>Search for</label>
        <input
          id={`${id}-text`}
          type="search"
          value={text}
          onInput={(event) => setText(event.currentTarget.value)}
          aria-describedby={`${id}-hint`}
          spellcheck={false}
        />
        <p class="hint muted" id={`${id}-hint`}>
          {hints[field]} Case does not matter.
        </p>
      </div>
      <div class="search-buttons">
        <button type="submit" disabled={busy || text === ""}>
          Search
        </button>
        {onClear !== null && (
          <button type="button" onClick={onClear}>
            Clear search
          </button>
        )}
      </div>
    </form>
  );
}
