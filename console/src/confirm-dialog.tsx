// A modal confirmation for what cannot be undone (purge, delete): a native
// <dialog> opened with showModal, so the browser traps focus and Escape
// cancels; focus goes back to the button that opened it.
import type { ComponentChildren } from "preact";
import { useEffect, useId, useRef, useState } from "preact/hooks";
import { messageOf } from "./form-errors.js";
import { ErrorMessage } from "./notices.js";

interface ConfirmDialogProps {
  readonly title: string;
  readonly children: ComponentChildren;
  /** The confirm button's text, which says what it does: "Purge 42 messages". */
  readonly confirmLabel: string;
  /** When set, the confirm button waits until this exact text is typed (the queue's name). */
  readonly typeToConfirm?: string;
  readonly onConfirm: () => Promise<void>;
  readonly onClose: () => void;
}

/** The dialog, open while it is rendered; `onClose` hears of cancel, Escape, and a confirm that worked. */
export function ConfirmDialog({
  title,
  children,
  confirmLabel,
  typeToConfirm,
  onConfirm,
  onClose,
}: ConfirmDialogProps) {
  const dialog = useRef<HTMLDialogElement>(null);
  const typedInput = useRef<HTMLInputElement>(null);
  const cancelButton = useRef<HTMLButtonElement>(null);
  const id = useId();
  const [typed, setTyped] = useState("");
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | null>(null);

  useEffect(() => {
    const opener = document.activeElement as HTMLElement | null;
    dialog.current!.showModal();
    // The safe choice takes focus: the typed name, or Cancel.
    (typedInput.current ?? cancelButton.current)?.focus();
    return () => opener?.focus();
  }, []);

  const confirm = async (event: Event) => {
    event.preventDefault();
    setBusy(true);
    setError(null);
    try {
      await onConfirm();
      onClose();
    } catch (caught) {
      setError(messageOf(caught));
      setBusy(false);
    }
  };

  const ready = typeToConfirm === undefined || typed === typeToConfirm;
  return (
    <dialog
      ref={dialog}
      class="confirm"
      aria-labelledby={`${id}-title`}
      aria-describedby={`${id}-body`}
      // Escape fires "cancel"; the page, not the browser, decides the dialog is gone.
      onCancel={(event) => {
        event.preventDefault();
        if (!busy) onClose();
      }}
    >
      <form onSubmit={confirm}>
        <h2 id={`${id}-title`}>{title}</h2>
        <div id={`${id}-body`}>{children}</div>
        {typeToConfirm !== undefined && (
          <div class="field">
            <label for={`${id}-typed`}>Type the queue name, {typeToConfirm}, to confirm</label>
            <input
              id={`${id}-typed`}
              ref={typedInput}
              value={typed}
              onInput={(event) => setTyped(event.currentTarget.value)}
              autocomplete="off"
              spellcheck={false}
            />
          </div>
        )}
        <ErrorMessage error={error} />
        <div class="dialog-buttons">
          <button type="button" ref={cancelButton} onClick={onClose} disabled={busy}>
            Cancel
          </button>
          <button type="submit" class="danger" disabled={!ready || busy}>
            {confirmLabel}
          </button>
        </div>
      </form>
    </dialog>
  );
}
