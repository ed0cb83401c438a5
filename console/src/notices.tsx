// The page's live region: short confirmations ("Queue jobs purged: 42
// messages") that screen readers announce politely without moving focus.
import { createContext, type ComponentChildren } from "preact";
import { useCallback, useContext, useRef, useState } from "preact/hooks";

type Notify = (message: string) => void;

const NoticeContext = createContext<Notify>(() => {});

/** The function that shows a notice in the page's status region. */
export function useNotify(): Notify {
  return useContext(NoticeContext);
}

// A notice stays this long; long enough to read at 3 a.m., short enough not to go stale.
const noticeMs = 8000;

/** Provides useNotify to its children and renders the status region they write to. */
export function NoticeProvider({ children }: { children: ComponentChildren }) {
  const [notice, setNotice] = useState("");
  const timer = useRef<ReturnType<typeof setTimeout> | undefined>(undefined);
  const notify = useCallback((message: string) => {
    clearTimeout(timer.current);
    setNotice(message);
    timer.current = setTimeout(() => setNotice(""), noticeMs);
  }, []);
  return (
    <NoticeContext.Provider value={notify}>
      {children}
      {/* Always in the page, even empty: a live region added with its text is often not announced. */}
      <div class="notice" role="status" aria-live="polite" data-testid="notice">
        {notice}
      </div>
    </NoticeContext.Provider>
  );
}

/** An error for the user, announced at once; nothing when there is none. */
export function ErrorMessage({ error, id }: { error: string | null; id?: string }) {
  if (error === null) return null;
  return (
    <p class="error" role="alert" {...(id === undefined ? {} : { id })}>
      {error}
    </p>
  );
}
