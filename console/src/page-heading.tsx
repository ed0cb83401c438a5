// Each page's one h1, which also names the tab and takes focus when the page
// opens, so a screen reader hears where a link led.
import type { ComponentChildren } from "preact";
import { useEffect, useRef } from "preact/hooks";

// The first page of a visit leaves focus where the browser puts it, at the start of the document.
let firstPage = true;

/** The page's h1; `title` is the tab's title (the h1's text may hold markup). */
export function PageHeading({ title, children }: { title: string; children: ComponentChildren }) {
  const heading = useRef<HTMLHeadingElement>(null);
  useEffect(() => {
    document.title = `${title} · holdshelf console`;
  }, [title]);
  useEffect(() => {
    if (!firstPage) heading.current?.focus();
    firstPage = false;
  }, []);
  return (
    <h1 ref={heading} tabIndex={-1}>
      {children}
    </h1>
  );
}
