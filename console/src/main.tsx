// The console's entry point: renders the app into the page's one element.
import { render } from "preact";
import { App } from "./app.js";

render(<App />, document.getElementById("app")!);
