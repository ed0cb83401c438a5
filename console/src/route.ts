// Hash routing: the broker serves only / and /assets/*, so every page of the
// console lives after the "#".
import { useEffect, useState } from "preact/hooks";

/** A page of the console. */
export type Route =
  | { readonly page: "overview" }
  | { readonly page: "queues" }
  | { readonly page: "cluster" }
  | { readonly page: "queue"; readonly name: string; readonly tab: QueueTab }
  | { readonly page: "messages"; readonly name: string }
  | { readonly page: "not-found"; readonly hash: string };

/** A tab of a queue's page, each at its own fragment: "#/queues/jobs/settings". The Messages tab is the "messages" page. */
export type QueueTab = "overview" | "send" | "settings" | "redrive";
const queueTabs: readonly string[] = ["send", "settings", "redrive"];

/**
 * The route a location hash names: "#/" (the Overview), "#/queues",
 * "#/cluster", "#/queues/jobs", "#/queues/jobs/settings", "#/queues/jobs/messages".
 */
export function routeOf(hash: string): Route {
  const path = hash.replace(/^#/, "") || "/";
  if (path === "/") return { page: "overview" };
  if (/^\/queues\/?$/.test(path)) return { page: "queues" };
  if (/^\/cluster\/?$/.test(path)) return { page: "cluster" };
  const match = /^\/queues\/([^/]+)(?:\/(messages|send|settings|redrive))?\/?$/.exec(path);
  if (match === null) return { page: "not-found", hash };
  let name: string;
  try {
    name = decodeURIComponent(match[1]!);
  } catch {
    return { page: "not-found", hash };
  }
  if (match[2] === "messages") return { page: "messages", name };
  return { page: "queue", name, tab: queueTabs.includes(match[2] ?? "") ? (match[2] as QueueTab) : "overview" };
}

/** The link to the Overview, the console's first page. */
export const overviewHref = "#/";

/** The link to the queue list. */
export const queuesHref = "#/queues";

/** The link to the Cluster page. */
export const clusterHref = "#/cluster";

/** The link to a queue's page, at one of its tabs. */
export const queueHref = (name: string, tab: QueueTab = "overview") =>
  `#/queues/${encodeURIComponent(name)}${tab === "overview" ? "" : `/${tab}`}`;

/** The link to a queue's message browser. */
export const messagesHref = (name: string) => `#/queues/${encodeURIComponent(name)}/messages`;

/** The current route, following hash changes. */
export function useRoute(): Route {
  const [initialHash] = useState(() => location.hash);
  const [route, setRoute] = useState(() => routeOf(initialHash));
  useEffect(() => {
    const follow = () => setRoute(routeOf(location.hash));
    addEventListener("hashchange", follow);
    // A hash that changed after the first render and before this listener (a link followed while the page
    // was still starting) would be missed: read it once more now.
    if (location.hash !== initialHash) follow();
    return () => removeEventListener("hashchange", follow);
  }, []);
  return route;
}
