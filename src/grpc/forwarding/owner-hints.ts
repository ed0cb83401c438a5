import { Metadata } from "@grpc/grpc-js";
import { ownerHintKey } from "../../protocol/routing-metadata.js";

/**
 * The owner-hint trailer of each broker address, made once: a local call
 * pays a map lookup for its hint, not a new Metadata (grpc-js sends a copy
 * of the trailer it is given, so calls can share one).
 */
export class OwnerHints {
  private readonly byAddress = new Map<string, Metadata>();

  /**
   * The trailer naming the broker at `address` as the one that served the
   * call; none for an empty address (a broker that does not know where
   * clients reach it names nobody).
   */
  of(address: string): Metadata | undefined {
    if (address === "") return undefined;
    let hint = this.byAddress.get(address);
    if (hint === undefined) {
      hint = new Metadata();
      hint.set(ownerHintKey, address);
      this.byAddress.set(address, hint);
    }
    return hint;
  }
}
