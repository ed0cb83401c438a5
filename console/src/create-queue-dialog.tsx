// The queue list's Create queue dialog (issue #36: the form filled most of
// the list). A native <dialog> opened with showModal: the browser keeps focus
// inside and Escape closes it; the name takes focus on opening, and focus
// goes back to the button that opened it on closing.
import { useEffect, useRef } from "preact/hooks";
import type { QueueView } from "./api-types.js";
import { CreateQueueForm } from "./create-queue-form.js";

/** The dialog, open while it is rendered; `onClose` hears of Cancel, Escape and a queue created. */
export function CreateQueueDialog({
  onCreated,
  onClose,
}: {
  onCreated: (queue: QueueView) => void;
  onClose: () => void;
}) {
  const dialog = useRef<HTMLDialogElement>(null);

  useEffect(() => {
    const opener = document.activeElement as HTMLElement | null;
    dialog.current!.showModal();
    dialog.current!.querySelector<HTMLInputElement>("#create-name")?.focus();
    return () => opener?.focus();
  }, []);

  return (
    <dialog
      ref={dialog}
      class="form-dialog"
      aria-labelledby="create-queue-heading"
      // Escape fires "cancel"; the page, not the browser, decides the dialog is gone.
      onCancel={(event) => {
        event.preventDefault();
        onClose();
      }}
    >
      <CreateQueueForm
        onCancel={onClose}
        onCreated={(queue) => {
          onCreated(queue);
          onClose();
        }}
      />
    </dialog>
  );
}
