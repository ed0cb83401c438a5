import type { Client, Metadata } from "@grpc/grpc-js";
import { ownerHintKey } from "../protocol/routing-metadata.js";

// Queues whose owner is remembered; past it the oldest is forgotten (a client of very many queues still works, forwarded).
const maxRemembered = 10_000;

/**
 * Cluster mode's owner hints, followed: which broker served each queue last
 * (the `holdshelf-owner` trailer of its answers), and a channel to each, so
 * that a queue's next calls go straight to its broker instead of taking a
 * forwarding hop. Any broker answers any call, so a hint that went stale
 * costs nothing but that hop: an owner that failed with UNAVAILABLE is
 * forgotten, and the queue's calls go to the address the client was given.
 */
export class OwnerChannels {
  private readonly owners = new Map<string, string>();
  private readonly channels = new Map<string, Client>();

  constructor(
    private readonly home: Client,
    private readonly homeAddress: string,
    /** A channel to a broker, or undefined where this client must not call it (a token in plaintext beyond loopback). */
    private readonly connect: (address: string) => Client | undefined,
  ) {}

  /** The channel for a call on `queue`: its broker's, as last hinted, else the given address's. */
  channelFor(queue: string | undefined): Client {
    const owner = queue === undefined ? undefined : this.owners.get(queue);
    if (owner === undefined) return this.home;
    let channel = this.channels.get(owner);
    if (channel === undefined) {
      channel = this.connect(owner);
      if (channel === undefined) return this.home;
      this.channels.set(owner, channel);
    }
    return channel;
  }

  /** Learns from a finished call on `queue`: its answer's hint, or, if its broker could not serve it, to ask the given address again. */
  learn(queue: string | undefined, code: number, trailer: Metadata | undefined, unavailable: number): void {
    if (queue === undefined) return;
    if (code === unavailable) {
      this.owners.delete(queue);
      return;
    }
    const hint = trailer?.get(ownerHintKey)[0];
    if (typeof hint !== "string" || hint === "") return;
    this.owners.delete(queue);
    if (hint === this.homeAddress) return;
    this.owners.set(queue, hint);
    if (this.owners.size > maxRemembered) this.owners.delete(this.owners.keys().next().value!);
  }

  /** Closes the channels to owners (the given address's is its creator's to close). */
  close(): void {
    for (const channel of this.channels.values()) channel.close();
    this.channels.clear();
  }
}
