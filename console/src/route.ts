// Hash routing: the broker serves only / and /assets/*, so every page of the
// console lives after the "#".
import { useEffect, useState } from "preact/hooks";

/** A page of the console. */
export type Route =
  | { readonly page: "overview" }
  | { readonly page: "queues" }
  | { readonly page: "cluster" }
  | { readonly page: "queue"; readonly name: string }
  | { readonly page: "messages"; readonly name: string }
  | { readonly page: "not-found"; readonly hash: string };

/** The link to the queue list. */
export const queuesHref = "#/queues";

/** The link to the Cluster page. */
export const clusterHref = "#/cluster";

/** The route a location hash names: "#/", "#/queues", "#/cluster", "#/queues/jobs", "#/queues/jobs/messages". */
export function routeOf(hash: string): Route {
  const path = hash.replace(/^#/, "") || "/";
  if (path === "/") return { page: "overview" };
  if (/^\/queues\/?$/.test(path)) return { page: "queues" };
  if (/^\/cluster\/?$/.test(path)) return { page: "cluster" };
  const match = /^\/queues\/([^/]+)(\/messages)?\/?$/.exec(path);
  if (match === null) return { page: "not-found", hash };
  let name: string;
  try {
    name = decodeURIComponent(match[1]!);
  } catch {
    return { page: "not-found", hash };
  }
  return match[2] === undefined ? { page: "queue", name } : { page: "messages", name };
}

/** The link to a queue's page. */
export const queueHref = (name: string) => `#/queues/${encodeURIComponent(name)}`;

/** The link to a queue's message browser. */
export const messagesHref = (name: string) => `#/queues/${encodeURIComponent(name)}/messages`;

/** The current route, following hash changes. */
export function useRoute(): Route {
  const [route, setRoute] = useState(() => routeOf(location.hash));
  useEffect(() => {
    const follow = () => setRoute(routeOf(location.hash));
    addEventListener("hashchange", follow);
    return () => removeEventListener("hashchange", follow);
  }, []);
  return route;
}
