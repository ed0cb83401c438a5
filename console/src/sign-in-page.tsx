// The sign-in form, shown when the broker has an auth file and the browser
// has no session. The token goes to the broker once and is never kept.
import { useRef, useState } from "preact/hooks";
import { ApiError, signIn } from "./api.js";
import type { SignInAnswer } from "./api-types.js";
import { messageOf } from "./form-errors.js";
import { ErrorMessage } from "./notices.js";
import { PageHeading } from "./page-heading.js";

/** The sign-in page; `onSignedIn` hears of a session the broker set in its HttpOnly cookie. */
export function SignInPage({ onSignedIn }: { onSignedIn: (answer: SignInAnswer) => void }) {
  const input = useRef<HTMLInputElement>(null);
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);

  const submit = async (event: Event) => {
    event.preventDefault();
    const token = input.current!.value;
    // Cleared at once: the token should not sit in the page after it is sent.
    input.current!.value = "";
    setBusy(true);
    setError(null);
    try {
      onSignedIn(await signIn(token));
    } catch (caught) {
      setError(
        caught instanceof ApiError && caught.reason === "TOKEN_INVALID"
          ? "That access token is not valid. Check it and try again."
          : messageOf(caught),
      );
      input.current?.focus();
    } finally {
      setBusy(false);
    }
  };

  return (
    <section class="sign-in">
      <PageHeading title="Sign in">Sign in</PageHeading>
      <p>This broker requires an access token, one of those in its auth file.</p>
      <form onSubmit={submit}>
        <label for="access-token">Access token</label>
        <input
          id="access-token"
          ref={input}
          type="password"
          autocomplete="off"
          required
          aria-describedby={error === null ? undefined : "sign-in-error"}
        />
        <ErrorMessage error={error} id="sign-in-error" />
        <button type="submit" class="primary" disabled={busy}>
          Sign in
        </button>
      </form>
    </section>
  );
}
