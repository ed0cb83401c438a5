// Actions the session's token may not take are shown disabled, with the
// reason in words beside them, instead of failing after the click (issue
// #36). The broker still checks every call: this only shapes the page.
import type { ComponentChildren } from "preact";
import { useId } from "preact/hooks";
import type { QueuePermissions } from "./api-types.js";

/** A permission an action needs on its queue: send, receive or admin. */
export type Needed = keyof QueuePermissions;

/** Why the token may not take an action on `queue`, in words; null when it may. */
export function deniedReason(permissions: QueuePermissions, needed: Needed, queue: string): string | null {
  return permissions[needed] ? null : `needs ${needed} permission on ${queue}`;
}

interface ActionButtonProps {
  /** Null when the token may take the action; else the reason, shown beside the disabled button. */
  readonly denied: string | null;
  readonly class?: string;
  readonly busy?: boolean;
  readonly type?: "button" | "submit";
  readonly onClick?: () => void;
  readonly children: ComponentChildren;
  readonly testId?: string;
}

/** A button that is disabled, with its reason said beside it and in its accessible description, when the token may not use it. */
export function ActionButton({
  denied,
  busy = false,
  type = "button",
  onClick,
  children,
  testId,
  ...rest
}: ActionButtonProps) {
  const id = useId();
  return (
    <span class="action">
      <button
        type={type}
        class={rest.class}
        disabled={denied !== null || busy}
        onClick={onClick}
        title={denied ?? undefined}
        aria-describedby={denied === null ? undefined : `${id}-denied`}
        data-testid={testId}
      >
        {children}
      </button>
      {denied !== null && <DeniedReason id={`${id}-denied`}>{denied}</DeniedReason>}
    </span>
  );
}

/** The words saying why an action is disabled. */
export function DeniedReason({ id, children }: { id: string; children: ComponentChildren }) {
  return (
    <span class="denied" id={id}>
      {children}
    </span>
  );
}
